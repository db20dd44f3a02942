// The call proxy of the tensor channel (call_proxy.hpp).
#include "troupe/actors/transport/call_proxy.hpp"

#include <caf/actor_cast.hpp>
#include <caf/make_actor.hpp>

#include "troupe/actors/transport/tensor_channel.hpp"

namespace troupe {

CallProxy::CallProxy(caf::actor_config& config) : caf::monitorable_actor(config) {}

caf::actor CallProxy::make(caf::actor_system& system, std::shared_ptr<TensorChannel> channel,
                           std::string endpoint, std::string device, caf::actor callee) {
  caf::actor_config config{system.dummy_execution_unit()};
  auto handle = caf::make_actor<CallProxy, caf::actor>(system.next_actor_id(), system.node(),
                                                       &system, config);
  auto& proxy = static_cast<CallProxy&>(*caf::actor_cast<caf::abstract_actor*>(handle));
  proxy.channel_ = std::move(channel);
  proxy.endpoint_ = std::move(endpoint);
  proxy.device_ = std::move(device);
  proxy.callee_ = std::move(callee);
  return handle;
}

void CallProxy::enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) {
  if (what == nullptr) return;
  if (what->mid.is_request() && what->sender != nullptr &&
      channel_->call(endpoint_, device_, caf::actor_cast<caf::strong_actor_ptr>(callee_), *what)) {
    return;
  }
  caf::actor_cast<caf::abstract_actor*>(callee_)->enqueue(std::move(what), host);
}

}  // namespace troupe
