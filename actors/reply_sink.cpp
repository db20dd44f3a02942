// The reply sink: a monitorable actor whose enqueue fulfils a promise.
#include "troupe/actors/reply_sink.hpp"

#include <caf/actor_cast.hpp>
#include <caf/default_attachable.hpp>
#include <caf/exit_reason.hpp>
#include <caf/make_actor.hpp>
#include <caf/system_messages.hpp>

namespace troupe {

static_assert(ReplySink::kRequestId.is_request());

ReplySink::ReplySink(caf::actor_config& config) : caf::monitorable_actor(config) {}

caf::strong_actor_ptr ReplySink::make(caf::actor_system& system, const caf::actor& destination) {
  caf::actor_config config{system.dummy_execution_unit()};
  auto handle = caf::actor_cast<caf::strong_actor_ptr>(caf::make_actor<ReplySink, caf::actor>(
      system.next_actor_id(), system.node(), &system, config));
  ReplySink& sink = of(handle);
  sink.destination_ = destination;
  // A destination already gone sends the down message at once.
  caf::actor_cast<caf::abstract_actor*>(destination)
      ->attach(caf::default_attachable::make_monitor(destination.address(), sink.address()));
  return handle;
}

ReplySink& ReplySink::of(const caf::strong_actor_ptr& handle) {
  return static_cast<ReplySink&>(*caf::actor_cast<caf::abstract_actor*>(handle));
}

void ReplySink::enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) {
  if (what == nullptr) return;
  bool reply = what->mid == kRequestId.response_id();
  bool down = !reply && what->mid.is_async() && what->content().match_elements<caf::down_msg>();
  if ((!reply && !down) || answered_.exchange(true)) return;
  outcome_.set_value(Outcome{what->move_content_to_message(), down});
}

std::optional<ReplySink::Outcome> ReplySink::wait(std::optional<std::chrono::nanoseconds> timeout,
                                                  std::chrono::microseconds spin) {
  auto start = std::chrono::steady_clock::now();
  poll_before_blocking(future_, spin);
  if (timeout && future_.wait_until(start + *timeout) != std::future_status::ready) {
    return std::nullopt;
  }
  return future_.get();
}

void ReplySink::finish() {
  if (destination_ != nullptr) {
    caf::default_attachable::observe_token token{address(), caf::default_attachable::monitor};
    caf::actor_cast<caf::abstract_actor*>(destination_)->detach(token);
    destination_ = nullptr;
  }
  answered_ = true;
  cleanup(caf::exit_reason::normal, nullptr);
}

}  // namespace troupe
