// ReplySink: how a plain thread asks an actor of its own process and waits for the answer
// without an actor of its own being scheduled (blocking_request's path for local destinations).
//
// A sink is an actor that never runs: the calling thread enqueues the request with the sink as
// its sender, and the reply — or the down message of the sink's monitor on the destination —
// is taken inside the enqueue, on whichever thread sends it, and handed to the waiting caller.
// A helper actor instead is spawned and scheduled to send the request, then scheduled again to
// take the reply: two scheduler hand-offs, each a thread wake-up, per call.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message.hpp>
#include <caf/monitorable_actor.hpp>

namespace troupe {

// Polls `future` for up to `spin`, yielding, before the caller blocks on it: a quick answer
// then costs no sleep and wake-up.
template <class T>
void poll_before_blocking(const std::future<T>& future, std::chrono::microseconds spin) {
  auto until = std::chrono::steady_clock::now() + spin;
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
}

class ReplySink final : public caf::monitorable_actor {
 public:
  // What ended the wait: the reply's content, or the down message of the destination.
  struct Outcome {
    caf::message content;
    bool destination_down = false;
  };

  // The id of the one request a sink awaits the reply to.
  static constexpr caf::message_id kRequestId = caf::make_message_id(1);

  // A sink (held by the returned handle) monitoring `destination`.
  static caf::strong_actor_ptr make(caf::actor_system& system, const caf::actor& destination);
  static ReplySink& of(const caf::strong_actor_ptr& handle);

  explicit ReplySink(caf::actor_config& config);

  // Takes the reply to kRequestId, or a down message; ignores anything else.
  // Overrides CAF's enqueue so that the replying thread hands the reply straight to the waiting
  // caller: local Session::run 32-37 -> 18-28 us (docs/PERFORMANCE.md). On a CAF upgrade,
  // caf::scoped_actor replaces it, at one more thread hand-off per call.
  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;

  // Waits up to `timeout` (none: until the reply or the destination's death); nullopt if the
  // time ran out. Polls for `spin` first (poll_before_blocking).
  std::optional<Outcome> wait(std::optional<std::chrono::nanoseconds> timeout,
                              std::chrono::microseconds spin);

  // Stops monitoring the destination (CAF 0.17 would keep the monitor for good otherwise) and
  // ends the sink; a reply that comes later is dropped.
  void finish();

 private:
  caf::actor destination_;
  std::atomic<bool> answered_{false};
  std::promise<Outcome> outcome_;
  std::future<Outcome> future_ = outcome_.get_future();
};

}  // namespace troupe
