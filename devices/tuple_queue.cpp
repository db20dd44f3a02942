// TupleQueue: waiting enqueues and dequeues, served in arrival order.
#include "troupe/devices/tuple_queue.hpp"

#include <utility>

namespace troupe {

TupleQueue::TupleQueue(std::string name, std::vector<DataType> types,
                       std::vector<PartialShape> shapes, int64_t capacity,
                       std::optional<Shuffle> shuffle, bool padded)
    : name_(std::move(name)),
      types_(std::move(types)),
      shapes_(std::move(shapes)),
      capacity_(capacity),
      shuffle_(shuffle),
      padded_(padded),
      random_(shuffle && shuffle->seed != 0 ? shuffle->seed : std::random_device()()) {}

Status TupleQueue::validate(const Tuple& tuple) const {
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

TupleQueue::Waiter TupleQueue::enqueue(std::vector<Tuple> tuples,
                                       std::function<void(const Status&)> done) {
  if (closed_) {
    done(errors::Cancelled("{} is closed", debug_name()));
    return kServed;
  }
  Enqueue e{std::deque<Tuple>(std::make_move_iterator(tuples.begin()),
                              std::make_move_iterator(tuples.end())),
            std::move(done)};
  while (enqueuers_.empty() && !e.tuples.empty() && has_room()) {
    items_.push_back(std::move(e.tuples.front()));
    e.tuples.pop_front();
  }
  if (e.tuples.empty()) {
    e.done(Status::OK());
    serve();
    return kServed;
  }
  Waiter id = next_waiter_++;
  enqueuers_.emplace(id, std::move(e));
  serve();  // what went in may serve a waiting dequeue, which makes room for the rest
  return enqueuers_.count(id) != 0 ? id : kServed;
}

TupleQueue::Waiter TupleQueue::dequeue(
    int64_t count, bool up_to, std::function<void(const Status&, std::vector<Tuple>)> done) {
  if (count == 0) {  // nothing to wait for, as TensorFlow's
    done(Status::OK(), {});
    return kServed;
  }
  Waiter id = next_waiter_++;
  dequeuers_.emplace(id, Dequeue{count, up_to, std::move(done)});
  serve();
  return dequeuers_.count(id) != 0 ? id : kServed;
}

bool TupleQueue::cancel(Waiter waiter, const Status& reason) {
  if (auto it = enqueuers_.find(waiter); it != enqueuers_.end()) {
    auto done = std::move(it->second.done);
    enqueuers_.erase(it);
    done(reason);
    serve();  // a dequeue waiting behind it may now be told the queue is done
    return true;
  }
  if (auto it = dequeuers_.find(waiter); it != dequeuers_.end()) {
    auto done = std::move(it->second.done);
    restore(std::move(it->second.taken));
    dequeuers_.erase(it);
    done(reason, {});
    serve();  // the dequeues behind it may be served now
    return true;
  }
  return false;
}

void TupleQueue::close(bool cancel_pending_enqueues) {
  closed_ = true;
  if (cancel_pending_enqueues) {
    auto pending = std::move(enqueuers_);
    enqueuers_.clear();
    for (auto& [id, entry] : pending)
      entry.done(errors::Cancelled("{} was closed", debug_name()));
  }
  serve();
}

TupleQueue::Tuple TupleQueue::take_one() {
  Tuple out;
  if (shuffle_) {
    std::uniform_int_distribution<size_t> pick(0, items_.size() - 1);
    std::swap(items_[pick(random_)], items_.back());
    out = std::move(items_.back());
    items_.pop_back();
  } else {
    out = std::move(items_.front());
    items_.pop_front();
  }
  return out;
}

void TupleQueue::restore(std::vector<Tuple> taken) {
  for (auto it = taken.rbegin(); it != taken.rend(); ++it)
    items_.push_front(std::move(*it));
}

void TupleQueue::serve() {
  // Alternate: move waiting enqueues in while there is room, move elements to the first
  // waiting dequeue (which frees room), and finish it once it has all it can get.
  bool progress = true;
  while (progress) {
    progress = false;
    while (!enqueuers_.empty() && has_room()) {
      auto first = enqueuers_.begin();
      items_.push_back(std::move(first->second.tuples.front()));
      first->second.tuples.pop_front();
      if (first->second.tuples.empty()) {
        auto done = std::move(first->second.done);
        enqueuers_.erase(first);
        done(Status::OK());
      }
      progress = true;
    }
    if (dequeuers_.empty()) continue;
    auto first = dequeuers_.begin();
    Dequeue& d = first->second;
    // RandomShuffleQueue keeps min_after_dequeue elements to draw from, until it closes.
    const size_t keep = shuffle_ && !closed_ ? static_cast<size_t>(shuffle_->min_after_dequeue) : 0;
    while (static_cast<int64_t>(d.taken.size()) < d.count && items_.size() > keep) {
      d.taken.push_back(take_one());
      progress = true;
    }
    // Closed, with no enqueue left to come: what it has is all it will get.
    const bool final = closed_ && enqueuers_.empty() && items_.empty();
    if (static_cast<int64_t>(d.taken.size()) == d.count || (final && d.up_to && !d.taken.empty())) {
      auto done = std::move(d.done);
      std::vector<Tuple> taken = std::move(d.taken);
      dequeuers_.erase(first);
      done(Status::OK(), std::move(taken));
      progress = true;
    } else if (final) {
      auto done = std::move(d.done);
      const int64_t count = d.count;
      restore(std::move(d.taken));
      dequeuers_.erase(first);
      done(errors::OutOfRange("{} is closed and has insufficient elements (requested {}, "
                              "current size {})",
                              debug_name(), count, items_.size()),
           {});
      progress = true;
    }
  }
}

}  // namespace troupe
