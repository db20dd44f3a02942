// Tests for placement: completion of partial requests from the default task, GPU preference
// subject to kernels, colocation groups (reference inputs, Scope::colocate_with and "_class"
// loc:@ attributes, _Arg and _Retval) and the errors that name the nodes and devices involved.
#include <map>

#include <boost/test/unit_test.hpp>

#include "graph/graph_of.hpp"
#include "status_checks.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/placement.hpp"
#include "troupe/graph/subgraph.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::graph_of;

const std::string kPs0 = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kPs1 = "/job:ps/replica:0/task:1/device:CPU:0";
const std::string kWorker0 = "/job:worker/replica:0/task:0/device:CPU:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1/device:CPU:0";
const std::string kWorker0Gpu = "/job:worker/replica:0/task:0/device:GPU:0";
const std::string kPs0Gpu = "/job:ps/replica:0/task:0/device:GPU:0";

PlacementOptions cluster_options(std::vector<std::string> extra_devices = {}) {
  PlacementOptions options;
  options.devices = {kPs0, kPs1, kWorker0, kWorker1};
  options.devices.insert(options.devices.end(), extra_devices.begin(), extra_devices.end());
  options.default_device = DeviceName::parse("/job:worker/replica:0/task:0").value();
  return options;
}

// Places `graph`; the device of every node by name.
std::map<std::string, std::string> place_ok(const Graph& graph, const PlacementOptions& options) {
  auto devices = place(graph, options);
  BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().to_string());
  BOOST_REQUIRE_EQUAL(devices->size(), static_cast<size_t>(graph.num_nodes()));
  std::map<std::string, std::string> by_name;
  for (int id = 0; id < graph.num_nodes(); ++id)
    by_name[graph.node(id).name()] = (*devices)[id];
  return by_name;
}

Output variable(const Scope& scope) {
  return ops::Variable(scope, TensorShape{2}, DataType::kFloat);
}

NodeDef const_node(std::string name, std::string device, std::vector<std::string> colocation = {}) {
  NodeDef node{std::move(name),
               "Const",
               {},
               std::move(device),
               {{"dtype", DataType::kFloat}, {"value", Tensor(1.f)}}};
  if (!colocation.empty()) node.attrs["_class"] = std::move(colocation);
  return node;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(requests_are_completed_from_the_default_task) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s.with_op_name("x"), 1.f);
  ops::Neg(s.with_op_name("neg"), x);
  ops::Const(s.with_device("/job:ps/task:1").with_op_name("ps1"), 1.f);
  ops::Const(s.with_device("/job:ps").with_op_name("any_ps"), 1.f);
  ops::Const(s.with_device("/job:worker/task:1").with_op_name("worker1"), 1.f);
  ops::Const(s.with_device("/device:CPU:0").with_op_name("cpu"), 1.f);
  ops::Const(s.with_device("/task:1").with_op_name("task1"), 1.f);  // no job: default job
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto placed = place_ok(s.graph(), cluster_options());
  BOOST_TEST(placed["x"] == kWorker0);
  BOOST_TEST(placed["neg"] == kWorker0);
  BOOST_TEST(placed["ps1"] == kPs1);
  BOOST_TEST(placed["any_ps"] == kPs0);
  BOOST_TEST(placed["worker1"] == kWorker1);
  BOOST_TEST(placed["cpu"] == kWorker0);
  BOOST_TEST(placed["task1"] == kWorker1);
}

