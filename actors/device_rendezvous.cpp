// DeviceRendezvous: peer resolution and tensor messages (or channel frames) between devices.
#include "troupe/actors/device_rendezvous.hpp"

#include <atomic>
#include <utility>

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/messages.hpp"

namespace troupe {
namespace {

// How long resolving a peer device may take (it may need a new connection).
constexpr auto kResolveTimeout = std::chrono::seconds(120);
// How long a resolved peer may take to name its tensor channel.
constexpr auto kChannelTimeout = std::chrono::seconds(30);

std::atomic<uint64_t> bytes_between_tasks{0};

}  // namespace

DeviceRendezvous::DeviceRendezvous(caf::event_based_actor* self, caf::actor directory,
                                   std::string device,
                                   std::function<void(int64_t, const Status&)> on_send_failure,
                                   std::shared_ptr<DataPlane> plane)
    : self_(self),
      directory_(std::move(directory)),
      task_prefix_(device.substr(0, device.find("/device:") + 1)),
      on_send_failure_(std::move(on_send_failure)),
      max_message_bytes_(max_message_bytes(self->system())),
      plane_(std::move(plane)) {}

uint64_t tensor_bytes_sent_between_tasks() {
  return bytes_between_tasks.load(std::memory_order_relaxed);
}

Status DeviceRendezvous::send(const std::string& dst_device, int64_t step_id,
                              const std::string& key, const Tensor& value) {
  if (!dst_device.starts_with(task_prefix_)) {
    if (!fits_in_message(max_message_bytes_, value)) {
      return too_large_for_message(self_->system(), value,
                                   fmt::format("the tensor sent as '{}'", key));
    }
    bytes_between_tasks.fetch_add(value.total_bytes(), std::memory_order_relaxed);
  }
  if (auto it = peers_.find(dst_device); it != peers_.end()) {
    send_to(it->second, dst_device, step_id, key, value);
    return Status::OK();
  }
  bool first = waiting_.count(dst_device) == 0;
  waiting_[dst_device].push_back(Outgoing{step_id, key, value});
  ++unresolved_[step_id].count;
  if (!first) return Status::OK();
  self_->request(directory_, kResolveTimeout, resolve_device_atom::value, dst_device)
      .then([this, dst_device](caf::actor& peer) { ask_plane(dst_device, peer); },
            [this, dst_device](caf::error& err) {
              resolved(dst_device, from_caf_error(err, "resolving device " + dst_device), Peer{});
            });
  return Status::OK();
}

void DeviceRendezvous::ask_plane(const std::string& device, const caf::actor& peer) {
  if (plane_ == nullptr || peer.node() == self_->node()) {
    resolved(device, Status::OK(), Peer{peer, ""});
    return;
  }
  self_->request(peer, kChannelTimeout, channel_endpoint_atom::value)
      .then(
          [this, device, peer](std::string& endpoint) {
            resolved(device, Status::OK(), Peer{peer, std::move(endpoint)});
          },
          // A peer that does not answer still takes actor messages.
          [this, device, peer](caf::error&) {
            resolved(device, Status::OK(), Peer{peer, ""});
          });
}

void DeviceRendezvous::resolved(const std::string& device, const Status& status, Peer peer) {
  auto outgoing = std::move(waiting_[device]);
  waiting_.erase(device);
  if (status.ok()) peers_[device] = peer;
  for (Outgoing& out : outgoing) {
    if (status.ok()) {
      send_to(peer, device, out.step_id, std::move(out.key), std::move(out.value));
    } else {
      on_send_failure_(out.step_id, status);
    }
    auto it = unresolved_.find(out.step_id);
    if (it == unresolved_.end()) continue;
    if (!status.ok() && it->second.status.ok()) it->second.status = status;
    if (--it->second.count > 0) continue;
    auto done = std::move(it->second.done);
    Status sent = it->second.status;
    unresolved_.erase(it);
    if (done) done(sent);
  }
}

void DeviceRendezvous::when_sent(int64_t step_id, std::function<void(const Status&)> done) {
  auto it = unresolved_.find(step_id);
  if (it == unresolved_.end()) return done(Status::OK());
  it->second.done = std::move(done);
}

void DeviceRendezvous::send_to(const Peer& peer, const std::string& device, int64_t step_id,
                               std::string key, Tensor value) {
  if (peer.plane.empty() || !DataPlane::carries(value)) {
    self_->send(peer.actor, recv_tensor_atom::value, step_id, std::move(key), std::move(value));
    return;
  }
  auto bytes = static_cast<size_t>(value.total_bytes());
  if (bytes >= DataPlane::kBatchBelowBytes) {
    std::vector<DataPlane::Frame> frames;
    frames.push_back({peer.actor, device, step_id, std::move(key), std::move(value)});
    plane_->send(peer.plane, std::move(frames));
    return;
  }
  small_[peer.plane].push_back({peer.actor, device, step_id, std::move(key), std::move(value)});
  if (!flush_scheduled_) {
    flush_scheduled_ = true;
    self_->send(self_, flush_sends_atom::value);
  }
}

void DeviceRendezvous::flush() {
  flush_scheduled_ = false;
  for (auto& [endpoint, frames] : std::exchange(small_, {}))
    plane_->send(endpoint, std::move(frames));
}

void DeviceRendezvous::forget_task(const std::string& task_prefix) {
  std::erase_if(peers_, [&](const auto& peer) { return peer.first.starts_with(task_prefix); });
}

void DeviceRendezvous::recv(int64_t step_id, const std::string& key, RecvCallback done) {
  table_.recv(step_id, key, std::move(done));
}

void DeviceRendezvous::abort_step(int64_t step_id, const Status& reason) {
  table_.abort_step(step_id, reason);
}

Status DeviceRendezvous::deliver(int64_t step_id, const std::string& key, Tensor value) {
  return table_.deliver(step_id, key, std::move(value));
}

}  // namespace troupe
