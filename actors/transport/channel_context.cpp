// The device table and fallback of a tensor channel (channel_context.hpp).
#include "troupe/actors/transport/channel_context.hpp"

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"  // how CAF inspects a Tensor

namespace troupe {

void ChannelContext::add_device(const std::string& device, const caf::actor& actor) {
  std::lock_guard lock(mutex_);
  devices_[device] = actor.address();
}

void ChannelContext::remove_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  devices_.erase(device);
}

caf::actor ChannelContext::find_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(device);
  return it != devices_.end() ? caf::actor_cast<caf::actor>(it->second) : caf::actor();
}

void ChannelContext::fall_back(DataPlane::Frame& frame) {
  ++counters.fallbacks;
  caf::anon_send(frame.peer, recv_tensor_atom::value, frame.step_id, std::move(frame.key),
                 std::move(frame.value));
}

}  // namespace troupe