BOOST_AUTO_TEST_CASE(a_gpu_is_preferred_where_the_op_has_a_kernel) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s.with_op_name("a"), {{1.f, 2.f}});
  auto b = ops::Const(s.with_op_name("b"), {{3.f}, {4.f}});
  ops::MatMul(s.with_op_name("m"), a, b);
  ops::MatMul(s.with_device("/cpu:0").with_op_name("m_cpu"), a, b);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  PlacementOptions options = cluster_options({kWorker0Gpu});
  options.has_kernel = [](const std::string& op, const std::string& type) {
    return type == "CPU" || op == "MatMul";
  };
  auto placed = place_ok(s.graph(), options);
  BOOST_TEST(placed["m"] == kWorker0Gpu);
  BOOST_TEST(placed["a"] == kWorker0);
  BOOST_TEST(placed["m_cpu"] == kWorker0);
  // Without a kernel table every device runs everything: the GPU wins for all.
  auto everywhere = place_ok(s.graph(), cluster_options({kWorker0Gpu}));
  BOOST_TEST(everywhere["a"] == kWorker0Gpu);
  BOOST_TEST(everywhere["m_cpu"] == kWorker0);
}

BOOST_AUTO_TEST_CASE(assign_follows_its_variable) {
  Scope s = Scope::new_root();
  auto v = variable(s.with_device("/job:ps/task:1").with_op_name("v"));
  auto value = ops::Const(s.with_op_name("value"), {1.f, 2.f});
  auto assign = ops::Assign(s.with_op_name("assign"), v, value);
  ops::AssignAdd(s.with_op_name("add"), assign, value);
  ops::Identity(s.with_op_name("read"), v);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  BOOST_TEST(assign.node()->requested_device() == "");
  auto placed = place_ok(s.graph(), cluster_options());
  BOOST_TEST(placed["v"] == kPs1);
  BOOST_TEST(placed["assign"] == kPs1);
  BOOST_TEST(placed["add"] == kPs1);  // through the Assign's reference output
  BOOST_TEST(placed["value"] == kWorker0);
  BOOST_TEST(placed["read"] == kWorker0);  // reads by value: not colocated
}

// As TensorFlow's placer ("Ignoring device specification ... because the input edge from 'v'
// is a reference connection"): an update built under another task's device scope (a worker's,
// as replica_device_setter gives it) runs with its variable.
BOOST_AUTO_TEST_CASE(an_assign_requesting_another_task_runs_with_its_variable) {
  Scope s = Scope::new_root();
  auto v = variable(s.with_device("/job:ps/task:1").with_op_name("v"));
  auto assign =
      ops::Assign(s.with_device("/job:worker/task:0").with_op_name("assign"), v, {1.f, 2.f});
  ops::AssignAdd(s.with_device("/job:ps/task:0").with_op_name("add"), assign, {1.f, 1.f});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto placed = place_ok(s.graph(), cluster_options());
  BOOST_TEST(placed["assign"] == kPs1);
  BOOST_TEST(placed["add"] == kPs1);
}

// TensorFlow's allow_soft_placement: the variable decides, and an update built under another
// task's device scope runs with it, even when it comes first in the graph.
BOOST_AUTO_TEST_CASE(soft_placement_puts_an_update_with_its_variable) {
  Scope s = Scope::new_root();
  auto value = ops::Const(s.with_op_name("value"), {1.f, 2.f});
  auto v = variable(s.with_device("/job:ps/task:1").with_op_name("v"));
  ops::AssignAdd(s.with_device("/job:worker/task:1").with_op_name("add"), v, value);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  PlacementOptions soft = cluster_options();
  soft.allow_soft_placement = true;
  auto placed = place_ok(s.graph(), soft);
  BOOST_TEST(placed["v"] == kPs1);
  BOOST_TEST(placed["add"] == kPs1);
  BOOST_TEST(place_ok(s.graph(), cluster_options())["add"] == kPs1);  // without it too
}

BOOST_AUTO_TEST_CASE(soft_placement_runs_a_gpu_request_on_the_tasks_cpu) {
  Scope s = Scope::new_root();
  ops::Const(s.with_device("/job:worker/task:1/device:GPU:0").with_op_name("on_gpu"), 1.f);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  PlacementOptions soft = cluster_options();
  soft.allow_soft_placement = true;
  BOOST_TEST(place_ok(s.graph(), soft)["on_gpu"] == kWorker1);
  check_error(place(s.graph(), cluster_options()).status(), Code::kInvalidArgument,
              "which does not exist");
}

