// DeviceRendezvous: peer resolution and tensor messages between device actors.
#include "actors/device_rendezvous.hpp"

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/error_bridge.hpp"
#include "actors/messages.hpp"

namespace troupe {
namespace {

// How long resolving a peer device may take (it may need a new connection).
constexpr auto kResolveTimeout = std::chrono::seconds(120);

}  // namespace

DeviceRendezvous::DeviceRendezvous(caf::event_based_actor* self, caf::actor directory,
                                   std::string device,
                                   std::function<void(int64_t, const Status&)> on_send_failure)
    : self_(self),
      directory_(std::move(directory)),
      task_prefix_(device.substr(0, device.find("/device:") + 1)),
      on_send_failure_(std::move(on_send_failure)) {}

Status DeviceRendezvous::send(const std::string& dst_device, int64_t step_id,
                              const std::string& key, const Tensor& value) {
  if (!dst_device.starts_with(task_prefix_)) {
    TROUPE_RETURN_IF_ERROR(
        check_fits_in_message(self_->system(), value, fmt::format("the tensor sent as '{}'", key)));
  }
  if (auto it = peers_.find(dst_device); it != peers_.end()) {
    self_->send(it->second, recv_tensor_atom::value, step_id, key, value);
    return Status::OK();
  }
  bool first = waiting_.count(dst_device) == 0;
  waiting_[dst_device].push_back(Outgoing{step_id, key, value});
  if (!first) return Status::OK();
  self_->request(directory_, kResolveTimeout, resolve_device_atom::value, dst_device)
      .then([this, dst_device](caf::actor& peer) { resolved(dst_device, Status::OK(), peer); },
            [this, dst_device](caf::error& err) {
              resolved(dst_device, from_caf_error(err, "resolving device " + dst_device),
                       caf::actor());
            });
  return Status::OK();
}

void DeviceRendezvous::resolved(const std::string& device, const Status& status,
                                const caf::actor& peer) {
  auto outgoing = std::move(waiting_[device]);
  waiting_.erase(device);
  if (status.ok()) peers_[device] = peer;
  for (Outgoing& out : outgoing) {
    if (status.ok()) {
      self_->send(peer, recv_tensor_atom::value, out.step_id, std::move(out.key),
                  std::move(out.value));
    } else {
      on_send_failure_(out.step_id, status);
    }
  }
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
