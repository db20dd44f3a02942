// Tests for device scopes and replica_device_setter: the device stack of Scope (string layers,
// device functions, canonical names, errors naming the node) and TensorFlow's
// tf.train.replica_device_setter semantics (round robin over ps tasks, worker device, inner
// scopes winning field by field).
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {
using testing::check_error;

const std::string& device_of(const Output& output) {
  return output.node()->requested_device();
}

Output variable(const Scope& scope) {
  return ops::Variable(scope, TensorShape{2, 2}, DataType::kFloat);
}

Output matmul(const Scope& scope) {
  return ops::MatMul(scope, ops::Const(scope, {{1.f, 2.f}}), ops::Const(scope, {{3.f}, {4.f}}));
}

ClusterSpec ps2_worker3() {
  return value_or_throw(
      ClusterSpec::create({{"ps", {"ps0:2222", "ps1:2222"}},
                           {"worker", {"worker0:2222", "worker1:2222", "worker2:2222"}}}));
}

DeviceFunction setter(const ClusterSpec& cluster, std::string worker_device) {
  auto fn = replica_device_setter(cluster, std::move(worker_device));
  BOOST_REQUIRE_MESSAGE(fn.ok(), fn.status().to_string());
  return *fn;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_scopes)

BOOST_AUTO_TEST_CASE(scope_device_strings_are_stored_canonically) {
  Scope s = Scope::new_root();
  BOOST_TEST(device_of(ops::Const(s.with_device("/cpu:0"), 1.f)) == "/device:CPU:0");
  BOOST_TEST(device_of(ops::Const(s.with_device("/job:worker/task:0/gpu:1"), 1.f)) ==
             "/job:worker/task:0/device:GPU:1");
  BOOST_TEST(device_of(ops::Const(s.with_device("/device:cpu:*/task:3/job:ps"), 1.f)) ==
             "/job:ps/task:3/device:CPU:*");
  BOOST_TEST(device_of(ops::Const(s.with_device("/"), 1.f)) == "");
  BOOST_TEST(device_of(ops::Const(s, 1.f)) == "");
  BOOST_TEST(s.with_device("/gpu:0").device() == "/device:GPU:0");
  BOOST_TEST(s.ok(), s.status().to_string());
}

BOOST_AUTO_TEST_CASE(nested_string_layers_merge_with_inner_fields_winning) {
  Scope s = Scope::new_root();
  Scope worker = s.with_device("/job:worker");
  BOOST_TEST(device_of(ops::Const(worker.with_device("/task:2"), 1.f)) == "/job:worker/task:2");
  Scope task1 = s.with_device("/job:worker/task:1/device:CPU:0");
  BOOST_TEST(device_of(ops::Const(task1.with_device("/task:2"), 1.f)) ==
             "/job:worker/task:2/device:CPU:0");
  BOOST_TEST(device_of(ops::Const(task1.with_device("/job:ps").with_device("/gpu:1"), 1.f)) ==
             "/job:ps/task:1/device:GPU:1");
  // "" constrains nothing and keeps what the outer layers say.
  BOOST_TEST(device_of(ops::Const(task1.with_device(""), 1.f)) ==
             "/job:worker/task:1/device:CPU:0");
  BOOST_TEST(worker.with_device("/task:2").device() == "/job:worker/task:2");
  BOOST_TEST(s.ok(), s.status().to_string());
}

BOOST_AUTO_TEST_CASE(device_functions_see_the_node_and_what_inner_layers_chose) {
  Scope s = Scope::new_root();
  std::vector<std::string> seen;
  DeviceFunction by_op = [&](const NodeDef& node) -> std::string {
    seen.push_back(node.name + " " + node.op + " '" + node.device + "'");
    if (node.op != "MatMul") return node.device;
    BOOST_TEST(node.find_attr("transpose_b") != nullptr);
    BOOST_TEST(node.inputs.size() == 2u);
    return "/job:worker/task:3/device:GPU:0";
  };
  Scope fn = s.with_device_function(by_op);
  auto a = ops::Const(fn.with_op_name("a"), {{1.f}});
  auto b = ops::Const(fn.with_device("/task:1").with_op_name("b"), {{2.f}});
  auto m = ops::MatMul(fn.with_op_name("m"), a, b, {.transpose_b = true});
  BOOST_TEST(device_of(m) == "/job:worker/task:3/device:GPU:0");
  BOOST_TEST(device_of(ops::Const(fn.with_device("/job:ps/cpu:0"), 1.f)) == "/job:ps/device:CPU:0");
  BOOST_TEST(seen == (std::vector<std::string>{"a Const ''", "b Const '/task:1'", "m MatMul ''",
                                               "Const Const '/job:ps/device:CPU:0'"}),
             "seen: " << seen.size());
  // An outer string layer fills in what the function leaves unset; an inner one is seen by it.
  DeviceFunction gpu = [](const NodeDef& node) { return node.device + "/device:GPU:0"; };
  auto x = ops::Const(s.with_device("/job:worker/task:2").with_device_function(gpu), 1.f);
  BOOST_TEST(device_of(x) == "/job:worker/task:2/device:GPU:0");
  auto y = ops::Const(s.with_device_function(gpu).with_device("/job:ps/task:0"), 1.f);
  BOOST_TEST(device_of(y) == "/job:ps/task:0/device:GPU:0");
  // Scope::device() ignores functions.
  BOOST_TEST(s.with_device("/job:ps").with_device_function(gpu).device() == "/job:ps");
  BOOST_TEST(s.ok(), s.status().to_string());
}

BOOST_AUTO_TEST_CASE(malformed_device_strings_are_errors_naming_the_node) {
  Scope s = Scope::new_root();
  auto bad = ops::Const(s.with_device("/job:ps").with_device("/job:").with_op_name("c"), 1.f);
  BOOST_TEST(!bad.valid());
  check_error(s.status(), Code::kInvalidArgument, "node 'c' (Const)");
  check_error(s.status(), Code::kInvalidArgument, "Scope::with_device");
  check_error(s.status(), Code::kInvalidArgument, "'/job:'");

  Scope t = Scope::new_root();
  DeviceFunction garbage = [](const NodeDef&) { return std::string("gpu0"); };
  ops::Const(t.with_device_function(garbage).with_op_name("d"), 1.f);
  check_error(t.status(), Code::kInvalidArgument, "node 'd' (Const)");
  check_error(t.status(), Code::kInvalidArgument, "device function");
  check_error(t.status(), Code::kInvalidArgument, "'gpu0'");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(replica_device_setter_tests)

BOOST_AUTO_TEST_CASE(tensorflow_documented_example) {
  Scope root = Scope::new_root();
  Scope s = root.with_device_function(setter(ps2_worker3(), "/job:worker/task:1"));
  auto v1 = variable(s);
  auto v2 = variable(s);
  auto v3 = variable(s);
  auto product = matmul(s);
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  BOOST_TEST(device_of(v1) == "/job:ps/task:0");
  BOOST_TEST(device_of(v2) == "/job:ps/task:1");
  BOOST_TEST(device_of(v3) == "/job:ps/task:0");
  BOOST_TEST(device_of(product) == "/job:worker/task:1");
  BOOST_TEST(product.node()->graph().node(product.node()->inputs()[0].node).requested_device() ==
             "/job:worker/task:1");
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:1");
}

BOOST_AUTO_TEST_CASE(inner_device_scopes_win_field_by_field) {
  Scope root = Scope::new_root();
  Scope s = root.with_device_function(setter(ps2_worker3(), "/job:worker/task:1"));
  Scope cpu = s.with_device("/device:CPU:0");
  BOOST_TEST(device_of(matmul(cpu)) == "/job:worker/task:1/device:CPU:0");
  BOOST_TEST(device_of(variable(cpu)) == "/job:ps/task:0/device:CPU:0");  // strategy: 0
  BOOST_TEST(device_of(matmul(s.with_device("/task:2"))) == "/job:worker/task:2");
  // A ps task chosen inside wins over round robin, which still advances (the job matches).
  BOOST_TEST(device_of(variable(s.with_device("/job:ps/task:1"))) == "/job:ps/task:1");  // 1
  BOOST_TEST(device_of(variable(s.with_device("/job:ps/task:1"))) == "/job:ps/task:1");  // 0
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:1");                                // 1
  // Another job inside: ps_device's task is not chosen and round robin does not advance.
  BOOST_TEST(device_of(variable(s.with_device("/job:worker"))) == "/job:worker");
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:0");  // 0
  BOOST_TEST(root.ok(), root.status().to_string());
}

BOOST_AUTO_TEST_CASE(outer_string_layers_only_fill_in_what_the_setter_leaves_unset) {
  Scope root = Scope::new_root();
  Scope s = root.with_device("/job:ps/task:1/device:GPU:0")
                .with_device_function(setter(ps2_worker3(), "/job:worker/task:1"));
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:0/device:GPU:0");
  BOOST_TEST(device_of(matmul(s)) == "/job:worker/task:1/device:GPU:0");
  BOOST_TEST(root.ok(), root.status().to_string());
}

BOOST_AUTO_TEST_CASE(copies_of_the_setter_share_round_robin) {
  DeviceFunction fn = setter(ps2_worker3(), "/job:worker");
  DeviceFunction copy = fn;
  Scope root = Scope::new_root();
  BOOST_TEST(device_of(variable(root.with_device_function(fn))) == "/job:ps/task:0");
  BOOST_TEST(device_of(variable(root.with_device_function(copy))) == "/job:ps/task:1");
  BOOST_TEST(device_of(variable(root.with_device_function(fn))) == "/job:ps/task:0");
  BOOST_TEST(device_of(matmul(root.with_device_function(fn))) == "/job:worker");

  PsStrategy a = round_robin_strategy(3);
  PsStrategy b = a;
  NodeDef node;
  BOOST_TEST(a(node) == 0);
  BOOST_TEST(b(node) == 1);
  BOOST_TEST(a(node) == 2);
  BOOST_TEST(b(node) == 0);
  PsStrategy fresh = round_robin_strategy(3);
  BOOST_TEST(fresh(node) == 0);
}

BOOST_AUTO_TEST_CASE(without_ps_tasks_the_device_is_unchanged) {
  auto workers_only = value_or_throw(ClusterSpec::create({{"worker", {"w0:1", "w1:1"}}}));
  Scope root = Scope::new_root();
  Scope s = root.with_device_function(setter(workers_only, "/job:worker/task:1"));
  BOOST_TEST(device_of(variable(s)) == "");
  BOOST_TEST(device_of(matmul(s)) == "");
  BOOST_TEST(device_of(matmul(s.with_device("/task:3"))) == "/task:3");

  // No cluster and ps_tasks == 0.
  auto none = replica_device_setter(ReplicaDeviceSetterOptions{});
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(device_of(variable(root.with_device_function(*none))) == "");
  // A cluster decides, whatever ps_tasks says.
  auto ignored = replica_device_setter({.ps_tasks = 4, .cluster = workers_only});
  BOOST_REQUIRE(ignored.ok());
  BOOST_TEST(device_of(matmul(root.with_device_function(*ignored))) == "");
  BOOST_TEST(root.ok(), root.status().to_string());
}

BOOST_AUTO_TEST_CASE(options_ps_tasks_devices_ops_and_strategy) {
  Scope root = Scope::new_root();
  auto three = replica_device_setter(
      {.ps_tasks = 3, .ps_device = "/job:ps/device:CPU:0", .worker_device = ""});
  BOOST_REQUIRE_MESSAGE(three.ok(), three.status().to_string());
  Scope s = root.with_device_function(*three);
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:0/device:CPU:0");
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:1/device:CPU:0");
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:2/device:CPU:0");
  BOOST_TEST(device_of(variable(s)) == "/job:ps/task:0/device:CPU:0");
  BOOST_TEST(device_of(matmul(s)) == "");  // empty worker_device: unchanged

  // ps_device's job comes from the cluster lookup too.
  auto params = value_or_throw(ClusterSpec::create({{"params", {"p0:1", "p1:1", "p2:1"}}}));
  auto custom = replica_device_setter(
      {.cluster = params,
       .ps_device = "/job:params",
       .worker_device = "/job:trainer/task:0",
       .ps_ops = {"Variable", "Placeholder"},
       .ps_strategy = [](const NodeDef& node) { return node.op == "Placeholder" ? 2 : 1; }});
  BOOST_REQUIRE_MESSAGE(custom.ok(), custom.status().to_string());
  Scope c = root.with_device_function(*custom);
  BOOST_TEST(device_of(variable(c)) == "/job:params/task:1");
  BOOST_TEST(device_of(ops::Placeholder(c, DataType::kFloat)) == "/job:params/task:2");
  BOOST_TEST(device_of(matmul(c)) == "/job:trainer/task:0");

  // An empty ps_device sends ps ops to the worker device.
  auto no_ps_device = replica_device_setter({.ps_tasks = 2, .ps_device = ""});
  BOOST_REQUIRE(no_ps_device.ok());
  BOOST_TEST(device_of(variable(root.with_device_function(*no_ps_device))) == "/job:worker");
  BOOST_TEST(root.ok(), root.status().to_string());
}

BOOST_AUTO_TEST_CASE(bad_options_are_invalid_argument_naming_the_option) {
  auto bad_ps = replica_device_setter({.ps_tasks = 1, .ps_device = "/job:"});
  check_error(bad_ps.status(), Code::kInvalidArgument, "option ps_device");
  check_error(bad_ps.status(), Code::kInvalidArgument, "'/job:'");
  auto bad_worker = replica_device_setter(ps2_worker3(), "job:worker");
  check_error(bad_worker.status(), Code::kInvalidArgument, "option worker_device");
  check_error(bad_worker.status(), Code::kInvalidArgument, "'job:worker'");
  auto negative = replica_device_setter({.ps_tasks = -1});
  check_error(negative.status(), Code::kInvalidArgument, "option ps_tasks is -1");
}

BOOST_AUTO_TEST_CASE(a_negative_task_from_the_strategy_fails_the_node_naming_it) {
  auto setter =
      replica_device_setter({.ps_tasks = 2, .ps_strategy = [](const NodeDef&) { return -1; }});
  BOOST_REQUIRE(setter.ok());
  Scope root = Scope::new_root();
  Scope s = root.with_device_function(*setter);
  ops::Variable(s.with_op_name("table"), TensorShape{2}, DataType::kFloat);
  check_error(root.status(), Code::kInvalidArgument, "node 'table'");
  check_error(root.status(), Code::kInvalidArgument, "(ps_strategy returned task -1)");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
