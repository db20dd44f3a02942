// Tests for partitioning: one _Send/_Recv pair per (tensor, destination device), edges inside a
// device left alone, control edges across devices carried by a constant, _Arg/_Retval
// renumbered per partition, a reference edge across devices refused, and every partition a
// graph that checks on its own.
#include <map>

#include <boost/test/unit_test.hpp>

#include "graph/graph_of.hpp"
#include "status_checks.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/partition.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::graph_of;

const std::string kPs = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kWorker0 = "/job:worker/replica:0/task:0/device:CPU:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1/device:CPU:0";

// The device of every node of `graph`, from `by_name`; nodes not named go to `fallback`.
std::vector<std::string> devices_of(const Graph& graph,
                                    const std::map<std::string, std::string>& by_name,
                                    const std::string& fallback = kWorker0) {
  std::vector<std::string> devices;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    auto it = by_name.find(graph.node(id).name());
    devices.push_back(it != by_name.end() ? it->second : fallback);
  }
  return devices;
}

// The partitions of `graph` by device; each must check as a graph of its own.
std::map<std::string, Partition> partition_ok(const Graph& graph,
                                              const std::vector<std::string>& devices) {
  auto partitions = partition_by_device(graph, devices);
  BOOST_REQUIRE_MESSAGE(partitions.ok(), partitions.status().to_string());
  std::map<std::string, Partition> by_device;
  for (Partition& p : *partitions) {
    auto checked = Graph::create(p.graph);
    BOOST_TEST_REQUIRE(checked.ok(), p.device << ": " << checked.status().to_string());
    for (const NodeDef& node : p.graph.nodes)
      BOOST_TEST(node.device == p.device, node.name << " is on " << node.device);
    BOOST_TEST_REQUIRE(by_device.count(p.device) == 0, "two partitions for " << p.device);
    by_device.emplace(p.device, std::move(p));
  }
  return by_device;
}

std::vector<const NodeDef*> nodes_of_op(const Partition& p, const std::string& op) {
  std::vector<const NodeDef*> found;
  for (const NodeDef& node : p.graph.nodes)
    if (node.op == op) found.push_back(&node);
  return found;
}

const NodeDef& node_named(const Partition& p, const std::string& name) {
  for (const NodeDef& node : p.graph.nodes)
    if (node.name == name) return node;
  BOOST_FAIL("no node '" << name << "' on " << p.device);
  throw std::logic_error("unreachable");
}

std::string string_attr(const NodeDef& node, const std::string& key) {
  const AttrValue* value = node.find_attr(key);
  BOOST_TEST_REQUIRE(value != nullptr, node.name << " has no attribute " << key);
  return value->get<std::string>();
}

int64_t int_attr(const NodeDef& node, const std::string& key) {
  const AttrValue* value = node.find_attr(key);
  BOOST_TEST_REQUIRE(value != nullptr, node.name << " has no attribute " << key);
  return value->get<int64_t>();
}

NodeDef arg(int index, const std::string& name) {
  return NodeDef{name, "_Arg", {}, "", {{"T", DataType::kFloat}, {"index", int64_t{index}}}};
}

NodeDef retval(int index, const std::string& name, const std::string& input) {
  return NodeDef{
      name, "_Retval", {input}, "", {{"T", DataType::kFloat}, {"index", int64_t{index}}}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partition)

BOOST_AUTO_TEST_CASE(one_graph_on_one_device_is_left_whole) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s.with_op_name("x"), 1.f);
  ops::Neg(s.with_op_name("neg"), x);
  auto parts = partition_ok(s.graph(), devices_of(s.graph(), {}));
  BOOST_TEST_REQUIRE(parts.size() == 1u);
  const Partition& p = parts.at(kWorker0);
  BOOST_TEST(p.graph.nodes.size() == 2u);
  BOOST_TEST(node_named(p, "neg").inputs == std::vector<std::string>{"x"});
}

