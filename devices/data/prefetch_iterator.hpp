// PrefetchIterator: an iterator whose input is read ahead on a thread of its own, up to
// `capacity` elements, and handed out in the input's order (errors and the end included).
// The reader refills a full buffer once it is down to half, so threads hand over in bursts.
// PrefetchDataset is one; a parallel interleave wraps each dataset it has open in one, so the
// datasets are read at once while their elements still come in the deterministic order.
//
// The producer thread is the only user of the input iterator; destroying a PrefetchIterator
// stops the producer after the element it is reading and joins it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "troupe/devices/data/dataset.hpp"

namespace troupe::data {

class PrefetchIterator : public IteratorBase {
 public:
  PrefetchIterator(std::unique_ptr<IteratorBase> input, size_t capacity);
  ~PrefetchIterator() override;

  Status get_next(Element* out, bool* end) override;

 private:
  // One produced item: an element, the end, or an error (delivered in order).
  struct Item {
    Element element;
    bool end = false;
    Status status;
  };

  void produce();

  std::unique_ptr<IteratorBase> input_;  // used by the producer thread only
  const size_t capacity_;
  const size_t refill_at_;  // a full buffer is refilled once down to this many
  std::mutex mutex_;
  std::condition_variable has_items_, has_room_;
  std::deque<Item> items_;
  bool consumer_waiting_ = false, producer_waiting_ = false;
  bool stopping_ = false;
  std::thread producer_;
};

}  // namespace troupe::data
