// The two never-scheduled actors that carry requests and replies over the tensor channel
// (actors/transport/tensor_channel.hpp, docs/wire.md "Calls"), so that a step's run_partition round
// trip to another process skips CAF's multiplexer and broker: on a small step those hops are most
// of its time.
//
// CallProxy, in the calling process, stands for a device actor of another process: a request
// enqueued to it (by a master session's `request`) is written to the channel as a call from the
// enqueuing thread; anything else, and a request the channel cannot take now, goes on to the
// device actor itself as an ordinary message. The reply is enqueued to the requester by the
// channel as if the device actor had sent it, so the requester's response handler, timeout and
// error handling are CAF's own.
//
// CallResponder, in the called process, is the sender of the calls one connection delivers:
// the device actor's reply is enqueued to it and written back on that connection by the
// replying thread. When the connection ends, the responder ends too, so a device that monitors
// it (as the master driving its step) aborts the steps of a caller that is gone.
#pragma once

#include <cstdint>
#include <functional>
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
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;

 private:
  std::shared_ptr<TensorChannel> channel_;
  std::string endpoint_;
  std::string device_;
  caf::actor callee_;
};

class CallResponder final : public caf::monitorable_actor {
 public:
  // Writes the reply to call `id` (the content of a response message) back to the caller.
  using ReplyWriter = std::function<void(uint64_t id, const caf::type_erased_tuple& reply)>;

  static caf::strong_actor_ptr make(caf::actor_system& system, ReplyWriter write);
  static CallResponder& of(const caf::strong_actor_ptr& handle);

  explicit CallResponder(caf::actor_config& config);
  // Takes responses (the call id is the request's message id) and drops anything else.
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;
  // Writes the reply to call `id` (also what a response message to the responder does).
  void reply(uint64_t id, const caf::type_erased_tuple& content) { write_(id, content); }
  // The connection ended: later replies are dropped, and monitors of the responder fire.
  void close();

 private:
  ReplyWriter write_;
};

}  // namespace troupe
