// FifoQueue: waiting enqueues and dequeues, served in arrival order.
#include "troupe/devices/fifo_queue.hpp"

namespace troupe {

FifoQueue::FifoQueue(std::string name, std::vector<DataType> types,
                     std::vector<PartialShape> shapes, int64_t capacity)
    : name_(std::move(name)),
      types_(std::move(types)),
      shapes_(std::move(shapes)),
      capacity_(capacity) {}

Status FifoQueue::validate(const Tuple& tuple) const {
  if (tuple.size() != types_.size()) {
    return errors::InvalidArgument("{} takes {} components, got {}", debug_name(), types_.size(),
                                   tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (tuple[i].dtype() != types_[i]) {
      return errors::InvalidArgument("{} component {} must be {}, got {}", debug_name(), i,
                                     dtype_name(types_[i]), dtype_name(tuple[i].dtype()));
    }
    if (!shapes_.empty() && !shapes_[i].matches(tuple[i].shape())) {
      return errors::InvalidArgument("{} component {} must have shape {}, got {}", debug_name(), i,
                                     shapes_[i].to_string(), tuple[i].shape().to_string());
    }
  }
  return Status::OK();
}

FifoQueue::Waiter FifoQueue::enqueue(Tuple tuple, std::function<void(const Status&)> done) {
  if (closed_) {
    done(errors::Cancelled("{} is closed", debug_name()));
    return kServed;
  }
  if (enqueuers_.empty() && (capacity_ < 0 || static_cast<int64_t>(items_.size()) < capacity_)) {
    items_.push_back(std::move(tuple));
    done(Status::OK());
    serve();
    return kServed;
  }
  Waiter id = next_waiter_++;
  enqueuers_.emplace(id, std::make_pair(std::move(tuple), std::move(done)));
  return id;
}

FifoQueue::Waiter FifoQueue::dequeue(std::function<void(const Status&, Tuple)> done) {
  if (dequeuers_.empty() && !items_.empty()) {
    Tuple tuple = std::move(items_.front());
    items_.pop_front();
    done(Status::OK(), std::move(tuple));
    serve();
    return kServed;
  }
  if (closed_) {
    done(errors::OutOfRange("{} is closed and has insufficient elements (requested 1, current "
                            "size 0)",
                            debug_name()),
         {});
    return kServed;
  }
  Waiter id = next_waiter_++;
  dequeuers_.emplace(id, std::move(done));
  return id;
}

bool FifoQueue::cancel(Waiter waiter, const Status& reason) {
  if (auto it = enqueuers_.find(waiter); it != enqueuers_.end()) {
    auto done = std::move(it->second.second);
    enqueuers_.erase(it);
    done(reason);
    return true;
  }
  if (auto it = dequeuers_.find(waiter); it != dequeuers_.end()) {
    auto done = std::move(it->second);
    dequeuers_.erase(it);
    done(reason, {});
    return true;
  }
  return false;
}

void FifoQueue::close(bool cancel_pending_enqueues) {
  closed_ = true;
  if (cancel_pending_enqueues) {
    auto pending = std::move(enqueuers_);
    enqueuers_.clear();
    for (auto& [id, entry] : pending)
      entry.second(errors::Cancelled("{} was closed", debug_name()));
  }
  serve();
}

void FifoQueue::serve() {
  // Alternate: move waiting enqueues in while there is room, hand items to waiting dequeues.
  bool progress = true;
  while (progress) {
    progress = false;
    while (!enqueuers_.empty() &&
           (capacity_ < 0 || static_cast<int64_t>(items_.size()) < capacity_)) {
      auto node = enqueuers_.extract(enqueuers_.begin());
      items_.push_back(std::move(node.mapped().first));
      node.mapped().second(Status::OK());
      progress = true;
    }
    while (!dequeuers_.empty() && !items_.empty()) {
      auto node = dequeuers_.extract(dequeuers_.begin());
      Tuple tuple = std::move(items_.front());
      items_.pop_front();
      node.mapped()(Status::OK(), std::move(tuple));
      progress = true;
    }
  }
  if (closed_ && items_.empty() && enqueuers_.empty()) {
    auto waiting = std::move(dequeuers_);
    dequeuers_.clear();
    for (auto& [id, done] : waiting) {
      done(errors::OutOfRange("{} is closed and has insufficient elements (requested 1, current "
                              "size 0)",
                              debug_name()),
           {});
    }
  }
}

}  // namespace troupe