BOOST_AUTO_TEST_CASE(one_pair_per_tensor_and_destination_device) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s.with_op_name("x"), 1.f);
  auto y = ops::Const(s.with_op_name("y"), 2.f);
  ops::Neg(s.with_op_name("a"), x);     // worker 0
  ops::Add(s.with_op_name("b"), x, y);  // worker 0: x is received once for a and b
  ops::Neg(s.with_op_name("c"), x);     // worker 1: its own pair
  auto graph_devices = devices_of(s.graph(), {{"x", kPs}, {"y", kPs}, {"c", kWorker1}}, kWorker0);
  auto parts = partition_ok(s.graph(), graph_devices);
  BOOST_TEST_REQUIRE(parts.size() == 3u);

  const Partition& ps = parts.at(kPs);
  auto sends = nodes_of_op(ps, "_Send");
  BOOST_TEST_REQUIRE(sends.size() == 3u);        // x to worker 0, y to worker 0, x to worker 1
  std::multimap<std::string, std::string> sent;  // tensor -> destination
  for (const NodeDef* send : sends) {
    BOOST_TEST(string_attr(*send, "send_device") == kPs);
    sent.emplace(string_attr(*send, "tensor_name"), string_attr(*send, "recv_device"));
  }
  BOOST_TEST(sent.count("x:0") == 2u);
  BOOST_TEST(sent.count("y:0") == 1u);

  const Partition& w0 = parts.at(kWorker0);
  auto recvs = nodes_of_op(w0, "_Recv");
  BOOST_TEST_REQUIRE(recvs.size() == 2u);
  const NodeDef& a = node_named(w0, "a");
  const NodeDef& b = node_named(w0, "b");
  BOOST_TEST_REQUIRE(a.inputs.size() == 1u);
  BOOST_TEST_REQUIRE(b.inputs.size() == 2u);
  BOOST_TEST(a.inputs[0] == b.inputs[0]);  // one _Recv of x feeds both consumers
  const NodeDef& recv_x = node_named(w0, a.inputs[0]);
  BOOST_TEST(recv_x.op == "_Recv");
  BOOST_TEST(string_attr(recv_x, "tensor_name") == "x:0");
  BOOST_TEST(string_attr(recv_x, "send_device") == kPs);
  BOOST_TEST(string_attr(recv_x, "recv_device") == kWorker0);
  const NodeDef& recv_y = node_named(w0, b.inputs[1]);
  BOOST_TEST(string_attr(recv_y, "tensor_name") == "y:0");

  const Partition& w1 = parts.at(kWorker1);
  BOOST_TEST(nodes_of_op(w1, "_Recv").size() == 1u);
  BOOST_TEST(string_attr(node_named(w1, node_named(w1, "c").inputs[0]), "recv_device") == kWorker1);
  // Each _Send's key matches the _Recv that waits for it.
  for (const NodeDef* send : sends) {
    const Partition& dst = parts.at(string_attr(*send, "recv_device"));
    int matches = 0;
    for (const NodeDef* recv : nodes_of_op(dst, "_Recv"))
      matches += string_attr(*recv, "tensor_name") == string_attr(*send, "tensor_name");
    BOOST_TEST(matches == 1, send->name << " has " << matches << " matching _Recv");
  }
}

BOOST_AUTO_TEST_CASE(a_control_edge_across_devices_is_carried_by_a_constant) {
  Scope s = Scope::new_root();
  auto first = ops::NoOp(s.with_op_name("first"));
  auto after = s.with_control_dependencies({first});
  ops::Const(after.with_op_name("then_a"), 1.f);
  ops::Const(after.with_op_name("then_b"), 2.f);
  ops::Const(after.with_op_name("local"), 3.f);
  auto parts =
      partition_ok(s.graph(), devices_of(s.graph(), {{"first", kPs}, {"local", kPs}}, kWorker0));
  BOOST_TEST_REQUIRE(parts.size() == 2u);

  const Partition& ps = parts.at(kPs);
  BOOST_TEST(node_named(ps, "local").inputs == std::vector<std::string>{"^first"});
  auto sends = nodes_of_op(ps, "_Send");
  BOOST_TEST_REQUIRE(sends.size() == 1u);  // one pair for both consumers on worker 0
  const NodeDef& trigger = node_named(ps, sends[0]->inputs.at(0));
  BOOST_TEST(trigger.op == "Const");
  BOOST_TEST(trigger.inputs == std::vector<std::string>{"^first"});

  const Partition& w0 = parts.at(kWorker0);
  auto recvs = nodes_of_op(w0, "_Recv");
  BOOST_TEST_REQUIRE(recvs.size() == 1u);
  BOOST_TEST(string_attr(*recvs[0], "tensor_name") == string_attr(*sends[0], "tensor_name"));
  std::vector<std::string> control{"^" + recvs[0]->name};
  BOOST_TEST(node_named(w0, "then_a").inputs == control);
  BOOST_TEST(node_named(w0, "then_b").inputs == control);
}

