// Tests for building gradient graphs (add_gradients and GradientRegistry) without running them:
// node names, which xs get no gradient (invalid Output), control inputs, non-differentiable ops,
// the error for an op without a gradient, argument errors, and the registry's own API. Numeric
// checks are in test/devices/gradients_test.cpp.
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/graph/gradients.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {
using testing::check_error;

// An op with a float output and no gradient entry, registered once in the global op registry.
const char* no_gradient_op() {
  static const bool registered = [] {
    throw_if_error(OpRegistry::global().register_op(OpDefBuilder("GradientsTestNoGradient")
                                                        .input("x: float64")
                                                        .output("y: float64")
                                                        .shape_fn([](InferenceContext& c) {
                                                          c.set_output(0, c.input(0));
                                                          return Status::OK();
                                                        })));
    return true;
  }();
  (void)registered;
  return "GradientsTestNoGradient";
}

bool has_node(const Scope& s, std::string_view name) {
  return s.graph().find(name) != nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gradients_building)

BOOST_AUTO_TEST_CASE(gradient_nodes_are_named_after_the_node_they_differentiate) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat, PartialShape({2, 3}));
  auto w = ops::Placeholder(root.with_op_name("w"), DataType::kFloat, PartialShape({3, 4}));
  auto y = ops::MatMul(root, x, w);
  auto loss = ops::Sum(root, y, {0, 1});
  auto grads = add_gradients(root, {loss}, {x, w});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  BOOST_TEST_REQUIRE(grads->size() == 2u);
  BOOST_TEST(grads->at(0).node()->name() == "gradients/MatMul_grad/MatMul");
  BOOST_TEST(grads->at(1).node()->name() == "gradients/MatMul_grad/MatMul_1");
  BOOST_TEST(has_node(root, "gradients/OnesLike"));
  BOOST_TEST(has_node(root, "gradients/Sum_grad/BroadcastTo"));
  // Shapes are inferred through the gradient graph.
  BOOST_TEST(grads->at(0).shape().to_string() == "[2,3]");
  BOOST_TEST(grads->at(1).shape().to_string() == "[3,4]");
  BOOST_TEST(dtype_name(grads->at(0).dtype()) == "float32");

  // A second call builds under a new, unique scope; a scope's prefix carries over.
  auto again = add_gradients(root.sub_scope("train"), {loss}, {w});
  BOOST_REQUIRE(again.ok());
  BOOST_TEST(again->at(0).node()->name() == "train/gradients/MatMul_grad/MatMul_1");
  auto third = add_gradients(root, {loss}, {w});
  BOOST_REQUIRE(third.ok());
  BOOST_TEST(third->at(0).node()->name() == "gradients_1/MatMul_grad/MatMul_1");
}

BOOST_AUTO_TEST_CASE(contributions_to_one_tensor_are_summed_with_add_n) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kDouble);
  auto y = ops::Add(root, ops::Square(root, x), ops::Exp(root, x));
  auto grads = add_gradients(root, {y}, {x});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST(grads->at(0).node()->op_name() == "AddN");
  BOOST_TEST(grads->at(0).node()->name() == "gradients/AddN");
  BOOST_TEST(grads->at(0).node()->num_inputs() == 2);
}

BOOST_AUTO_TEST_CASE(an_x_no_y_depends_on_gets_an_invalid_output) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  auto unrelated = ops::Placeholder(root, DataType::kFloat);
  auto y = ops::Square(root, x);
  auto grads = add_gradients(root, {y}, {unrelated, x, unrelated});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST_REQUIRE(grads->size() == 3u);
  BOOST_TEST(!grads->at(0).valid());
  BOOST_TEST(grads->at(1).valid());
  BOOST_TEST(!grads->at(2).valid());
  // A downstream x: y does not depend on it.
  auto downstream = ops::Neg(root, y);
  auto none = add_gradients(root, {y}, {downstream});
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(!none->at(0).valid());
  // No ys, no xs.
  auto empty = add_gradients(root, {}, {x});
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(!empty->at(0).valid());
  auto no_xs = add_gradients(root, {y}, {});
  BOOST_REQUIRE(no_xs.ok());
  BOOST_TEST(no_xs->empty());
}

