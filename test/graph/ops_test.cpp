// Tests for building graphs: Graph::create's checks on hand-written GraphDefs, the builder API's
// errors, Scope naming, control dependencies and devices, literal conversion, and the GraphDef
// wire round trip.
#include <set>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/graph/graph_def_codec.hpp"
#include "troupe/graph/op_registry.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {
using testing::check_error;

NodeDef const_node(std::string name, float value) {
  return NodeDef{
      std::move(name), "Const", {}, "", {{"dtype", DataType::kFloat}, {"value", Tensor(value)}}};
}

NodeDef identity_node(std::string name, std::string input) {
  return NodeDef{std::move(name), "Identity", {std::move(input)}, "", {{"T", DataType::kFloat}}};
}

const NodeDef& def_of(const Output& output) {
  return output.node()->def();
}

// The node feeding input `i` of `output`'s node.
const Node& input_node(const Scope& scope, const Output& output, int i) {
  return scope.graph().node(output.node()->inputs()[i].node);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(graph_building)

BOOST_AUTO_TEST_CASE(graph_def_in_any_order_is_sorted_topologically) {
  GraphDef def;
  def.nodes.push_back(identity_node("b", "a"));
  def.nodes.push_back(identity_node("c", "b"));
  def.nodes.push_back(const_node("a", 1.f));
  auto graph = Graph::create(def);
  BOOST_REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  BOOST_TEST_REQUIRE(graph->num_nodes() == 3);
  BOOST_TEST(graph->node(0).name() == "a");
  BOOST_TEST(graph->node(1).name() == "b");
  BOOST_TEST(graph->node(2).name() == "c");
  BOOST_TEST(graph->find("c")->inputs()[0].node == graph->find("b")->id());
}

// A literal that cannot be a value is the op's error in its Scope, as any bad argument is.
BOOST_AUTO_TEST_CASE(ragged_initializer_rows_fail_the_op) {
  Scope root = Scope::new_root();
  auto c = ops::Const(root, {{1.f, 2.f}, {3.f}});
  BOOST_TEST(!c.valid());
  check_error(root.status(), Code::kInvalidArgument, "rows have different lengths (2 and 1)");
  Scope other = Scope::new_root();
  auto x = ops::Placeholder(other, DataType::kFloat);
  auto sum = ops::Add(other, x, {{1.f}, {2.f, 3.f}});
  BOOST_TEST(!sum.valid());
  check_error(other.status(), Code::kInvalidArgument, "rows have different lengths (1 and 2)");
}

// A malformed spec of a user's op is build()'s error (the first one), not an exception.
BOOST_AUTO_TEST_CASE(a_malformed_op_spec_is_invalid_argument) {
  OpRegistry registry;
  OpDefBuilder bad("MyOp");
  bad.input("x: float").input("no colon").attr("T: kind_of_nothing");
  bad.shape_fn([](InferenceContext&) { return Status::OK(); });
  check_error(registry.register_op(bad), Code::kInvalidArgument,
              "op 'MyOp': bad spec 'no colon': expected 'name: ...'");
  OpDefBuilder good("MyOp");
  good.input("x: float").output("y: float").shape_fn([](InferenceContext&) {
    return Status::OK();
  });
  BOOST_TEST(registry.register_op(good).ok());
}

BOOST_AUTO_TEST_CASE(unknown_op) {
  GraphDef def;
  def.nodes.push_back(NodeDef{"mystery", "NoSuchOp", {}, "", {}});
  auto graph = Graph::create(def);
  check_error(graph.status(), Code::kInvalidArgument, "node 'mystery'");
  check_error(graph.status(), Code::kInvalidArgument, "unknown op 'NoSuchOp'");

  Scope s = Scope::new_root();
  NodeBuilder(s.with_op_name("built"), "NoSuchOp").finalize();
  check_error(s.status(), Code::kInvalidArgument, "node 'built': unknown op 'NoSuchOp'");
}

BOOST_AUTO_TEST_CASE(missing_input_node_or_output) {
  GraphDef def;
  def.nodes.push_back(identity_node("id", "ghost"));
  auto missing = Graph::create(def);
  check_error(missing.status(), Code::kInvalidArgument, "node 'id' (Identity)");
  check_error(missing.status(), Code::kInvalidArgument,
              "input 'ghost' names a node that does not exist");

  GraphDef bad_index;
  bad_index.nodes.push_back(const_node("c", 1.f));
  bad_index.nodes.push_back(identity_node("id", "c:3"));
  auto no_output = Graph::create(bad_index);
  check_error(no_output.status(), Code::kInvalidArgument, "node 'id' (Identity)");
  check_error(no_output.status(), Code::kInvalidArgument, "asks for output 3 of 'c', which has 1");
}

BOOST_AUTO_TEST_CASE(dtype_mismatch) {
  Scope s = Scope::new_root();
  auto f = ops::Const(s, 1.f);
  auto i = ops::Const(s, 2);
  auto sum = ops::Add(s.with_op_name("mixed"), f, i);
  BOOST_TEST(!sum.valid());
  check_error(s.status(), Code::kInvalidArgument, "node 'mixed' (Add)");
  check_error(s.status(), Code::kInvalidArgument, "is int32, expected float32");

  GraphDef def;
  def.nodes.push_back(const_node("c", 1.f));
  def.nodes.push_back(NodeDef{"n", "Neg", {"c"}, "", {{"T", DataType::kInt32}}});
  auto graph = Graph::create(def);
  check_error(graph.status(), Code::kInvalidArgument,
              "node 'n' (Neg): input 0 ('c') is float32, "
              "expected int32");
}

BOOST_AUTO_TEST_CASE(wrong_number_of_inputs) {
  GraphDef def;
  def.nodes.push_back(const_node("c", 1.f));
  def.nodes.push_back(NodeDef{"add", "Add", {"c"}, "", {{"T", DataType::kFloat}}});
  auto graph = Graph::create(def);
  check_error(graph.status(), Code::kInvalidArgument,
              "node 'add' (Add): has 1 data inputs, Add expects 2");

  Scope s = Scope::new_root();
  NodeBuilder(s.with_op_name("lonely"), "Add").input(ops::Const(s, 1.f)).finalize();
  check_error(s.status(), Code::kInvalidArgument,
              "node 'lonely' (Add): given 1 arguments, Add expects 2");
}

BOOST_AUTO_TEST_CASE(bad_attributes) {
  GraphDef kind;
  kind.nodes.push_back(const_node("c", 1.f));
  kind.nodes.push_back(
      NodeDef{"mm", "MatMul", {"c", "c"}, "", {{"T", DataType::kFloat}, {"transpose_a", 1}}});
  check_error(Graph::create(kind).status(), Code::kInvalidArgument,
              "node 'mm' (MatMul): attribute 'transpose_a' is int, expected bool");

  GraphDef missing;
  missing.nodes.push_back(NodeDef{"c", "Const", {}, "", {{"dtype", DataType::kFloat}}});
  check_error(Graph::create(missing).status(), Code::kInvalidArgument,
              "node 'c' (Const): missing attribute 'value' of kind tensor");

  Scope s = Scope::new_root();
  ops::Neg(s.with_op_name("bool_neg"), true);
  check_error(s.status(), Code::kInvalidArgument,
              "node 'bool_neg' (Neg): attribute 'T' is bool, which Neg does not support");
}

BOOST_AUTO_TEST_CASE(unknown_attribute) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, 1.f);
  NodeBuilder(s.with_op_name("neg"), "Neg").input(x).attr("bogus", 1).finalize();
  check_error(s.status(), Code::kInvalidArgument,
              "node 'neg' (Neg): has attribute 'bogus', which Neg does not declare");

  // Internal attributes (starting with '_') are allowed on any node.
  Scope t = Scope::new_root();
  Output y = NodeBuilder(t, "Neg").input(ops::Const(t, 1.f)).attr("_color", "red").finalize();
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  BOOST_TEST(def_of(y).find_attr("_color")->get<std::string>() == "red");
}