BOOST_AUTO_TEST_CASE(colocate_with_writes_the_class_attribute_and_starts_from_the_ops_device) {
  Scope s = Scope::new_root();
  auto v = variable(s.with_device("/job:ps/task:1").with_op_name("v"));
  Scope with_v = s.with_device("/job:worker/task:0").colocate_with(v.op());
  auto read = ops::Identity(with_v.with_op_name("read"), v);
  const auto* groups = read.node()->def().find_attr("_class");
  BOOST_REQUIRE(groups != nullptr);
  BOOST_TEST(groups->get<std::vector<std::string>>() == (std::vector<std::string>{"loc:@v"}));
  // The outer device is reset; inner device layers fill in what the op's device leaves unset.
  BOOST_TEST(read.node()->requested_device() == "/job:ps/task:1");
  auto cpu = ops::Neg(with_v.with_device("/device:CPU:0").with_op_name("cpu"), read);
  BOOST_TEST(cpu.node()->requested_device() == "/job:ps/task:1/device:CPU:0");
  // Colocating with a colocated op uses its root, as TensorFlow does.
  auto again = ops::Neg(s.colocate_with(read.op()).with_op_name("again"), read);
  BOOST_TEST(again.node()->def().find_attr("_class")->get<std::vector<std::string>>() ==
             (std::vector<std::string>{"loc:@v"}));
  // Nested calls accumulate groups, sorted.
  auto w = variable(s.with_op_name("w"));
  auto both = ops::Neg(s.colocate_with(w.op()).colocate_with(v.op()).with_op_name("both"), read);
  BOOST_TEST(both.node()->def().find_attr("_class")->get<std::vector<std::string>>() ==
             (std::vector<std::string>{"loc:@v", "loc:@w"}));
  BOOST_TEST(s.ok(), s.status().to_string());

  Scope::new_root().colocate_with(Operation());
  Scope t = Scope::new_root();
  t.colocate_with(Operation());
  check_error(t.status(), Code::kInvalidArgument, "Scope::colocate_with");
}

BOOST_AUTO_TEST_CASE(colocation_pulls_a_node_to_the_device_of_another) {
  // The colocated node's request places the op it is colocated with.
  Scope s = Scope::new_root();
  auto a = ops::Const(s.with_op_name("a"), 1.f);
  ops::Neg(s.colocate_with(a.op()).with_device("/job:worker/task:1").with_op_name("b"), a);
  ops::Neg(s.with_op_name("c"), a);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto placed = place_ok(s.graph(), cluster_options());
  BOOST_TEST(placed["a"] == kWorker1);
  BOOST_TEST(placed["b"] == kWorker1);
  BOOST_TEST(placed["c"] == kWorker0);

  // A hand-written _class joins nodes with no edge between them, both ways.
  Graph graph = graph_of({const_node("x", "/job:ps/task:1"), const_node("y", "", {"loc:@x"}),
                          const_node("z", "", {"loc:@w"}), const_node("w", "/job:ps/task:0")});
  auto by_class = place_ok(graph, cluster_options());
  BOOST_TEST(by_class["y"] == kPs1);
  BOOST_TEST(by_class["z"] == kPs0);
}

BOOST_AUTO_TEST_CASE(conflicting_colocation_is_an_error_naming_both_nodes) {
  Graph graph =
      graph_of({const_node("a", "/job:ps/task:0"), const_node("b", "/job:ps/task:1", {"loc:@a"})});
  auto placed = place(graph, cluster_options());
  check_error(placed.status(), Code::kInvalidArgument,
              "node 'b' wants /job:ps/task:1 but is colocated with node 'a' which wants "
              "/job:ps/task:0");
  check_error(placed.status(), Code::kInvalidArgument, "'_class' attribute");

  // Through a third node colocated with both.
  Scope s = Scope::new_root();
  auto a = ops::Const(s.with_device("/job:ps/task:0").with_op_name("a"), 1.f);
  auto b = ops::Const(s.with_device("/job:ps/task:1").with_op_name("b"), 2.f);
  ops::Add(s.colocate_with(a.op()).colocate_with(b.op()).with_op_name("c"), a, b);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto through = place(s.graph(), cluster_options());
  check_error(through.status(), Code::kInvalidArgument,
              "node 'b' wants /job:ps/task:1 but is colocated with node 'a' which wants "
              "/job:ps/task:0");
}