BOOST_AUTO_TEST_CASE(stop_gradients_end_the_flow_at_their_nodes) {
  Scope root = Scope::new_root();
  auto a = ops::Placeholder(root, DataType::kFloat);
  auto b = ops::Square(root, a);
  auto c = ops::Mul(root, b, a);
  // Through b only: with b stopped, a has no gradient; b, as an x, still has its own.
  auto grads = add_gradients_or_slices(root, {b}, {a, b}, {}, std::vector<Output>{b});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  BOOST_TEST(!grads->at(0).valid());
  BOOST_TEST(grads->at(1).valid());
  // c = b * a: only the direct path from a remains.
  auto direct = add_gradients_or_slices(root, {c}, {a}, {}, std::vector<Output>{b});
  BOOST_REQUIRE(direct.ok());
  BOOST_TEST(direct->at(0).dense().node()->op_name() != "AddN");  // one path, nothing summed
  Scope other = Scope::new_root();
  auto foreign = ops::Placeholder(other, DataType::kFloat);
  check_error(add_gradients_or_slices(root, {c}, {a}, {}, std::vector<Output>{foreign}).status(),
              Code::kInvalidArgument, "stop_gradients");
}

BOOST_AUTO_TEST_CASE(y_is_x) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  auto grads = add_gradients(root, {x}, {x});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST(grads->at(0).node()->op_name() == "OnesLike");
  auto g = ops::Placeholder(root, DataType::kFloat);
  auto given = add_gradients(root, {x}, {x}, {g});
  BOOST_REQUIRE(given.ok());
  // g itself, checked against x's shape when the step runs (neither shape is known yet).
  const Node* check = given->at(0).node();
  BOOST_TEST(check->op_name() == "EnsureShapeLike");
  BOOST_TEST((check->inputs().at(0) == Edge{g.node()->id(), 0}));
  BOOST_TEST((check->inputs().at(1) == Edge{x.node()->id(), 0}));
  // Fully known and equal shapes need no check: the gradient is g itself.
  auto fixed = ops::Placeholder(root, DataType::kFloat, PartialShape({2}));
  auto fixed_g = ops::Placeholder(root, DataType::kFloat, PartialShape({2}));
  auto plain = add_gradients(root, {fixed}, {fixed}, {fixed_g});
  BOOST_REQUIRE(plain.ok());
  BOOST_TEST((plain->at(0) == fixed_g));
}

BOOST_AUTO_TEST_CASE(control_inputs_carry_no_gradient) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  auto side = ops::Square(root, x);
  auto y = ops::Identity(root.with_control_dependencies({side.op()}), 3.f);
  BOOST_TEST_REQUIRE(y.node()->control_inputs().size() == 1u);
  auto grads = add_gradients(root, {y}, {x});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST(!grads->at(0).valid());
}

BOOST_AUTO_TEST_CASE(integer_tensors_carry_no_gradient) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  // Through an integer cast, and an integer x.
  auto y = ops::Cast(root, ops::Cast(root, x, DataType::kInt32), DataType::kFloat);
  auto grads = add_gradients(root, {y}, {x});
  BOOST_REQUIRE(grads.ok());
  BOOST_TEST(!grads->at(0).valid());
  auto i = ops::Placeholder(root, DataType::kInt32);
  auto iy = ops::Mul(root, ops::Cast(root, i, DataType::kFloat), x);
  auto int_grads = add_gradients(root, {iy}, {i, x});
  BOOST_REQUIRE_MESSAGE(int_grads.ok(), int_grads.status().to_string());
  BOOST_TEST(!int_grads->at(0).valid());
  BOOST_TEST(int_grads->at(1).valid());
  // The axes of a reduction, and shapes, are integers.
  auto axes = ops::Placeholder(root, DataType::kInt32);
  auto sum = ops::Sum(root, x, axes);
  auto axis_grads = add_gradients(root, {sum}, {x, axes});
  BOOST_REQUIRE(axis_grads.ok());
  BOOST_TEST(axis_grads->at(0).valid());
  BOOST_TEST(!axis_grads->at(1).valid());
}

BOOST_AUTO_TEST_CASE(non_differentiable_ops_stop_the_flow) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  // OnesLike(x) does not depend on x's value; Shape and ArgMax give integers.
  auto ones = ops::Sum(root, ops::OnesLike(root, x), 0);
  auto grads = add_gradients(root, {ones}, {x});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  BOOST_TEST(!grads->at(0).valid());
  auto mixed =
      ops::Add(root, ops::Mul(root, ops::Cast(root, ops::Shape(root, x), DataType::kFloat), x),
               ops::Cast(root, ops::ArgMax(root, x, 0), DataType::kFloat));
  auto mixed_grads = add_gradients(root, {mixed}, {x});
  BOOST_REQUIRE_MESSAGE(mixed_grads.ok(), mixed_grads.status().to_string());
  BOOST_TEST(mixed_grads->at(0).valid());
  // Equal gives a bool; comparing with it is not a path.
  auto eq = ops::Cast(root, ops::Equal(root, x, 1.f), DataType::kFloat);
  auto eq_grads = add_gradients(root, {eq}, {x});
  BOOST_REQUIRE(eq_grads.ok());
  BOOST_TEST(!eq_grads->at(0).valid());
  // An assignment's output is not differentiable with respect to the value assigned.
  auto v = ops::Variable(root, PartialShape::unknown(), DataType::kFloat);
  auto assign = ops::Assign(root, v, x, {.validate_shape = false});
  auto assign_grads = add_gradients(root, {ops::Square(root, assign)}, {x});
  BOOST_REQUIRE_MESSAGE(assign_grads.ok(), assign_grads.status().to_string());
  BOOST_TEST(!assign_grads->at(0).valid());
}

