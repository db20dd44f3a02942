// Tests for blocking_request to actors of this process: every way a wait ends (an answer, an
// error, an empty answer, the destination's death, the deadline), and what it leaves behind
// on the actor it asked.
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include "status_checks.hpp"
#include "troupe/actors/blocking_request.hpp"
#include "troupe/actors/runtime.hpp"

namespace troupe {
namespace {

using count_atom = caf::atom_constant<caf::atom("count")>;
using hold_atom = caf::atom_constant<caf::atom("hold")>;
using testing::check_error;
const caf::duration kWait{std::chrono::seconds(10)};

// Answers any int with itself, and count_atom with the number of functors attached to it
// (monitors, links, ...), which CAF keeps in a list of its own until the actor ends.
class CountingActor : public caf::event_based_actor {
 public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {[](int value) { return value; },
            [this](count_atom) {
              std::lock_guard guard(mtx_);
              int attached = 0;
              for (auto* a = attachables_head_.get(); a != nullptr; a = a->next.get())
                ++attached;
              return attached;
            }};
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(blocking_request_calls)

// Each call monitors its destination while it waits; a monitor left behind would make the
// destination's list grow with every call (and every later demonitor on it slower).
BOOST_AUTO_TEST_CASE(leave_no_monitor_on_the_destination) {
  auto runtime = value_or_throw(Runtime::shared_default());
  caf::actor dest = runtime->system().spawn<CountingActor>();
  auto before =
      blocking_request<int>(runtime->system(), dest, kWait, "counting", count_atom::value);
  BOOST_REQUIRE(before.ok());
  for (int i = 0; i < 100; ++i) {
    auto echoed = blocking_request<int>(runtime->system(), dest, kWait, "echo", i);
    BOOST_REQUIRE(echoed.ok());
    BOOST_TEST(*echoed == i);
  }
  auto after = blocking_request<int>(runtime->system(), dest, kWait, "counting", count_atom::value);
  BOOST_REQUIRE(after.ok());
  BOOST_TEST(*after == *before);
  caf::anon_send_exit(dest, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(an_answer_an_error_and_an_empty_answer_each_end_the_wait) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto& system = runtime->system();
  // Function actors get an argument: CAF 0.17 dereferences a null tuple without one.
  caf::actor dest = system.spawn(
      [](int factor) -> caf::behavior {
        return {[factor](int value) { return value * factor; },
                [](const std::string&) -> caf::result<int> {
                  return caf::make_error(caf::sec::unexpected_message);
                },
                [](count_atom) {}};
      },
      2);
  auto doubled = blocking_request<int>(system, dest, kWait, "doubling", 21);
  BOOST_REQUIRE(doubled.ok());
  BOOST_TEST(*doubled == 42);
  auto refused = blocking_request<int>(system, dest, kWait, "asking", std::string("x"));
  BOOST_TEST(!refused.ok());
  BOOST_TEST(refused.status().message().find("asking") != std::string::npos,
             refused.status().to_string());
  BOOST_TEST(blocking_request<caf::unit_t>(system, dest, kWait, "poking", count_atom::value).ok());
  caf::anon_send_exit(dest, caf::exit_reason::user_shutdown);
}

// An actor that takes the request, keeps its promise unanswered and quits: the caller's wait
// ends with its death (CAF 0.17 sends nothing for a dropped promise), even with no deadline.
BOOST_AUTO_TEST_CASE(a_destination_that_dies_holding_the_request_ends_the_wait) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto& system = runtime->system();
  caf::actor dest = system.spawn(
      [](caf::event_based_actor* self, caf::exit_reason reason) -> caf::behavior {
        return {[self, reason](hold_atom) -> caf::result<int> {
          auto promise = self->make_response_promise<int>();
          self->quit(reason);
          return promise;
        }};
      },
      caf::exit_reason::user_shutdown);
  check_error(
      blocking_request<int>(system, dest, caf::infinite, "holding", hold_atom::value).status(),
      Code::kUnavailable, "holding: the receiver is gone");
  // Asking it again, dead: no wait at all.
  check_error(
      blocking_request<int>(system, dest, caf::infinite, "again", hold_atom::value).status(),
      Code::kUnavailable, "again");
}

// An actor that never answers: the deadline ends the wait, and the actor lives on.
BOOST_AUTO_TEST_CASE(a_destination_that_never_answers_is_a_deadline) {
  auto runtime = value_or_throw(Runtime::shared_default());
  auto& system = runtime->system();
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  caf::actor dest = system.spawn(
      [](caf::event_based_actor* self,
         std::shared_ptr<std::vector<caf::response_promise>> held) -> caf::behavior {
        return {[self, held](hold_atom) -> caf::result<int> {
                  held->push_back(self->make_response_promise());
                  return held->back();
                },
                [](int value) { return value; }};
      },
      held);
  auto started = std::chrono::steady_clock::now();
  check_error(blocking_request<int>(system, dest, caf::duration(std::chrono::milliseconds(100)),
                                    "waiting", hold_atom::value)
                  .status(),
              Code::kDeadlineExceeded, "waiting");
  BOOST_TEST((std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(100)));
  auto echoed = blocking_request<int>(system, dest, kWait, "echo", 7);
  BOOST_REQUIRE(echoed.ok());
  BOOST_TEST(*echoed == 7);
  caf::anon_send_exit(dest, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
