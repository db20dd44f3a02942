// Tests for calls over the tensor channel (actors/transport/call_proxy.hpp, caller.hpp,
// responder.hpp): a request to a call proxy reaches the device on the peer channel and its reply,
// or error, reaches the requester's own response handler; a call the channel cannot carry goes as
// an actor message; a call whose connection ends unanswered fails with Unavailable, and the device
// sees its caller go.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>

#include <caf/all.hpp>

#include "free_ports.hpp"
#include "status_checks.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/free_ports.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/transport/tensor_channel.hpp"
#include "wait_until.hpp"

namespace troupe {
namespace {

constexpr char kDevice[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr auto kWait = std::chrono::seconds(20);

using Answer = std::shared_ptr<std::promise<StatusOr<int32_t>>>;
using Gone = std::shared_ptr<std::promise<std::string>>;

// A device stand-in: doubles an int32; fails a string with InvalidArgument; holds a request
// carrying `true` unanswered, monitoring its sender, and reports that sender's down message.
caf::behavior fake_device(caf::event_based_actor* self, Gone gone) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  self->set_down_handler(
      [self, gone](caf::down_msg& msg) { gone->set_value(self->system().render(msg.reason)); });
  return {
      [](int32_t x) { return 2 * x; },
      [](const std::string& what) -> caf::result<int32_t> {
        return to_caf_error(errors::InvalidArgument("no '{}' here", what));
      },
      [self, held](bool) -> caf::result<int32_t> {
        self->monitor(self->current_sender());
        held->push_back(self->make_response_promise());
        return caf::delegated<int32_t>{};
      },
  };
}

// Asks `callee` with `request` from an actor of its own, as a master session would.
template <class Request>
std::future<StatusOr<int32_t>> ask(caf::actor_system& system, const caf::actor& callee,
                                   Request request) {
  auto answer = std::make_shared<std::promise<StatusOr<int32_t>>>();
  auto future = answer->get_future();
  system.spawn(
      [callee, request](caf::event_based_actor* self, Answer answer) {
        self->request(callee, kWait, request)
            .then(
                [answer](int32_t x) { answer->set_value(x); },
                [answer](caf::error& err) { answer->set_value(from_caf_error(err, "the call")); });
      },
      answer);
  return future;
}

template <class Request>
StatusOr<int32_t> call(caf::actor_system& system, const caf::actor& callee, Request request) {
  auto future = ask(system, callee, request);
  BOOST_REQUIRE(future.wait_for(kWait + std::chrono::seconds(5)) == std::future_status::ready);
  return future.get();
}

std::shared_ptr<TensorChannel> start_channel(caf::actor_system& system) {
  return value_or_throw(TensorChannel::start(system, "127.0.0.1", "127.0.0.1", {}));
}

// Two channels of this process, a fake device on the callee's, and a proxy for it on the
// caller's.
struct Calls {
  std::shared_ptr<Runtime> runtime = value_or_throw(Runtime::shared_default());
  caf::actor_system& system = runtime->system();
  Gone gone = std::make_shared<std::promise<std::string>>();
  caf::actor device = system.spawn(fake_device, gone);
  std::shared_ptr<TensorChannel> caller = start_channel(system);
  std::shared_ptr<TensorChannel> callee = start_channel(system);
  caf::actor proxy = caller->runner(callee->address(), kDevice, device);

  Calls() { callee->attach(kDevice, device); }
  ~Calls() {
    caller->stop();
    callee->stop();
    caf::anon_send_exit(device, caf::exit_reason::user_shutdown);
  }

  // Calls until one has gone on the channel (the first ones may go before it is connected).
  void connect() {
    int32_t i = 0;
    testing::wait_until([&] {
      BOOST_REQUIRE(value_or_throw(call(system, proxy, i)) == 2 * i);
      ++i;
      return caller->counters().calls_sent > 0;
    });
    BOOST_REQUIRE(caller->counters().calls_sent > 0u);
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(channel_call)

BOOST_AUTO_TEST_CASE(a_call_goes_on_the_channel_and_its_reply_reaches_the_requester) {
  Calls calls;
  calls.connect();
  uint64_t before = calls.caller->counters().calls_sent;
  for (int32_t i = 0; i < 20; ++i)
    BOOST_TEST(value_or_throw(call(calls.system, calls.proxy, i)) == 2 * i);
  BOOST_TEST(calls.caller->counters().calls_sent == before + 20);
  BOOST_TEST(calls.caller->counters().calls_answered == calls.caller->counters().calls_sent);
  BOOST_TEST(calls.callee->counters().calls_served == calls.caller->counters().calls_sent);
}

BOOST_AUTO_TEST_CASE(an_error_reply_reaches_the_requester_as_the_error) {
  Calls calls;
  calls.connect();
  uint64_t before = calls.caller->counters().calls_sent;
  testing::check_error(call(calls.system, calls.proxy, std::string("tea")).status(),
                       Code::kInvalidArgument, "no 'tea' here");
  BOOST_TEST(calls.caller->counters().calls_sent == before + 1);
}

BOOST_AUTO_TEST_CASE(a_call_for_a_device_the_peer_lacks_is_not_found) {
  Calls calls;
  calls.connect();
  const std::string missing = "/job:ps/replica:0/task:0/device:CPU:7";
  caf::actor proxy = calls.caller->runner(calls.callee->address(), missing, calls.device);
  testing::check_error(call(calls.system, proxy, int32_t{1}).status(), Code::kNotFound, missing);
}

BOOST_AUTO_TEST_CASE(a_call_left_unanswered_when_the_connection_ends_is_unavailable) {
  Calls calls;
  calls.connect();
  uint64_t served = calls.callee->counters().calls_served;
  auto pending = ask(calls.system, calls.proxy, true);
  // The device holds it (and watches its caller, the connection's responder) ...
  auto gone = calls.gone->get_future();
  testing::wait_until([&] { return calls.callee->counters().calls_served != served; });
  BOOST_REQUIRE(calls.callee->counters().calls_served == served + 1);
  calls.callee->stop();
  // ... until the called process's channel goes: the caller hears of it at once ...
  BOOST_REQUIRE(pending.wait_for(kWait) == std::future_status::ready);
  testing::check_error(pending.get().status(), Code::kUnavailable, kDevice);
  // ... and the device sees its caller gone.
  BOOST_REQUIRE(gone.wait_for(kWait) == std::future_status::ready);
}

BOOST_AUTO_TEST_CASE(calls_the_channel_cannot_carry_go_as_actor_messages) {
  Calls calls;
  // Nothing listens there: every call goes straight to the device instead.
  testing::ClosedAddress nobody_listens;
  std::string nowhere = nobody_listens.address();
  caf::actor proxy = calls.caller->runner(nowhere, kDevice, calls.device);
  for (int32_t i = 0; i < 5; ++i)
    BOOST_TEST(value_or_throw(call(calls.system, proxy, i)) == 2 * i);
  testing::check_error(call(calls.system, proxy, std::string("tea")).status(),
                       Code::kInvalidArgument, "no 'tea' here");
  // So does everything after the channel stopped.
  calls.caller->stop();
  BOOST_TEST(value_or_throw(call(calls.system, calls.proxy, int32_t{21})) == 42);
  BOOST_TEST(calls.caller->counters().calls_sent == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
