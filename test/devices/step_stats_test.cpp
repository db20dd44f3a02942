// Step statistics: what the executor records for a traced step, and TensorFlow's StepStats
// wire format for them.
#include <boost/test/unit_test.hpp>

#include "run_graph.hpp"
#include "status_checks.hpp"
#include "troupe/devices/step_stats.hpp"

namespace troupe {
using testing::check_error;

BOOST_AUTO_TEST_SUITE(step_stats)

namespace {

// Runs `fetch` of `scope` once, recording into `stats` when it is given.
Tensor run_traced(const Scope& scope, const Output& fetch, std::vector<NodeExecStats>* stats) {
  RunSignature signature;
  signature.fetches.push_back(fetch.name());
  GraphDef def = value_or_throw(rewrite_for_run(scope.graph(), signature));
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  auto executor = value_or_throw(
      Executor::create(std::make_shared<const Graph>(value_or_throw(Graph::create(def))), device));
  StepContext step;
  step.stats = stats;
  BOOST_REQUIRE(executor->run(step).ok());
  return step.rets.at(0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_traced_step_records_each_node_in_the_order_they_ran) {
  Scope root = Scope::new_root();
  Output a = ops::Const(root.with_op_name("a"),
                        value_or_throw(Tensor::from_vector<float>({1, 2, 3}, {3})));
  Output b = ops::Const(root.with_op_name("b"),
                        value_or_throw(Tensor::from_vector<float>({4, 5, 6}, {3})));
  Output sum = ops::Add(root.with_op_name("sum"), a, b);
  std::vector<NodeExecStats> stats;
  run_traced(root, sum, &stats);
  std::vector<std::string> names;
  for (const NodeExecStats& node : stats)
    names.push_back(node.node_name);
  // The constants, the sum, and the _Retval that returns it, each once.
  BOOST_TEST_REQUIRE(stats.size() == 4u);
  auto position = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  BOOST_TEST(position("a") < position("sum"));
  BOOST_TEST(position("b") < position("sum"));
  const NodeExecStats& node = stats[position("sum")];
  BOOST_TEST(node.timeline_label == "sum = Add(a, b)");
  BOOST_TEST(node.all_start_micros > 1'600'000'000'000'000);  // wall clock, after 2020
  BOOST_TEST(node.op_start_rel_micros >= 0);
  BOOST_TEST(node.op_start_rel_micros <= node.op_end_rel_micros);
  BOOST_TEST(node.op_end_rel_micros <= node.all_end_rel_micros);
  BOOST_TEST(node.thread_id != 0u);
  BOOST_TEST_REQUIRE(node.outputs.size() == 1u);
  BOOST_TEST(node.outputs[0].slot == 0);
  BOOST_TEST((node.outputs[0].dtype == DataType::kFloat));
  BOOST_TEST(node.outputs[0].shape == std::vector<int64_t>({3}), boost::test_tools::per_element());
  BOOST_TEST(node.outputs[0].bytes == 12);
  // A step without stats records nothing, and computes the same.
  BOOST_TEST(run_traced(root, sum, nullptr).to_vector<float>() == std::vector<float>({5, 7, 9}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(step_stats_round_trip_through_tensorflows_wire_format) {
  NodeExecStats node;
  node.node_name = "layer/MatMul";
  node.timeline_label = "layer/MatMul = MatMul(x, w)";
  node.all_start_micros = 1'700'000'000'123'456;
  node.op_start_rel_micros = 3;
  node.op_end_rel_micros = 250;
  node.all_end_rel_micros = 260;
  node.thread_id = 4242;
  node.outputs.push_back({0, DataType::kFloat, {128, 10}, 5120});
  node.outputs.push_back({1, DataType::kInt64, {}, 8});
  std::vector<DeviceStepStats> devices{{"/job:worker/replica:0/task:0/device:CPU:0", {node}},
                                       {"/job:ps/replica:0/task:0/device:CPU:0", {}}};
  std::string bytes = encode_step_stats(devices);
  auto decoded = value_or_throw(decode_step_stats(bytes, "test"));
  BOOST_TEST_REQUIRE(decoded.size() == 2u);
  BOOST_TEST(decoded[1].device == "/job:ps/replica:0/task:0/device:CPU:0");
  BOOST_TEST(decoded[1].node_stats.empty());
  BOOST_TEST_REQUIRE(decoded[0].node_stats.size() == 1u);
  const NodeExecStats& back = decoded[0].node_stats[0];
  BOOST_TEST(back.node_name == node.node_name);
  BOOST_TEST(back.timeline_label == node.timeline_label);
  BOOST_TEST(back.all_start_micros == node.all_start_micros);
  BOOST_TEST(back.op_start_rel_micros == 3);
  BOOST_TEST(back.op_end_rel_micros == 250);
  BOOST_TEST(back.all_end_rel_micros == 260);
  BOOST_TEST(back.thread_id == 4242u);
  BOOST_TEST_REQUIRE(back.outputs.size() == 2u);
  BOOST_TEST(back.outputs[0].shape == std::vector<int64_t>({128, 10}),
             boost::test_tools::per_element());
  BOOST_TEST(back.outputs[0].bytes == 5120);
  BOOST_TEST((back.outputs[1].dtype == DataType::kInt64));
  BOOST_TEST(back.outputs[1].slot == 1);
  BOOST_TEST(back.outputs[1].shape.empty());
  // TensorFlow's numbers: dev_stats = 1 (length-delimited), then device = 1.
  BOOST_TEST(static_cast<int>(bytes[0]) == 0x0a);
  // Cut short, the message is DataLoss naming what was read.
  check_error(decode_step_stats(bytes.substr(0, bytes.size() - 3), "run metadata").status(),
              Code::kDataLoss, "run metadata");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