BOOST_AUTO_TEST_CASE(variable_output_as_x) {
  Scope root = Scope::new_root();
  auto w = ops::Variable(root.with_op_name("w"), {3, 2}, DataType::kFloat);
  auto x = ops::Placeholder(root, DataType::kFloat, PartialShape({4, 3}));
  auto loss = ops::Mean(root, ops::Square(root, ops::MatMul(root, x, w)), {0, 1});
  auto grads = add_gradients(root, {loss}, {w});
  BOOST_REQUIRE_MESSAGE(grads.ok(), grads.status().to_string());
  BOOST_REQUIRE(grads->at(0).valid());
  BOOST_TEST(dtype_name(grads->at(0).dtype()) == "float32");
  BOOST_TEST(grads->at(0).shape().to_string() == "[3,2]");
  BOOST_TEST(!grads->at(0).node()->output_is_ref(grads->at(0).index()));
}

BOOST_AUTO_TEST_CASE(an_op_without_a_gradient_is_an_error) {
  const char* op = no_gradient_op();
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kDouble);
  auto mystery = NodeBuilder(root.with_op_name("mystery"), op).input(x).finalize();
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  auto y = ops::Square(root, Output(mystery, 0));
  auto grads = add_gradients(root, {y}, {x});
  check_error(grads.status(), Code::kInvalidArgument,
              "node 'mystery' (GradientsTestNoGradient): no gradient is registered for op "
              "GradientsTestNoGradient");
  // Not on a path from x to y: no error.
  auto other = ops::Placeholder(root, DataType::kDouble);
  auto fine = add_gradients(root, {ops::Add(root, y, other)}, {other});
  BOOST_REQUIRE_MESSAGE(fine.ok(), fine.status().to_string());
  BOOST_TEST(fine->at(0).valid());
  // Upstream of x: the walk stops at x.
  auto above = add_gradients(root, {y}, {Output(mystery, 0)});
  BOOST_REQUIRE_MESSAGE(above.ok(), above.status().to_string());
  BOOST_TEST(above->at(0).valid());
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat, PartialShape({2}));
  auto y = ops::Square(root, x);
  check_error(add_gradients(root, {y}, {Output()}).status(), Code::kInvalidArgument,
              "xs[0] is not a valid output");
  check_error(add_gradients(root, {y, Output()}, {x}).status(), Code::kInvalidArgument,
              "ys[1] is not a valid output");
  check_error(add_gradients(root, {y}, {x}, {y, y}).status(), Code::kInvalidArgument,
              "2 grad_ys for 1 ys");
  auto g64 = ops::Placeholder(root, DataType::kDouble);
  check_error(add_gradients(root, {y}, {x}, {g64}).status(), Code::kInvalidArgument,
              "grad_ys[0] ('Placeholder_1:0') is float64 but ys[0] ('Square:0') is float32");
  auto g3 = ops::Placeholder(root, DataType::kFloat, PartialShape({3}));
  check_error(add_gradients(root, {y}, {x}, {g3}).status(), Code::kInvalidArgument,
              "grad_ys[0] ('Placeholder_2:0') has shape [3] but ys[0] ('Square:0') has shape [2]");
  Scope other = Scope::new_root();
  auto foreign = ops::Placeholder(other, DataType::kFloat);
  check_error(add_gradients(root, {y}, {foreign}).status(), Code::kInvalidArgument,
              "belongs to another graph");
  BOOST_TEST(root.ok());  // argument errors do not poison the scope

  // A scope with an error returns that error.
  Scope broken = Scope::new_root();
  auto bx = ops::Placeholder(broken, DataType::kFloat);
  ops::MatMul(broken.with_op_name("bad"), {1.f}, {2.f});
  check_error(add_gradients(broken, {bx}, {bx}).status(), Code::kInvalidArgument, "node 'bad'");
}

