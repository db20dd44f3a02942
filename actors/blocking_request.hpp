// blocking_request: ask an actor from a plain (non-actor) thread and wait for the answer, as
// a StatusOr — the building block of the blocking client API (Session, Server).
//
// The destination is monitored, so the wait ends when the answer comes, when the deadline
// passes (DeadlineExceeded), or when the destination dies or its node becomes unreachable
// (Unavailable) — never later. A destination in this process is asked through a reply sink
// (actors/reply_sink.hpp): the answer reaches the caller without an actor being scheduled. One
// in another process is asked by a short-lived helper actor that also sends its process
// heartbeats every ClientHeartbeats::interval while the wait lasts: one that freezes (its
// connection stays open but nothing answers) is Unavailable after ClientHeartbeats::timeout
// (RuntimeOptions::client_heartbeat_interval / _timeout). The heartbeats go to the destination
// itself, or to another actor of its process that answers them at once: an actor handles one
// message at a time, so a destination busy with the request (a master session importing a
// large graph) would leave them waiting behind it and seem dead.
#pragma once

#include <chrono>
#include <future>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/reply_sink.hpp"
#include "troupe/actors/transport/inline_unit.hpp"

namespace troupe {

// How long a caller polls for the answer before it sleeps until the answer wakes it: short
// requests are answered within microseconds, and waiting for them yielding, not asleep, saves
// the caller's futex wake-up (blocking_request to an echoing actor: 33 -> 17 us).
constexpr std::chrono::microseconds kSpinBeforeBlocking{50};

// `timeout` as a std::chrono duration; none for caf::infinite.
inline std::optional<std::chrono::nanoseconds> to_chrono(caf::duration timeout) {
  if (!timeout.valid()) return std::nullopt;
  auto count = static_cast<int64_t>(timeout.count);
  switch (timeout.unit) {
    case caf::time_unit::minutes:
      return std::chrono::minutes(count);
    case caf::time_unit::seconds:
      return std::chrono::seconds(count);
    case caf::time_unit::milliseconds:
      return std::chrono::milliseconds(count);
    case caf::time_unit::microseconds:
      return std::chrono::microseconds(count);
    default:
      return std::chrono::nanoseconds(count);
  }
}

// blocking_request to an actor of this process.
template <class T, class... Message>
StatusOr<T> local_request(caf::actor_system& system, const caf::actor& dest, caf::duration timeout,
                          const std::string& what, Message... message) {
  caf::strong_actor_ptr handle = ReplySink::make(system, dest);
  ReplySink& sink = ReplySink::of(handle);
  {
    InlineUnit::Scope scope;  // the caller waits anyway: an idle destination runs on its thread
    caf::actor_cast<caf::abstract_actor*>(dest)->enqueue(
        caf::make_mailbox_element(handle, ReplySink::kRequestId, {}, std::move(message)...),
        InlineUnit::of(system));
  }
  auto outcome = sink.wait(to_chrono(timeout), kSpinBeforeBlocking);
  sink.finish();
  if (!outcome) return from_caf_error(caf::make_error(caf::sec::request_timeout), what);
  caf::message& content = outcome->content;
  if (outcome->destination_down) {
    return errors::Unavailable("{}: the receiver is gone ({})", what,
                               system.render(content.get_as<caf::down_msg>(0).reason));
  }
  if (content.match_elements<caf::error>())
    return from_caf_error(content.get_as<caf::error>(0), what);
  if constexpr (std::is_same_v<T, caf::unit_t>) {
    if (content.empty()) return caf::unit;
  } else {
    if (content.match_elements<T>()) return std::move(content.get_mutable_as<T>(0));
  }
  return errors::Internal("{}: unexpected reply {}", what, caf::to_string(content));
}

// Sends `message...` to `dest` and waits up to `timeout` (caf::infinite is safe: a dead or
// unreachable destination ends the wait) for a reply of type T (caf::unit_t for an empty
// reply), sending heartbeats to `heartbeat_target`, an actor of dest's process (or dest
// itself). `what` names the call in errors.
template <class T, class... Message>
StatusOr<T> blocking_request_with_heartbeats(caf::actor_system& system, const caf::actor& dest,
                                             const caf::actor& heartbeat_target,
                                             caf::duration timeout, const std::string& what,
                                             Message... message) {
  if (dest == nullptr) return errors::Unavailable("{}: the actor is gone", what);
  if (dest.node() == system.node()) {
    return local_request<T>(system, dest, timeout, what, std::move(message)...);
  }
  caf::actor heartbeats_to = heartbeat_target != nullptr && heartbeat_target.node() == dest.node()
                                 ? heartbeat_target
                                 : dest;
  const ClientHeartbeats heartbeats = client_heartbeats(system);
  auto result = std::make_shared<std::promise<StatusOr<T>>>();
  auto answered = result->get_future();
  // `result` is passed rather than captured: CAF 0.17 dereferences a null tuple pointer when a
  // function actor is spawned without arguments (undefined behaviour that UBSan reports).
  system.spawn(
      [=](caf::event_based_actor* self,
          std::shared_ptr<std::promise<StatusOr<T>>> result) -> caf::behavior {
        auto done = std::make_shared<bool>(false);
        auto finish = [=](StatusOr<T> value) {
          if (*done) return;
          *done = true;
          // CAF 0.17 leaves a monitor on `dest` when its observer quits: without this, every
          // call would add one for good (and each later demonitor on `dest` scans them all).
          self->demonitor(dest);
          result->set_value(std::move(value));
          self->quit();
        };
        self->monitor(dest);
        self->set_down_handler([=](caf::down_msg& down) {
          finish(errors::Unavailable("{}: the receiver is gone ({})", what,
                                     self->system().render(down.reason)));
        });
        auto on_error = [=](caf::error& err) { finish(from_caf_error(err, what)); };
        // Heartbeats to the destination's process (answered by every troupe service).
        if (heartbeats.timeout.count() > 0) {
          self->delayed_send(self, heartbeats.interval, heartbeat_tick_atom::value);
        }
        auto heartbeat = [=] {
          self->request(heartbeats_to, heartbeats.timeout, heartbeat_atom::value)
              .then(
                  [=] {
                    self->delayed_send(self, heartbeats.interval, heartbeat_tick_atom::value);
                  },
                  [=](caf::error& err) {
                    // Other errors: the destination does not take heartbeats (e.g. a custom role);
                    // its death still ends the wait through the monitor.
                    if (err != caf::sec::request_timeout) return;
                    finish(errors::Unavailable("{}: no answer to a heartbeat within {} ms", what,
                                               heartbeats.timeout.count()));
                  });
        };
        if constexpr (std::is_same_v<T, caf::unit_t>) {
          // A handler returning caf::unit answers with an empty message.
          self->request(dest, timeout, message...).then([=] { finish(caf::unit); }, on_error);
        } else {
          self->request(dest, timeout, message...)
              .then([=](T& value) { finish(std::move(value)); }, on_error);
        }
        return {[=](heartbeat_tick_atom) { heartbeat(); }};
      },
      result);
  poll_before_blocking(answered, kSpinBeforeBlocking);
  return answered.get();
}

// blocking_request_with_heartbeats with the heartbeats sent to `dest` itself.
template <class T, class... Message>
StatusOr<T> blocking_request(caf::actor_system& system, const caf::actor& dest,
                             caf::duration timeout, const std::string& what, Message... message) {
  return blocking_request_with_heartbeats<T>(system, dest, dest, timeout, what,
                                             std::move(message)...);
}

}  // namespace troupe
