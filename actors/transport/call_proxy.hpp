// CallProxy: in the calling process, an actor that stands for a device actor of another process
// (docs/wire.md, "Calls"). A request enqueued to it (by a master session's `request`) is written
// to the tensor channel as a call by the enqueuing thread; anything else, and a request the
// channel cannot take now, goes on to the device actor itself as an ordinary message. The
// answer is enqueued to the requester by the channel as if the device actor had sent it, so the
// requester's response handler, timeout and error handling are CAF's own.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>

namespace troupe {

class TensorChannel;

class CallProxy final : public caf::monitorable_actor {
 public:
  // A proxy for `callee`, the actor of `device` in the process whose channel is at `endpoint`.
  static caf::actor make(caf::actor_system& system, std::shared_ptr<TensorChannel> channel,
                         std::string endpoint, std::string device, caf::actor callee);

  explicit CallProxy(caf::actor_config& config);
  // Overrides CAF's enqueue so that the requesting thread writes the call itself, with no actor
  // scheduled and no trip through CAF's multiplexer: a TLS remote step takes 92 us with calls
  // and 202 us without (docs/PERFORMANCE.md). On a CAF upgrade, a scheduled actor that
  // forwards requests to the channel replaces it, at one more thread hand-off per step.
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;

 private:
  std::shared_ptr<TensorChannel> channel_;
  std::string endpoint_;
  std::string device_;
  caf::actor callee_;
};

}  // namespace troupe