BOOST_AUTO_TEST_CASE(args_and_retvals_are_renumbered_per_partition) {
  Graph graph = graph_of({
      arg(0, "arg0"),
      arg(1, "arg1"),
      arg(2, "arg2"),
      NodeDef{"n0", "Neg", {"arg0"}, "", {{"T", DataType::kFloat}}},
      NodeDef{"n1", "Neg", {"arg1"}, "", {{"T", DataType::kFloat}}},
      NodeDef{"n2", "Neg", {"arg2"}, "", {{"T", DataType::kFloat}}},
      retval(0, "ret0", "n2"),
      retval(1, "ret1", "n1"),
      retval(2, "ret2", "n0"),
  });
  auto parts = partition_ok(graph, devices_of(graph,
                                              {{"arg1", kPs},
                                               {"n1", kPs},
                                               {"ret1", kPs},
                                               {"arg2", kWorker1},
                                               {"n2", kWorker1},
                                               {"ret0", kWorker1}},
                                              kWorker0));
  BOOST_TEST_REQUIRE(parts.size() == 3u);
  // Worker 0 holds feed 0 and fetch 2; ps holds feed 1 and fetch 1; worker 1 feed 2, fetch 0.
  BOOST_TEST(parts.at(kWorker0).feed_of_arg == std::vector<int>{0});
  BOOST_TEST(parts.at(kWorker0).fetch_of_ret == std::vector<int>{2});
  BOOST_TEST(parts.at(kPs).feed_of_arg == std::vector<int>{1});
  BOOST_TEST(parts.at(kPs).fetch_of_ret == std::vector<int>{1});
  BOOST_TEST(parts.at(kWorker1).feed_of_arg == std::vector<int>{2});
  BOOST_TEST(parts.at(kWorker1).fetch_of_ret == std::vector<int>{0});
  for (const auto& [device, p] : parts) {
    int next = 0;
    for (const NodeDef* node : nodes_of_op(p, "_Arg"))
      BOOST_TEST(int_attr(*node, "index") == next++, device << ": " << node->name);
    next = 0;
    for (const NodeDef* node : nodes_of_op(p, "_Retval"))
      BOOST_TEST(int_attr(*node, "index") == next++, device << ": " << node->name);
  }
}

BOOST_AUTO_TEST_CASE(two_args_on_one_device_keep_the_runs_order) {
  Graph graph = graph_of({arg(0, "a"), arg(1, "b"), arg(2, "c"), retval(0, "r", "c"),
                          NodeDef{"sum", "Add", {"a", "b"}, "", {{"T", DataType::kFloat}}},
                          retval(1, "s", "sum")});
  auto parts =
      partition_ok(graph, devices_of(graph, {{"b", kPs}, {"c", kPs}, {"r", kPs}}, kWorker0));
  BOOST_TEST(parts.at(kPs).feed_of_arg == (std::vector<int>{1, 2}));
  BOOST_TEST(parts.at(kPs).fetch_of_ret == std::vector<int>{0});
  BOOST_TEST(parts.at(kWorker0).feed_of_arg == std::vector<int>{0});
  BOOST_TEST(parts.at(kWorker0).fetch_of_ret == std::vector<int>{1});
  // b is fed on the ps and consumed on worker 0: its value crosses with a pair.
  BOOST_TEST(nodes_of_op(parts.at(kPs), "_Send").size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_reference_edge_across_devices_is_internal_naming_both_nodes) {
  Scope s = Scope::new_root();
  auto v = ops::Variable(s.with_op_name("v"), TensorShape{2}, DataType::kFloat);
  ops::Assign(s.with_op_name("assign"), v, ops::Const(s.with_op_name("init"), {1.f, 2.f}));
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto parts = partition_by_device(s.graph(), devices_of(s.graph(), {{"v", kPs}}, kWorker0));
  BOOST_TEST_REQUIRE(!parts.ok());
  check_error(parts.status(), Code::kInternal, "'assign' takes a reference from 'v'");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
