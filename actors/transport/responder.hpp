// The called side of the tensor channel's calls (docs/wire.md, "Calls"): a call read on an
// accepted connection is delivered to its device with that connection's CallResponder as the
// sender, and the device's answer, enqueued to the responder, is written back on the
// connection by the answering thread.
//
// CallResponder is an actor that is never scheduled: it has no mailbox, and its enqueue writes
// the answer. When the connection ends, the responder ends too, so a device that monitors it
// (as the master driving its step) aborts the steps of a caller that is gone.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/monitorable_actor.hpp>

#include "troupe/actors/transport/channel_context.hpp"
#include "troupe/actors/transport/sealed_stream.hpp"

namespace troupe {

// Where the answers to the calls read on one accepted socket go.
struct AnswerLink {
  AnswerLink(int fd, uint64_t max_bytes) : fd(fd), max_bytes(max_bytes) {}
  std::mutex mutex;  // one writer at a time; held while `open` is cleared
  int fd;
  uint64_t max_bytes;              // what the caller reads at most (the same on every process)
  std::unique_ptr<Sealer> sealer;  // with TLS; set before the first frame is read
  bool open = true;
};

class CallResponder final : public caf::monitorable_actor {
 public:
  // A responder whose answers go on `link`.
  static caf::strong_actor_ptr make(caf::actor_system& system, std::shared_ptr<AnswerLink> link);
  static CallResponder& of(const caf::strong_actor_ptr& handle);

  explicit CallResponder(caf::actor_config& config);
  // Takes responses (the call id is the request's message id) and drops anything else.
  // Overrides CAF's enqueue so that the answering thread writes the answer itself, with no
  // actor scheduled on the way back: half of what makes a TLS remote step 2.2x faster as a call
  // (docs/PERFORMANCE.md). On a CAF upgrade, a scheduled actor that writes what it receives
  // replaces it, at one more thread hand-off per step.
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;
  // Writes the answer to call `id` (also what a response message to the responder does). An
  // answer that cannot be serialised is Internal, one over the size limit InvalidArgument; a
  // failed write shuts the socket (the caller's calls on it end with Unavailable).
  void answer(uint64_t id, const caf::type_erased_tuple& content);
  // The connection ended: later answers are dropped, and monitors of the responder fire.
  void close();

 private:
  std::shared_ptr<AnswerLink> link_;
};

// Delivers call `id` for `device` (its payload) to that device with `responder` as the sender
// (the device runs on `here` if it was idle), or answers it with NotFound or InvalidArgument.
void serve_call(ChannelContext& context, uint64_t id, const std::string& device,
                const std::vector<char>& payload, const caf::strong_actor_ptr& responder,
                caf::execution_unit* here);

}  // namespace troupe
