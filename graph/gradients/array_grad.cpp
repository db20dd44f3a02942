// Gradients of the array ops (Identity, CheckNumerics, EnsureShapeLike, Reshape, Fill's value,
// BroadcastTo, Select, and Switch, a tf.cond's entry) and the array ops without a gradient: Const,
// Placeholder, NoOp, Shape, Size, ZerosLike, OnesLike, BroadcastGradientArgs, StopGradient. The
// formulas are TensorFlow's (python/ops/array_grad.py).
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

Status identity_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Identity(s, dy[0])};
  return s.status();
}

// The gradient, checked as the value was (TensorFlow's message).
Status check_numerics_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const std::string message = op.node()->def().find_attr("message")->get<std::string>();
  *dx = {ops::CheckNumerics(
      s, dy[0], "Not a number (NaN) or infinity (Inf) values detected in gradient. " + message)};
  return s.status();
}

// A Switch sends its data to one side: the gradient is that side's, which a Merge of both
// sides' gradients forwards (the other side's is dead, or a zero made from its dead output).
// None for the predicate. (Merge's gradient needs the cond's predicate, which Python keeps:
// python/troupe/control_flow_ops.py.)
Status switch_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  if (!dy[0].valid() || !dy[1].valid()) {
    *dx = {Output(), Output()};
    return s.status();
  }
  *dx = {ops::Merge(s, {dy[0], dy[1]}).output, Output()};
  return s.status();
}

// The gradient passes to the input; none for the tensor whose shape was compared.
Status ensure_shape_like_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Identity(s, dy[0]), Output()};
  return s.status();
}

// The gradient, reshaped back to the input's run-time shape; none for the shape.
Status reshape_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Reshape(s, dy[0], shape_of(s, op_input(op, 0))), Output()};
  return s.status();
}

// Every output element is the value: its gradient is the sum of all of dy. None for dims.
Status fill_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  *dx = {Output(), ops::Sum(s, ops::Reshape(s, dy[0], {-1}), 0)};
  return s.status();
}

// dy summed over the axes the input was broadcast along, reshaped to the input's shape. None for
// the shape.
Status broadcast_to_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output shape = op_input(op, 1);
  const Output input_shape = shape_of(s, op_input(op, 0), shape.dtype());
  const Output r0 = ops::BroadcastGradientArgs(s, input_shape, shape).r0;
  *dx = {ops::Reshape(s, ops::Sum(s, dy[0], r0), input_shape), Output()};
  return s.status();
}

// dy goes to whichever side each element came from; none for the condition.
Status select_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output cond = op_input(op, 0);
  const Output zeros = ops::ZerosLike(s, dy[0]);
  *dx = {Output(), ops::Select(s, cond, dy[0], zeros), ops::Select(s, cond, zeros, dy[0])};
  return s.status();
}

// Identity passes IndexedSlices on as they are.
Status sparse_identity_grad(const Scope& s, const Operation& op, const std::vector<Gradient>& dy,
                            std::vector<Gradient>* dx) {
  if (dy[0].is_sparse()) {
    *dx = {dy[0]};
    return s.status();
  }
  *dx = {Gradient(ops::Identity(s, dy[0].dense()))};
  return s.status();
}

}  // namespace

std::optional<std::vector<int64_t>> constant_ints(const Output& output) {
  if (output.node() == nullptr || output.node()->op_name() != "Const") return std::nullopt;
  const AttrValue* value = output.node()->def().find_attr("value");
  if (value == nullptr || !value->holds<Tensor>()) return std::nullopt;
  const Tensor& t = value->get<Tensor>();
  if (t.rank() > 1) return std::nullopt;
  if (t.dtype() == DataType::kInt32) {
    auto v = t.flat<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (t.dtype() == DataType::kInt64) return t.to_vector<int64_t>();
  return std::nullopt;
}

Output shape_of(const Scope& s, const Output& x, DataType out_type) {
  const PartialShape& shape = x.shape();
  if (!shape.is_fully_defined()) return ops::Shape(s, x, out_type);
  Tensor dims = Tensor::from_vector(shape.dims());
  if (out_type == DataType::kInt32) dims = dims.cast_to(DataType::kInt32).value();
  return ops::Const(s, dims);
}

void register_array_gradients(GradientRegistry& r) {
  must_register_gradient(r, "Identity", identity_grad);
  must_register_gradient(r, "CheckNumerics", check_numerics_grad);
  must_register_sparse_gradient(r, "Identity", sparse_identity_grad);
  must_register_gradient(r, "PlaceholderWithDefault", identity_grad);
  must_register_gradient(r, "EnsureShapeLike", ensure_shape_like_grad);
  must_register_gradient(r, "Reshape", reshape_grad);
  must_register_gradient(r, "Fill", fill_grad);
  must_register_gradient(r, "BroadcastTo", broadcast_to_grad);
  must_register_gradient(r, "Select", select_grad);
  must_register_gradient(r, "Switch", switch_grad);
  for (const char* op : {"Const", "Placeholder", "NoOp", "Shape", "Size", "ZerosLike", "OnesLike",
                         "BroadcastGradientArgs", "StopGradient", "GatherTree"}) {
    must_declare_not_differentiable(r, op);
  }
}

}  // namespace troupe