BOOST_AUTO_TEST_CASE(cycle) {
  GraphDef def;
  def.nodes.push_back(const_node("c", 1.f));
  def.nodes.push_back(identity_node("a", "b"));
  def.nodes.push_back(identity_node("b", "a"));
  def.nodes.push_back(identity_node("d", "c"));
  auto graph = Graph::create(def);
  check_error(graph.status(), Code::kInvalidArgument, "is part of a cycle");
  const std::string& message = graph.status().message();
  BOOST_TEST((message.starts_with("node 'a'") || message.starts_with("node 'b'")), message);

  GraphDef self_loop;
  self_loop.nodes.push_back(identity_node("me", "me"));
  check_error(Graph::create(self_loop).status(), Code::kInvalidArgument,
              "node 'me' (Identity) is part of a cycle");
}

BOOST_AUTO_TEST_CASE(duplicate_node_names) {
  GraphDef def;
  def.nodes.push_back(const_node("x", 1.f));
  def.nodes.push_back(const_node("x", 2.f));
  check_error(Graph::create(def).status(), Code::kInvalidArgument,
              "node 'x': a node of that name already exists");

  Graph graph;
  BOOST_REQUIRE(graph.add_node(const_node("x", 1.f)).ok());
  check_error(graph.add_node(const_node("x", 2.f)).status(), Code::kInvalidArgument,
              "a node of that name already exists");
}

