// PrefetchIterator (prefetch_iterator.hpp).
#include "troupe/devices/data/prefetch_iterator.hpp"

#include <algorithm>

namespace troupe::data {

PrefetchIterator::PrefetchIterator(std::unique_ptr<IteratorBase> input, size_t capacity)
    : input_(std::move(input)),
      capacity_(std::max<size_t>(capacity, 1)),
      refill_at_(capacity_ / 2) {
  producer_ = std::thread([this] { produce(); });
}

PrefetchIterator::~PrefetchIterator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  has_room_.notify_all();
  producer_.join();
}

Status PrefetchIterator::get_next(Element* out, bool* end) {
  std::unique_lock lock(mutex_);
  if (items_.empty()) {
    consumer_waiting_ = true;
    has_items_.wait(lock, [&] { return !items_.empty(); });
    consumer_waiting_ = false;
  }
  Item item = std::move(items_.front());
  if (item.end && item.status.ok()) {  // stays at the front: returned to every later call
    *end = true;
    return Status::OK();
  }
  items_.pop_front();
  // The producer sleeps from a full buffer until it is down to refill_at_, then refills it
  // in one go: a wake-up per refill, not per element.
  const bool wake = producer_waiting_ && items_.size() <= refill_at_;
  lock.unlock();
  if (wake) has_room_.notify_one();
  if (!item.status.ok()) return item.status;
  *out = std::move(item.element);
  *end = false;
  return Status::OK();
}

void PrefetchIterator::produce() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (items_.size() >= capacity_) {
        producer_waiting_ = true;
        has_room_.wait(lock, [&] { return stopping_ || items_.size() <= refill_at_; });
        producer_waiting_ = false;
      }
      if (stopping_) return;
    }
    Item item;
    item.status = input_->get_next(&item.element, &item.end);
    bool end = item.end && item.status.ok();
    bool wake;
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
      wake = consumer_waiting_;
    }
    if (wake) has_items_.notify_one();
    if (end) return;
  }
}

}  // namespace troupe::data