BOOST_AUTO_TEST_CASE(colocation_with_a_node_not_in_the_graph) {
  Graph graph = graph_of({const_node("b", "/job:ps/task:1", {"loc:@ghost"}),
                          const_node("c", "", {"loc:@ghost"}), const_node("d", "")});
  auto placed = place(graph, cluster_options());
  check_error(placed.status(), Code::kInvalidArgument,
              "node 'b' (Const) is colocated with node 'ghost'");
  check_error(placed.status(), Code::kInvalidArgument, "not in the graph");

  PlacementOptions lenient = cluster_options();
  lenient.allow_missing_colocation_targets = true;
  auto by_name = place_ok(graph, lenient);
  BOOST_TEST(by_name["b"] == kPs1);
  BOOST_TEST(by_name["c"] == kPs1);  // with b, through the missing "ghost"
  BOOST_TEST(by_name["d"] == kWorker0);

  NodeDef wrong_kind = const_node("e", "");
  wrong_kind.attrs["_class"] = "loc:@d";
  Graph bad = graph_of({const_node("d", ""), wrong_kind});
  check_error(place(bad, cluster_options()).status(), Code::kInvalidArgument,
              "node 'e' (Const): attribute '_class' is string, expected list(string)");
}

BOOST_AUTO_TEST_CASE(a_device_that_does_not_exist_is_an_error_listing_the_devices) {
  Scope s = Scope::new_root();
  ops::Const(s.with_device("/job:ps/task:7").with_op_name("far"), 1.f);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto placed = place(s.graph(), cluster_options());
  check_error(placed.status(), Code::kInvalidArgument,
              "node 'far' (Const) is placed on device '/job:ps/task:7'");
  check_error(placed.status(), Code::kInvalidArgument,
              "which does not exist; known devices: " + kPs0 + ", " + kPs1 + ", " + kWorker0 +
                  ", " + kWorker1);

  Scope g = Scope::new_root();
  ops::Const(g.with_device("/device:GPU:0").with_op_name("gpu"), 1.f);
  auto no_gpu = place(g.graph(), cluster_options());
  check_error(no_gpu.status(), Code::kInvalidArgument,
              "node 'gpu' (Const) is placed on device '/device:GPU:0', completed from the default "
              "device to '/job:worker/replica:0/task:0/device:GPU:0'");

  // A colocated node that requests nothing is not the one blamed.
  Scope v = Scope::new_root();
  auto var = variable(v.with_device("/job:ps/task:9").with_op_name("var"));
  ops::Assign(v.with_op_name("init"), var, {1.f, 2.f});
  check_error(place(v.graph(), cluster_options()).status(), Code::kInvalidArgument,
              "node 'var' (Variable) is placed on device '/job:ps/task:9' (the request of its "
              "colocation group of 2 nodes)");

  PlacementOptions partial = cluster_options();
  partial.devices.push_back("/job:ps/task:0");
  check_error(place(v.graph(), partial).status(), Code::kInvalidArgument,
              "device '/job:ps/task:0' of the cluster is not a full device name");
}

