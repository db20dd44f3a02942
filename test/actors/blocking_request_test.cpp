// Tests for blocking_request: what it leaves behind on the actor it asked.
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include "actors/blocking_request.hpp"
#include "actors/runtime.hpp"

namespace troupe {
namespace {

using count_atom = caf::atom_constant<caf::atom("count")>;
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
  auto runtime = Runtime::shared_default();
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