BOOST_AUTO_TEST_CASE(control_input_before_data_input) {
  GraphDef def;
  def.nodes.push_back(const_node("c", 1.f));
  def.nodes.push_back(NodeDef{"id", "Identity", {"^c", "c"}, "", {{"T", DataType::kFloat}}});
  check_error(Graph::create(def).status(), Code::kInvalidArgument,
              "node 'id' (Identity): data input 'c' comes after a control input");
}

BOOST_AUTO_TEST_CASE(scope_names_are_unique_and_prefixed) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto a1 = ops::Add(s, x, x);
  auto a2 = ops::Add(s, x, x);
  BOOST_TEST(x.node()->name() == "Placeholder");
  BOOST_TEST(a1.node()->name() == "Add");
  BOOST_TEST(a2.node()->name() == "Add_1");
  BOOST_TEST(a2.name() == "Add_1:0");

  Scope layer = s.sub_scope("layer");
  auto l1 = ops::Add(layer, x, x);
  auto literal = ops::Mul(layer, x, 3.f);
  BOOST_TEST(l1.node()->name() == "layer/Add");
  BOOST_TEST(literal.node()->name() == "layer/Mul");
  BOOST_TEST(input_node(s, literal, 1).name() == "layer/Const");
  auto inner = ops::Neg(layer.sub_scope("inner"), x);
  BOOST_TEST(inner.node()->name() == "layer/inner/Neg");
  auto again = ops::Add(s.sub_scope("layer"), x, x);
  BOOST_TEST(again.node()->name() == "layer_1/Add");

  auto named = ops::Sum(s.with_op_name("total"), x, 0);
  auto named_again = ops::Sum(s.with_op_name("total"), x, 0);
  BOOST_TEST(named.node()->name() == "total");
  BOOST_TEST(named_again.node()->name() == "total_1");
  // The axis literals became Const nodes of their own, uniquely named.
  BOOST_TEST(input_node(s, named, 1).name() == "Const");
  BOOST_TEST(input_node(s, named_again, 1).name() == "Const_1");
  BOOST_TEST(s.ok());
}

BOOST_AUTO_TEST_CASE(control_dependencies_and_devices_reach_the_node_def) {
  Scope s = Scope::new_root();
  auto first = ops::NoOp(s.with_op_name("first"));
  auto second = ops::NoOp(s.with_op_name("second"));
  auto x = ops::Placeholder(s, DataType::kFloat);
  Scope placed = s.with_device("/job:ps/task:0").with_control_dependencies({first});
  auto y = ops::Neg(placed.with_control_dependencies({second}), x);
  BOOST_REQUIRE(s.ok());
  const NodeDef& def = def_of(y);
  BOOST_TEST(def.device == "/job:ps/task:0");
  BOOST_TEST(def.inputs == (std::vector<std::string>{"Placeholder:0", "^first", "^second"}));
  BOOST_TEST(y.node()->control_inputs().size() == 2u);
  BOOST_TEST(y.node()->requested_device() == "/job:ps/task:0");
  BOOST_TEST(def_of(x).device.empty());
  BOOST_TEST(x.node()->control_inputs().empty());
}

BOOST_AUTO_TEST_CASE(literals_take_the_dtype_of_the_other_inputs) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  auto y = ops::Mul(s, x, 2);
  BOOST_REQUIRE(s.ok());
  const Node& two = input_node(s, y, 1);
  BOOST_TEST(two.op_name() == "Const");
  BOOST_TEST(dtype_name(two.output_type(0)) == "float32");
  BOOST_TEST(two.def().find_attr("value")->get<Tensor>().scalar<float>() == 2.f);
  BOOST_TEST(dtype_name(y.dtype()) == "float32");

  auto d = ops::Placeholder(s, DataType::kDouble);
  auto z = ops::Add(s, 1, d);  // the literal comes first; d still decides
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(dtype_name(input_node(s, z, 0).output_type(0)) == "float64");

  ops::Add(s.with_op_name("text"), x, "seven");
  check_error(s.status(), Code::kInvalidArgument, "cannot convert a string tensor to float32");
}

BOOST_AUTO_TEST_CASE(a_failed_builder_call_makes_later_ones_no_ops) {
  Scope s = Scope::new_root();
  ops::MatMul(s.with_op_name("first_error"), {{1.f, 2.f}}, {{1.f, 2.f}});
  auto later = ops::Const(s, 1.f);
  BOOST_TEST(!later.valid());
  check_error(s.status(), Code::kInvalidArgument, "node 'first_error' (MatMul)");
}