BOOST_AUTO_TEST_CASE(gradient_function_contract_errors) {
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  auto y = ops::Neg(root.with_op_name("neg"), x);
  GradientRegistry too_many;
  BOOST_REQUIRE(too_many
                    .register_gradient("Neg",
                                       [](const Scope&, const Operation&,
                                          const std::vector<Output>& dy, std::vector<Output>* dx) {
                                         *dx = {dy[0], dy[0]};
                                         return Status::OK();
                                       })
                    .ok());
  check_error(add_gradients(root, {y}, {x}, {}, too_many).status(), Code::kInternal,
              "node 'neg' (Neg): the gradient function returned 2 gradients for 1 inputs");
  GradientRegistry wrong_type;
  BOOST_REQUIRE(wrong_type
                    .register_gradient("Neg",
                                       [](const Scope& s, const Operation&,
                                          const std::vector<Output>& dy, std::vector<Output>* dx) {
                                         *dx = {ops::Cast(s, dy[0], DataType::kDouble)};
                                         return s.status();
                                       })
                    .ok());
  check_error(add_gradients(root, {y}, {x}, {}, wrong_type).status(), Code::kInternal,
              "node 'neg' (Neg): the gradient function returned float64");
  GradientRegistry failing;
  BOOST_REQUIRE(failing
                    .register_gradient("Neg",
                                       [](const Scope&, const Operation&,
                                          const std::vector<Output>&, std::vector<Output>*) {
                                         return errors::Unimplemented("no Neg gradient today");
                                       })
                    .ok());
  check_error(add_gradients(root, {y}, {x}, {}, failing).status(), Code::kUnimplemented,
              "no Neg gradient today");
  // An empty registry: Neg has no entry.
  GradientRegistry empty;
  check_error(add_gradients(root, {y}, {x}, {}, empty).status(), Code::kInvalidArgument,
              "node 'neg' (Neg): no gradient is registered for op Neg");
}

BOOST_AUTO_TEST_CASE(registry) {
  GradientRegistry r;
  BOOST_TEST(r.lookup("Square").status().code() == Code::kNotFound);
  auto fn = [](const Scope& s, const Operation&, const std::vector<Output>&, std::vector<Output>*) {
    return s.status();
  };
  BOOST_TEST(r.register_gradient("Square", fn).ok());
  check_error(r.register_gradient("Square", fn), Code::kAlreadyExists, "Square");
  check_error(r.not_differentiable("Square"), Code::kAlreadyExists, "Square");
  check_error(r.register_gradient("Exp", GradFn()), Code::kInvalidArgument, "empty");
  BOOST_TEST(r.not_differentiable("Shape").ok());
  check_error(r.register_gradient("Shape", fn), Code::kAlreadyExists, "Shape");
  auto square = r.lookup("Square");
  BOOST_REQUIRE(square.ok());
  BOOST_TEST(static_cast<bool>(*square));
  auto shape = r.lookup("Shape");
  BOOST_REQUIRE(shape.ok());
  BOOST_TEST(!*shape);
  BOOST_TEST(r.op_names() == (std::vector<std::string>{"Shape", "Square"}));
}

BOOST_AUTO_TEST_CASE(every_built_in_op_has_a_gradient_entry) {
  // Each op of the foundation either has a gradient or is declared not differentiable, so
  // add_gradients never stops with "no gradient is registered" on a built-in op.
  const GradientRegistry& r = GradientRegistry::global();
  for (const char* op : {"Const",        "Placeholder",
                         "Identity",     "NoOp",
                         "Add",          "Sub",
                         "Mul",          "Div",
                         "Maximum",      "Equal",
                         "Neg",          "Square",
                         "Sqrt",         "Exp",
                         "Log",          "MatMul",
                         "BiasAdd",      "Relu",
                         "Sigmoid",      "Tanh",
                         "Softmax",      "Sum",
                         "Mean",         "Min",
                         "Max",          "Reshape",
                         "Shape",        "Fill",
                         "Cast",         "ArgMax",
                         "Variable",     "Assign",
                         "AssignAdd",    "AssignSub",
                         "FIFOQueue",    "QueueEnqueue",
                         "QueueDequeue", "QueueClose",
                         "QueueSize",    "AddN",
                         "ZerosLike",    "OnesLike",
                         "Size",         "BroadcastGradientArgs",
                         "BroadcastTo",  "ReluGrad",
                         "SigmoidGrad",  "TanhGrad",
                         "BiasAddGrad",  "SparseSoftmaxCrossEntropyWithLogits"}) {
    BOOST_TEST(r.lookup(op).ok(), op);
  }
  for (const char* op : {"Shape", "ArgMax", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
                         "GreaterEqual", "Placeholder", "Const", "Variable", "NoOp", "Assign",
                         "FIFOQueue", "QueueDequeue", "ZerosLike"}) {
    auto fn = r.lookup(op);
    BOOST_TEST((fn.ok() && !*fn), op << " should be declared not differentiable");
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