BOOST_AUTO_TEST_CASE(kernels_are_required_for_every_member_of_a_group) {
  Scope s = Scope::new_root();
  auto v = variable(s.with_device("/job:ps/task:0").with_op_name("v"));
  auto lone = variable(s.with_device("/job:ps/task:0").with_op_name("lone"));
  ops::Assign(s.with_op_name("init"), v, {1.f, 2.f});
  ops::Neg(s.with_op_name("neg"), lone);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  PlacementOptions options = cluster_options({kPs0Gpu});
  options.has_kernel = [](const std::string& op, const std::string& type) {
    return type == "CPU" || op == "Variable";
  };
  auto placed = place_ok(s.graph(), options);
  BOOST_TEST(placed["lone"] == kPs0Gpu);
  BOOST_TEST(placed["v"] == kPs0);  // Assign has no GPU kernel
  BOOST_TEST(placed["init"] == kPs0);

  options.has_kernel = [](const std::string& op, const std::string&) { return op != "Neg"; };
  check_error(place(s.graph(), options).status(), Code::kInvalidArgument,
              "node 'neg': op 'Neg' has no kernel on any device matching "
              "'/job:worker/replica:0/task:0'");

  // Each op has a kernel somewhere, but not on one device.
  options.has_kernel = [](const std::string& op, const std::string& type) {
    return op == "Variable" ? type == "GPU" : type == "CPU";
  };
  check_error(place(s.graph(), options).status(), Code::kInvalidArgument,
              "nodes 'v' (Variable), 'init' (Assign) are colocated, but no device matching "
              "'/job:ps/task:0' has a kernel for each of their ops");
}

BOOST_AUTO_TEST_CASE(arg_and_retval_follow_their_consumer_and_producer) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s.with_device("/job:ps/task:0").with_op_name("x"), DataType::kFloat);
  ops::Neg(s.with_device("/job:worker/task:1").with_op_name("n"), x);
  ops::Const(s.with_device("/job:ps/task:1").with_op_name("c"), 1.f);
  ops::Placeholder(s.with_device("/job:ps/task:1").with_op_name("unused"), DataType::kFloat);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  RunSignature signature;
  signature.feeds = {"x:0", "unused:0"};
  signature.fetches = {"n:0", "c:0"};
  auto rewritten = rewrite_for_run(s.graph(), signature);
  BOOST_REQUIRE_MESSAGE(rewritten.ok(), rewritten.status().to_string());
  auto run_graph = Graph::create(*rewritten);
  BOOST_REQUIRE_MESSAGE(run_graph.ok(), run_graph.status().to_string());
  auto placed = place_ok(*run_graph, cluster_options());
  BOOST_TEST(placed[arg_node_name(0)] == kWorker1);  // its consumer 'n'; its own request ignored
  BOOST_TEST(placed[arg_node_name(1)] == kPs1);      // no consumer: its own request
  BOOST_TEST(placed[retval_node_name(0)] == kWorker1);
  BOOST_TEST(placed[retval_node_name(1)] == kPs1);
  BOOST_TEST(placed["n"] == kWorker1);
  BOOST_TEST(placed["c"] == kPs1);
}

BOOST_AUTO_TEST_CASE(replica_device_setter_with_colocated_updates) {
  auto cluster = value_or_throw(
      ClusterSpec::create({{"ps", {"ps0:1", "ps1:1"}}, {"worker", {"w0:1", "w1:1"}}}));
  Scope root = Scope::new_root();
  Scope s = root.with_device_function(replica_device_setter(cluster, "/job:worker/task:1").value());
  auto v = variable(s.with_op_name("v"));
  auto w = variable(s.with_op_name("w"));
  auto grad = ops::Const(s.with_op_name("grad"), {1.f, 1.f});
  ops::AssignAdd(s.colocate_with(v.op()).with_op_name("update_v"), v, grad);
  ops::AssignAdd(s.colocate_with(w.op()).with_op_name("update_w"), w, grad);
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  auto placed = place_ok(root.graph(), cluster_options());
  BOOST_TEST(placed["v"] == kPs0);
  BOOST_TEST(placed["update_v"] == kPs0);
  BOOST_TEST(placed["w"] == kPs1);
  BOOST_TEST(placed["update_w"] == kPs1);
  BOOST_TEST(placed["grad"] == kWorker1);

  // Built in the setter's scope, the update asks for the worker; as TensorFlow's placer, it
  // runs with its variable (a reference connection decides).
  ops::AssignAdd(s.with_op_name("stray"), v, grad);
  BOOST_TEST(place_ok(root.graph(), cluster_options())["stray"] == kPs0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
