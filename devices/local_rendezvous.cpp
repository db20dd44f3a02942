// LocalRendezvous: matching sends and receives of one device by key.
#include "troupe/devices/local_rendezvous.hpp"

#include <fmt/format.h>

namespace troupe {

std::string rendezvous_key(const std::string& send_device, const std::string& recv_device,
                           const std::string& edge_name) {
  return fmt::format("{};{};{}", send_device, recv_device, edge_name);
}

// Both take the slot out of the table before calling back: the callback may run kernels that
// use the table.
Status LocalRendezvous::deliver(int64_t step_id, const std::string& key, Tensor value) {
  if (aborted_.contains(step_id)) return Status::OK();  // late: the step is gone
  auto step = steps_.try_emplace(step_id).first;
  auto [it, added] = step->second.try_emplace(key);
  Slot& slot = it->second;
  if (slot.waiter) {
    RecvCallback waiter = std::move(slot.waiter);
    step->second.erase(it);
    if (step->second.empty()) steps_.erase(step);
    waiter(Status::OK(), value);
    return Status::OK();
  }
  if (slot.has_value) {
    return errors::InvalidArgument("rendezvous key '{}' received a second tensor", key);
  }
  slot.has_value = true;
  slot.value = std::move(value);
  return Status::OK();
}

void LocalRendezvous::recv(int64_t step_id, const std::string& key, RecvCallback done) {
  if (auto it = aborted_.find(step_id); it != aborted_.end()) {
    done(it->second, Tensor());
    return;
  }
  auto step = steps_.try_emplace(step_id).first;
  auto [it, added] = step->second.try_emplace(key);
  Slot& slot = it->second;
  if (slot.has_value) {
    Tensor value = std::move(slot.value);
    step->second.erase(it);
    if (step->second.empty()) steps_.erase(step);
    done(Status::OK(), value);
    return;
  }
  if (slot.waiter) {
    done(errors::Internal("rendezvous key '{}' is received twice", key), Tensor());
    return;
  }
  slot.waiter = std::move(done);
}

void LocalRendezvous::abort_step(int64_t step_id, const Status& reason) {
  if (aborted_.emplace(step_id, reason).second) {
    aborted_order_.push_back(step_id);
    if (aborted_order_.size() > kAbortedMemory) {
      aborted_.erase(aborted_order_.front());
      aborted_order_.pop_front();
    }
  }
  auto it = steps_.find(step_id);
  if (it == steps_.end()) return;
  auto slots = std::move(it->second);
  steps_.erase(it);
  for (auto& [key, slot] : slots) {
    if (slot.waiter) slot.waiter(reason, Tensor());
  }
}

void LocalRendezvous::finish_step(int64_t step_id) {
  steps_.erase(step_id);
}

Status LocalRendezvous::aborted(int64_t step_id) const {
  auto it = aborted_.find(step_id);
  return it == aborted_.end() ? Status::OK() : it->second;
}

size_t LocalRendezvous::pending_entries() const {
  size_t n = 0;
  for (const auto& [step, slots] : steps_)
    n += slots.size();
  return n;
}

}  // namespace troupe
