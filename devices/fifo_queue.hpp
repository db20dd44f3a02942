// FifoQueue: a first-in first-out queue of tensor tuples kept on a device between steps — the
// resource behind the FIFOQueue op. Enqueues wait while a bounded queue is full, dequeues
// while it is empty; a waiter finishes when served, when the queue closes, or when cancelled.
// Used only from the device's thread; callbacks run synchronously from the call that serves
// them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class FifoQueue : public Resource {
 public:
  using Tuple = std::vector<Tensor>;
  using Waiter = int64_t;
  static constexpr Waiter kServed = -1;  // the call completed at once

  FifoQueue(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes,
            int64_t capacity);

  std::string debug_name() const override { return "queue '" + name_ + "'"; }
  const std::vector<DataType>& component_types() const { return types_; }
  const std::vector<PartialShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }
  size_t size() const { return items_.size(); }
  bool closed() const { return closed_; }

  // InvalidArgument unless `tuple` matches the component dtypes and shapes.
  Status validate(const Tuple& tuple) const;

  // Adds `tuple` now, or once there is room; `done` gets OK, or Cancelled if the queue is or
  // gets closed with cancel_pending_enqueues. Returns kServed or the id of the waiting enqueue.
  Waiter enqueue(Tuple tuple, std::function<void(const Status&)> done);
  // Takes the oldest tuple now, or once one is enqueued; `done` gets it, or OutOfRange once the
  // queue is closed and empty. Returns kServed or the id of the waiting dequeue.
  Waiter dequeue(std::function<void(const Status&, Tuple)> done);
  // Finishes a waiting enqueue or dequeue with `reason`; false if it is no longer waiting.
  bool cancel(Waiter waiter, const Status& reason);
  void close(bool cancel_pending_enqueues);

 private:
  void serve();

  std::string name_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_;
  bool closed_ = false;
  std::deque<Tuple> items_;
  std::map<Waiter, std::pair<Tuple, std::function<void(const Status&)>>> enqueuers_;
  std::map<Waiter, std::function<void(const Status&, Tuple)>> dequeuers_;
  Waiter next_waiter_ = 0;
};

}  // namespace troupe
