// Tests for the inline execution unit (actors/transport/inline_unit.hpp): an idle actor handed a
// message through it in a scope runs on the handing thread; an actor it wakes in turn, and any
// actor handed over without a scope, goes to the scheduler.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "troupe/actors/runtime.hpp"
#include "troupe/actors/transport/inline_unit.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

// What the last actor of a chain saw: the number it was sent, and the thread it ran on.
struct Seen {
  std::mutex mutex;
  std::condition_variable changed;
  int32_t last = -1;
  std::thread::id thread;
};

// An actor that records in `seen` the number it is sent; with `next`, it passes the number on
// to that actor instead.
caf::behavior reporter(caf::event_based_actor* self, caf::actor next, std::shared_ptr<Seen> seen) {
  return {[self, next, seen](int32_t n) {
    if (next != nullptr) {
      self->send(next, n);
      return;
    }
    std::lock_guard lock(seen->mutex);
    seen->last = n;
    seen->thread = std::this_thread::get_id();
    seen->changed.notify_all();
  }};
}

// Enqueues to `actor` through an InlineUnit until it was idle (it may still be finishing its
// start), and returns the thread the last actor of its chain ran on.
std::thread::id ran_on(caf::actor_system& system, const caf::actor& actor, Seen& seen) {
  std::thread::id thread;
  for (int32_t attempt = 0; attempt < 50; ++attempt) {
    {
      InlineUnit::Scope scope;
      caf::actor_cast<caf::abstract_actor*>(actor)->enqueue(
          caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, attempt),
          InlineUnit::of(system));
    }
    std::unique_lock lock(seen.mutex);
    BOOST_REQUIRE(seen.changed.wait_for(lock, std::chrono::seconds(20),
                                        [&] { return seen.last == attempt; }));
    thread = seen.thread;
    if (thread == std::this_thread::get_id()) break;
    lock.unlock();
    // Not a condition: a pause before the next attempt, for the actor to become idle (CAF
    // reports no such event).
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return thread;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inline_unit)

BOOST_AUTO_TEST_CASE(an_idle_actor_runs_on_the_thread_that_hands_it_a_message) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto seen = std::make_shared<Seen>();
  caf::actor actor = runtime->system().spawn(reporter, caf::actor(), seen);
  BOOST_TEST((ran_on(runtime->system(), actor, *seen) == std::this_thread::get_id()));
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(an_actor_woken_by_an_inline_actor_goes_to_the_scheduler) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto seen = std::make_shared<Seen>();
  caf::actor last = runtime->system().spawn(reporter, caf::actor(), seen);
  caf::actor first = runtime->system().spawn(reporter, last, seen);
  // Not a condition: CAF does not report an actor idle; the pause makes it likely, and
  // ran_on() retries until the runs are the ones under test.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto id = ran_on(runtime->system(), first, *seen);
  BOOST_TEST((id != std::this_thread::get_id()));
  BOOST_TEST((id != std::thread::id()));
  caf::anon_send_exit(first, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(last, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(without_a_scope_the_unit_hands_the_actor_to_the_scheduler) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto seen = std::make_shared<Seen>();
  caf::actor actor = runtime->system().spawn(reporter, caf::actor(), seen);
  // Not a condition: as above, a pause for the actor to be idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int32_t n = 0; n < 5; ++n) {
    caf::actor_cast<caf::abstract_actor*>(actor)->enqueue(
        caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, n),
        InlineUnit::of(runtime->system()));
    std::unique_lock lock(seen->mutex);
    BOOST_REQUIRE(
        seen->changed.wait_for(lock, std::chrono::seconds(20), [&] { return seen->last == n; }));
    BOOST_TEST((seen->thread != std::this_thread::get_id()));
  }
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
