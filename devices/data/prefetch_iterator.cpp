// PrefetchIterator (prefetch_iterator.hpp).
#include "troupe/devices/data/prefetch_iterator.hpp"

#include <algorithm>

namespace troupe::data {

PrefetchIterator::PrefetchIterator(std::unique_ptr<IteratorBase> input, size_t capacity)
    : input_(std::move(input)), capacity_(std::max<size_t>(capacity, 1)) {
  producer_ = std::thread([this] { produce(); });
}

PrefetchIterator::~PrefetchIterator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

Status PrefetchIterator::get_next(Element* out, bool* end) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !items_.empty(); });
  Item item = std::move(items_.front());
  if (item.end && item.status.ok()) {  // stays at the front: returned to every later call
    *end = true;
    return Status::OK();
  }
  items_.pop_front();
  lock.unlock();
  changed_.notify_all();
  if (!item.status.ok()) return item.status;
  *out = std::move(item.element);
  *end = false;
  return Status::OK();
}

void PrefetchIterator::produce() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || items_.size() < capacity_; });
      if (stopping_) return;
    }
    Item item;
    item.status = input_->get_next(&item.element, &item.end);
    bool end = item.end && item.status.ok();
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
    }
    changed_.notify_all();
    if (end) return;
  }
}

}  // namespace troupe::data
