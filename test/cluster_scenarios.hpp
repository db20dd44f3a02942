// Scenarios that run against any cluster of 2 ps + 2 worker tasks, whether its tasks live in
// this process (LocalCluster) or in node processes on loopback: the same checks for both.
#pragma once

#include <set>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::testing {

// Variables on both ps tasks, compute split over both workers (model parallelism inside one
// replica): checks the values, the devices the step used, and that only the fetched scalar
// reached the master.
inline void model_parallel_step(const std::string& target) {
  Scope root = Scope::new_root();
  Scope ps0 = root.with_device("/job:ps/task:0");
  Scope ps1 = root.with_device("/job:ps/task:1");
  Scope w0 = root.with_device("/job:worker/task:0");
  Scope w1 = root.with_device("/job:worker/task:1");

  auto weights = ops::Variable(ps0.with_op_name("weights"), TensorShape{2, 2}, DataType::kFloat);
  auto bias = ops::Variable(ps1.with_op_name("bias"), TensorShape{2}, DataType::kFloat);
  auto init_w =
      ops::Assign(ps0, weights, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2})));
  auto init_b = ops::Assign(ps1, bias, Tensor::from_vector<float>({10, 20}));
  auto x = ops::Placeholder(w0.with_op_name("x"), DataType::kFloat, PartialShape({-1, 2}));
  auto hidden = ops::MatMul(w0.with_op_name("hidden"), x, weights);
  auto biased = ops::BiasAdd(w1.with_op_name("biased"), hidden, bias);
  auto total = ops::Sum(w1.with_op_name("total"), ops::Relu(w1, biased), {0, 1});
  auto bump =
      ops::AssignAdd(ps1.colocate_with(bias.op()), bias, Tensor::from_vector<float>({1, 1}));
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());

  Session session = value_or_throw(Session::create(target));
  throw_if_error(session.run_targets({init_w.op(), init_b.op()}));
  Tensor x_value = value_or_throw(Tensor::from_vector<float>({1, 1}, {1, 2}));
  std::vector<Tensor> out;
  RunMetadata metadata;
  // [[1,1]] x [[1,2],[3,4]] = [[4,6]]; + [10,20] = [[14,26]]; sum = 40.
  BOOST_REQUIRE(
      value_or_throw(session.run(FeedDict{{x, x_value}}, {total})).at(0).scalar<float>() == 40.f);
  Status status = session.run({{x.name(), x_value}}, {total.name()}, {}, &out, {}, &metadata);
  BOOST_REQUIRE_MESSAGE(status.ok(), status.to_string());
  BOOST_TEST(out.at(0).scalar<float>() == 40.f);
  std::set<std::string> devices(metadata.devices.begin(), metadata.devices.end());
  BOOST_TEST(devices.count("/job:ps/replica:0/task:0/device:CPU:0") == 1u);
  BOOST_TEST(devices.count("/job:ps/replica:0/task:1/device:CPU:0") == 1u);
  BOOST_TEST(devices.count("/job:worker/replica:0/task:0/device:CPU:0") == 1u);
  BOOST_TEST(devices.count("/job:worker/replica:0/task:1/device:CPU:0") == 1u);
  BOOST_TEST(metadata.tensors_to_master == 1);
  BOOST_TEST(metadata.bytes_to_master == 4);

  // An update on ps1 is seen by the next step on the workers: bias [11,21] -> sum 42.
  throw_if_error(session.run_targets({bump.op()}));
  BOOST_TEST(value_or_throw(session.run(FeedDict{{x, x_value}}, {total})).at(0).scalar<float>() ==
             42.f);
}

// A 1000x1000 float tensor made on worker 0 and reduced on worker 1: 4 MB cross devices, the
// master receives only the 4-byte result.
inline void tensors_go_peer_to_peer(const std::string& target) {
  Scope root = Scope::new_root();
  auto big = ops::Fill(root.with_device("/job:worker/task:0"), {1000, 1000}, 0.5f);
  auto total = ops::Sum(root.with_device("/job:worker/task:1"), big, {0, 1});
  Session session = value_or_throw(Session::create(target));
  BOOST_REQUIRE(session.extend(root.to_graph_def()).ok());
  std::vector<Tensor> out;
  RunMetadata metadata;
  Status status = session.run({}, {total.name()}, {}, &out, {}, &metadata);
  BOOST_REQUIRE_MESSAGE(status.ok(), status.to_string());
  BOOST_TEST(out.at(0).scalar<float>() == 500000.f);
  BOOST_TEST(metadata.devices.size() == 2u);
  BOOST_TEST(metadata.tensors_to_master == 1);
  BOOST_TEST(metadata.bytes_to_master == 4);
}

// A node asked to run on a task the cluster lacks.
inline void missing_device_is_invalid_argument(const std::string& target) {
  Scope root = Scope::new_root();
  auto c = ops::Const(root.with_device("/job:worker/task:7").with_op_name("lost"), 1.f);
  Session session = value_or_throw(Session::create(target));
  check_error(session.run(c).status(), Code::kInvalidArgument,
              "node 'lost' (Const) is placed on device '/job:worker/task:7'");
}

}  // namespace troupe::testing
