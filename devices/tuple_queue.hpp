// TupleQueue: a queue of tensor tuples kept on a device between steps, the resource behind
// TensorFlow's FIFOQueue (oldest first), PaddingFIFOQueue (the same order; its elements may
// differ in the dimensions its shapes leave unknown, and a dequeue of many pads them: see
// padded()) and RandomShuffleQueue (a uniformly random element, only while more than
// min_after_dequeue remain, until the queue closes).
//
// Enqueues wait while a bounded queue is full, dequeues until enough elements are there: a
// waiter finishes when served, when the queue closes, or when cancelled. Waiters are served in
// arrival order (a dequeue of many is not overtaken by a later dequeue of one). An enqueue of
// many adds its tuples in order as room appears; a dequeue of many takes its tuples as they
// come (so it may ask for more than the capacity), puts them back at the front if it ends
// without all of them, and hands them over at once.
// Used only from the device's thread; callbacks run synchronously from the call that serves
// them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class TupleQueue : public Resource {
 public:
  using Tuple = std::vector<Tensor>;
  using Waiter = int64_t;
  static constexpr Waiter kServed = -1;  // the call completed at once

  // RandomShuffleQueue's order. seed 0: a random stream.
  struct Shuffle {
    int64_t min_after_dequeue = 0;
    uint64_t seed = 0;                       // the generator's; 0: a random stream
    std::pair<int64_t, int64_t> seeds = {};  // the node's seed and seed2 attrs, for messages
  };

  TupleQueue(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes,
             int64_t capacity, std::optional<Shuffle> shuffle = std::nullopt, bool padded = false);

  std::string debug_name() const override { return "queue '" + name_ + "'"; }
  const std::vector<DataType>& component_types() const { return types_; }
  const std::vector<PartialShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }
  const std::optional<Shuffle>& shuffle() const { return shuffle_; }
  // PaddingFIFOQueue: a dequeue of many pads each component to the largest element's dims
  // (the dequeue kernel does; the queue only says so).
  bool padded() const { return padded_; }
  size_t size() const { return items_.size(); }
  bool closed() const { return closed_; }

  // InvalidArgument unless `tuple` matches the component dtypes and shapes.
  Status validate(const Tuple& tuple) const;

  // Adds `tuples` in order, each once there is room; `done` gets OK once all are in, or
  // Cancelled if the queue is or gets closed with cancel_pending_enqueues first. Returns
  // kServed or the id of the waiting enqueue.
  Waiter enqueue(std::vector<Tuple> tuples, std::function<void(const Status&)> done);
  // Takes `count` tuples at once, when that many are there (RandomShuffleQueue: beyond
  // min_after_dequeue, until closed); `done` gets them, or OutOfRange once the queue is closed
  // and cannot give them. With `up_to`, a closed queue gives what it has left (at least one).
  // A count of 0 is served at once. Returns kServed or the id of the waiting dequeue.
  Waiter dequeue(int64_t count, bool up_to,
                 std::function<void(const Status&, std::vector<Tuple>)> done);
  // Finishes a waiting enqueue or dequeue with `reason`; false if it is no longer waiting.
  bool cancel(Waiter waiter, const Status& reason);
  void close(bool cancel_pending_enqueues);

 private:
  struct Enqueue {
    std::deque<Tuple> tuples;
    std::function<void(const Status&)> done;
  };
  struct Dequeue {
    int64_t count;
    bool up_to;
    std::function<void(const Status&, std::vector<Tuple>)> done;
    std::vector<Tuple> taken{};  // so far, in order
  };

  // The next element a dequeue takes: the oldest, or one at random.
  Tuple take_one();
  // Puts a dequeue's tuples back at the front, in their order.
  void restore(std::vector<Tuple> taken);
  bool has_room() const { return capacity_ < 0 || static_cast<int64_t>(items_.size()) < capacity_; }
  void serve();

  std::string name_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_;
  std::optional<Shuffle> shuffle_;
  bool padded_;
  std::mt19937_64 random_;
  bool closed_ = false;
  std::deque<Tuple> items_;
  std::map<Waiter, Enqueue> enqueuers_;
  std::map<Waiter, Dequeue> dequeuers_;
  Waiter next_waiter_ = 0;
};

}  // namespace troupe
