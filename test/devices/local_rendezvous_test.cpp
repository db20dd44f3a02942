// Tests for LocalRendezvous: a tensor meets its Recv by step id and key, whichever comes first;
// steps never mix; an aborted step fails its waiters and drops its late tensors.
#include <optional>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/devices/local_rendezvous.hpp"

namespace troupe {
namespace {

Tensor scalar(float value) {
  return Tensor::scalar<float>(value);
}

// What a Recv got, once it has been called back.
struct Received {
  std::optional<Status> status;
  Tensor value;
  RecvCallback callback() {
    return [this](const Status& s, const Tensor& v) {
      BOOST_TEST(!status.has_value(), "called back twice");
      status = s;
      value = v;
    };
  }
};

const std::string kKey = rendezvous_key("/job:ps/replica:0/task:0/device:CPU:0",
                                        "/job:worker/replica:0/task:0/device:CPU:0", "w:0");

}  // namespace

BOOST_AUTO_TEST_SUITE(local_rendezvous)

BOOST_AUTO_TEST_CASE(the_key_names_the_edge_and_not_the_step) {
  BOOST_TEST(kKey ==
             "/job:ps/replica:0/task:0/device:CPU:0;/job:worker/replica:0/task:0/device:CPU:0;w:0");
}

BOOST_AUTO_TEST_CASE(a_tensor_meets_its_recv_whichever_comes_first) {
  LocalRendezvous table;
  Received early, late;
  BOOST_TEST(table.deliver(1, kKey, scalar(1.f)).ok());
  table.recv(1, kKey, early.callback());
  table.recv(2, kKey, late.callback());
  BOOST_TEST(!late.status.has_value());
  BOOST_TEST(table.deliver(2, kKey, scalar(2.f)).ok());
  BOOST_REQUIRE(early.status.has_value() && late.status.has_value());
  BOOST_TEST(early.status->ok());
  BOOST_TEST(early.value.scalar<float>() == 1.f);
  BOOST_TEST(late.value.scalar<float>() == 2.f);
  BOOST_TEST(table.pending_entries() == 0u);
}

BOOST_AUTO_TEST_CASE(steps_with_the_same_key_never_mix) {
  LocalRendezvous table;
  BOOST_TEST(table.deliver(7, kKey, scalar(7.f)).ok());
  BOOST_TEST(table.deliver(8, kKey, scalar(8.f)).ok());
  Received eight, seven;
  table.recv(8, kKey, eight.callback());
  table.recv(7, kKey, seven.callback());
  BOOST_TEST(eight.value.scalar<float>() == 8.f);
  BOOST_TEST(seven.value.scalar<float>() == 7.f);
}

BOOST_AUTO_TEST_CASE(a_key_takes_one_tensor_and_one_recv_per_step) {
  LocalRendezvous table;
  BOOST_TEST(table.deliver(1, kKey, scalar(1.f)).ok());
  testing::check_error(table.deliver(1, kKey, scalar(1.f)), Code::kInvalidArgument,
                       "received a second tensor");
  Received first, second;
  table.recv(2, kKey, first.callback());
  table.recv(2, kKey, second.callback());
  BOOST_REQUIRE(second.status.has_value());
  testing::check_error(*second.status, Code::kInternal, "is received twice");
  BOOST_TEST(!first.status.has_value());  // still waits for its tensor
}

BOOST_AUTO_TEST_CASE(an_aborted_step_fails_its_waiters_and_drops_late_tensors) {
  LocalRendezvous table;
  Received waiting, after;
  table.recv(3, kKey, waiting.callback());
  BOOST_TEST(table.deliver(4, kKey, scalar(4.f)).ok());  // another step: untouched
  table.abort_step(3, errors::Cancelled("step 3 was cancelled"));
  BOOST_REQUIRE(waiting.status.has_value());
  testing::check_error(*waiting.status, Code::kCancelled, "step 3 was cancelled");
  BOOST_TEST(table.deliver(3, kKey, scalar(3.f)).ok());  // late: dropped
  table.recv(3, kKey, after.callback());
  testing::check_error(*after.status, Code::kCancelled, "step 3 was cancelled");
  testing::check_error(table.aborted(3), Code::kCancelled, "step 3");
  BOOST_TEST(table.aborted(4).ok());
  BOOST_TEST(table.pending_entries() == 1u);  // step 4's tensor
  table.finish_step(4);
  BOOST_TEST(table.pending_entries() == 0u);
}

// A Recv's callback runs the consumers of the tensor, which may use the table again.
BOOST_AUTO_TEST_CASE(a_callback_may_use_the_table) {
  LocalRendezvous table;
  Received inner;
  bool outer_called = false;
  table.recv(5, kKey, [&](const Status& status, const Tensor&) {
    outer_called = status.ok();
    table.recv(5, kKey + "'", inner.callback());
    BOOST_TEST(table.deliver(5, kKey + "'", scalar(5.f)).ok());
  });
  BOOST_TEST(table.deliver(5, kKey, scalar(0.f)).ok());
  BOOST_TEST(outer_called);
  BOOST_REQUIRE(inner.status.has_value());
  BOOST_TEST(inner.value.scalar<float>() == 5.f);
  BOOST_TEST(table.pending_entries() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