BOOST_AUTO_TEST_CASE(graph_def_round_trips_through_the_wire_with_every_attr_kind) {
  Scope s = Scope::new_root();
  auto m = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  ops::Const(s, Tensor::from_vector<std::string>({"a", "bc"}));
  auto p = ops::Placeholder(s.with_device("/job:worker/task:1"), DataType::kFloat,
                            PartialShape({-1, 2}));
  ops::Sum(s, ops::MatMul(s.with_control_dependencies({m.op()}), p, m, {.transpose_b = true}), 0,
           {.keep_dims = true});
  ops::Variable(s, TensorShape{2}, DataType::kInt64, {.container = "box", .shared_name = "v"});
  NodeBuilder(s.with_op_name("everything"), "NoOp")
      .attr("_none", AttrValue())
      .attr("_i", int64_t{-7})
      .attr("_f", 2.5f)
      .attr("_b", true)
      .attr("_s", "text")
      .attr("_type", DataType::kBool)
      .attr("_shape", PartialShape::unknown())
      .attr("_tensor", value_or_throw(Tensor::from_vector<int64_t>({1, 2, 3}, {3, 1})))
      .attr("_list_i", std::vector<int64_t>{1, -2})
      .attr("_list_f", std::vector<float>{0.5f})
      .attr("_list_b", std::vector<bool>{true, false})
      .attr("_list_s", std::vector<std::string>{"x", ""})
      .attr("_list_type", std::vector<DataType>{DataType::kInt32, DataType::kString})
      .attr("_list_shape", std::vector<PartialShape>{PartialShape({3, -1}), PartialShape::scalar()})
      .finalize();
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());

  GraphDef original = s.graph().to_graph_def();
  kj::Array<capnp::word> wire = serialize_graph_def(original);
  auto parsed = parse_graph_def(wire.asPtr());
  BOOST_REQUIRE_MESSAGE(parsed.ok(), parsed.status().to_string());
  BOOST_TEST(parsed->version == original.version);
  BOOST_TEST_REQUIRE(parsed->nodes.size() == original.nodes.size());
  std::set<AttrType> kinds;
  for (size_t i = 0; i < original.nodes.size(); ++i) {
    const NodeDef& a = original.nodes[i];
    const NodeDef& b = parsed->nodes[i];
    BOOST_TEST(a.name == b.name);
    BOOST_TEST(a.op == b.op);
    BOOST_TEST(a.inputs == b.inputs);
    BOOST_TEST(a.device == b.device);
    BOOST_TEST_REQUIRE(a.attrs.size() == b.attrs.size(), a.name);
    for (const auto& [key, value] : a.attrs) {
      kinds.insert(value.type());
      const AttrValue* other = b.find_attr(key);
      BOOST_TEST_REQUIRE(other != nullptr, a.name << " lost " << key);
      BOOST_TEST((*other == value), a.name << "." << key << ": " << value.to_string() << " became "
                                           << other->to_string());
    }
  }
  BOOST_TEST(kinds.size() == 14u);  // every AttrType, kNone included
  BOOST_TEST(parsed->nodes.back().find_attr("_tensor")->get<Tensor>().debug_string() ==
             "int64 [3,1] [[1], [2], [3]]");

  // What came back is a valid graph again, with the same shapes.
  auto rebuilt = Graph::create(*parsed);
  BOOST_REQUIRE_MESSAGE(rebuilt.ok(), rebuilt.status().to_string());
  BOOST_TEST(rebuilt->find("Sum")->output_shape(0).to_string() == "[1,2]");
  BOOST_TEST(rebuilt->find("Placeholder")->requested_device() == "/job:worker/task:1");
}

// A shape written as a list of constant scalars (TensorFlow's tf.fill([batch], 0) with batch a
// constant) is known while building, as TensorFlow's shape inference evaluates such a Pack; one
// scalar that is not constant leaves the shape unknown.
BOOST_AUTO_TEST_CASE(a_shape_packed_from_constant_scalars_is_known_while_building) {
  Scope root = Scope::new_root();
  Output batch = ops::Const(root, int32_t{5});
  Output packed = ops::Pack(root, {batch, ops::Const(root, int32_t{2})});
  BOOST_REQUIRE(packed.node()->known_value() != nullptr);
  BOOST_TEST(packed.node()->known_value()->debug_string() == "int32 [2] [5, 2]");
  BOOST_TEST(ops::Fill(root, packed, 1.f).shape().to_string() == "[5,2]");
  Output fed = ops::Placeholder(root, DataType::kInt32, PartialShape::scalar());
  Output partly = ops::Pack(root, {batch, fed});
  BOOST_TEST(partly.node()->known_value() == nullptr);
  BOOST_TEST(ops::Fill(root, partly, 1.f).shape().to_string() == "[?,?]");
  BOOST_TEST_REQUIRE(root.status().ok(), root.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
