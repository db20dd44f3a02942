// Deterministic tests of the device actor's protocol: registration errors naming the node, an
// unknown partition, a step aborted before it arrives, a tensor that arrives before its step,
// and steps in flight that do not wait for each other.
#include <boost/test/unit_test.hpp>

#include "actors/deterministic_system.hpp"
#include "actors/task_in_system.hpp"
#include "status_checks.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/devices/rendezvous.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::DeterministicSystem;

const std::string kDevice = "/job:worker/replica:0/task:0/device:CPU:0";
const std::string kPeer = "/job:ps/replica:0/task:0/device:CPU:0";

// One worker task in a deterministic system; the test talks to its device.
class OneDevice {
 public:
  OneDevice() {
    auto cluster = ClusterSpec::create({{"worker", {"worker-0.test:2222"}}}).value();
    testing::TaskActors worker = testing::start_task(sys_, cluster, "worker");
    BOOST_TEST_REQUIRE(worker.device_name == kDevice);
    device_ = worker.device;
    sys_.label(device_, "device");
  }

  DeterministicSystem& sys() { return sys_; }
  const caf::actor& device() const { return device_; }

  StatusOr<int64_t> register_partition(std::vector<NodeDef> nodes) {
    GraphDef graph;
    graph.nodes = std::move(nodes);
    return sys_.ask<int64_t>(device_, register_partition_atom::value, PartitionSpec{graph, ""});
  }

  // A partition that returns the float tensor kPeer sends it under "x:0".
  int64_t register_receiver() {
    auto handle = register_partition({NodeDef{"recv",
                                              "_Recv",
                                              {},
                                              kDevice,
                                              {{"tensor_type", DataType::kFloat},
                                               {"tensor_name", std::string("x:0")},
                                               {"send_device", kPeer},
                                               {"recv_device", kDevice}}},
                                      NodeDef{"ret",
                                              "_Retval",
                                              {"recv"},
                                              kDevice,
                                              {{"T", DataType::kFloat}, {"index", int64_t{0}}}}});
    BOOST_TEST_REQUIRE(handle.ok(), handle.status().to_string());
    return *handle;
  }

  void send_x(int64_t step, float value) {
    caf::anon_send(device_, recv_tensor_atom::value, step, rendezvous_key(kPeer, kDevice, "x:0"),
                   Tensor(value));
  }

 private:
  DeterministicSystem sys_;
  caf::actor device_;
};

float single_float(const RunPartitionResponse& response) {
  BOOST_TEST_REQUIRE(response.rets.size() == 1u);
  return response.rets[0].scalar<float>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_actor)

BOOST_AUTO_TEST_CASE(a_partition_that_does_not_check_is_refused_naming_the_node) {
  OneDevice one;
  auto handle = one.register_partition({NodeDef{"bad", "NoSuchOp", {}, kDevice, {}}});
  BOOST_TEST_REQUIRE(!handle.ok());
  check_error(handle.status(), Code::kInvalidArgument, "bad");
}

BOOST_AUTO_TEST_CASE(running_an_unknown_partition_is_not_found_naming_the_device) {
  OneDevice one;
  auto response = one.sys().ask<RunPartitionResponse>(one.device(), run_partition_atom::value,
                                                      RunPartitionRequest{1, 42, {}});
  BOOST_TEST_REQUIRE(!response.ok());
  check_error(response.status(), Code::kNotFound, "device " + kDevice + " has no partition 42");
}

BOOST_AUTO_TEST_CASE(a_step_aborted_before_it_arrives_fails_when_it_does) {
  OneDevice one;
  int64_t handle = one.register_receiver();
  caf::anon_send(one.device(), abort_step_atom::value, int64_t{7},
                 to_caf_error(errors::Cancelled("the client gave up")));
  auto response = one.sys().ask<RunPartitionResponse>(one.device(), run_partition_atom::value,
                                                      RunPartitionRequest{7, handle, {}});
  BOOST_TEST_REQUIRE(!response.ok());
  check_error(response.status(), Code::kCancelled, "the client gave up");
}

BOOST_AUTO_TEST_CASE(a_tensor_that_arrives_before_its_step_waits_for_it) {
  OneDevice one;
  int64_t handle = one.register_receiver();
  one.send_x(9, 4.f);
  auto response = one.sys().ask<RunPartitionResponse>(one.device(), run_partition_atom::value,
                                                      RunPartitionRequest{9, handle, {}});
  BOOST_TEST_REQUIRE(response.ok(), response.status().to_string());
  BOOST_TEST(single_float(*response) == 4.f);
}

BOOST_AUTO_TEST_CASE(a_waiting_step_does_not_hold_up_the_others) {
  OneDevice one;
  DeterministicSystem& sys = one.sys();
  int64_t handle = one.register_receiver();
  auto& client = sys.client();
  auto waiting = client->request(one.device(), caf::infinite, run_partition_atom::value,
                                 RunPartitionRequest{10, handle, {}});
  one.send_x(11, 11.f);
  auto ready = client->request(one.device(), caf::infinite, run_partition_atom::value,
                               RunPartitionRequest{11, handle, {}});
  sys.run();
  // Step 11 has its answer; step 10 still waits for its tensor.
  BOOST_TEST_REQUIRE(!client->mailbox().empty());
  float got = 0;
  ready.receive([&](RunPartitionResponse& r) { got = single_float(r); },
                [&](caf::error& e) { BOOST_FAIL(from_caf_error(e).to_string()); });
  BOOST_TEST(got == 11.f);
  BOOST_TEST(client->mailbox().empty());

  one.send_x(10, 10.f);
  sys.run();
  BOOST_TEST_REQUIRE(!client->mailbox().empty());
  waiting.receive([&](RunPartitionResponse& r) { got = single_float(r); },
                  [&](caf::error& e) { BOOST_FAIL(from_caf_error(e).to_string()); });
  BOOST_TEST(got == 10.f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
