// Gradients of the array manipulation ops (graph/ops/array_manipulation_ops.hpp) and of Pack;
// OneHot, Range, Rank, ConcatOffset and InvertPermutation have none. The formulas are
// TensorFlow's (python/ops/array_grad.py).
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

StridedSliceMasks masks_of(const Operation& op) {
  return {op_attr<int64_t>(op, "begin_mask"), op_attr<int64_t>(op, "end_mask"),
          op_attr<int64_t>(op, "ellipsis_mask"), op_attr<int64_t>(op, "new_axis_mask"),
          op_attr<int64_t>(op, "shrink_axis_mask")};
}

Output as_int32(const Scope& s, const Output& x) {
  return x.dtype() == DataType::kInt32 ? x : ops::Cast(s, x, DataType::kInt32);
}

// Each input gets the slice of dy where it was placed; none for the axis.
Status concat_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const int n = static_cast<int>(op_attr<int64_t>(op, "N"));
  std::vector<Input> shapes;
  for (int i = 0; i < n; ++i)
    shapes.emplace_back(shape_of(s, op_input(op, i)));
  const Outputs offsets = ops::ConcatOffset(s, as_int32(s, op_input(op, n)), shapes);
  dx->clear();
  for (int i = 0; i < n && s.ok(); ++i) {
    dx->push_back(ops::Slice(s, dy[0], offsets[i], shape_of(s, op_input(op, i))));
  }
  dx->push_back(Output());
  return s.status();
}

// The parts' gradients joined along the axis.
Status split_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {Output(), ops::ConcatV2(s, std::vector<Input>(dy.begin(), dy.end()), op_input(op, 0))};
  return s.status();
}

Status split_v_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::ConcatV2(s, std::vector<Input>(dy.begin(), dy.end()), op_input(op, 2)), Output(),
         Output()};
  return s.status();
}

Status unpack_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Pack(s, std::vector<Input>(dy.begin(), dy.end()), op_attr<int64_t>(op, "axis"))};
  return s.status();
}

Status pack_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = ops::Unpack(s, dy[0], op_attr<int64_t>(op, "N"), op_attr<int64_t>(op, "axis"));
  return s.status();
}

// dy padded back to the input's shape: begin before, the rest after.
Status slice_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), begin = op_input(op, 1);
  const Output after = ops::Sub(s, ops::Sub(s, shape_of(s, x, begin.dtype()), begin),
                                shape_of(s, dy[0], begin.dtype()));
  const Output paddings = ops::Pack(s, {begin, after}, /*axis=*/1);
  *dx = {ops::Pad(s, dy[0], paddings), Output(), Output()};
  return s.status();
}

Status strided_slice_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output begin = op_input(op, 1);
  *dx = {ops::StridedSliceGrad(s, shape_of(s, op_input(op, 0), begin.dtype()), begin,
                               op_input(op, 2), op_input(op, 3), dy[0], masks_of(op)),
         Output(), Output(), Output()};
  return s.status();
}

// StridedSliceGrad is linear in dy: its gradient slices the incoming gradient the same way.
Status strided_slice_grad_grad(const Scope& s, const Operation& op, const Outputs& dy,
                               Outputs* dx) {
  *dx = {
      Output(), Output(), Output(), Output(),
      ops::StridedSlice(s, dy[0], op_input(op, 1), op_input(op, 2), op_input(op, 3), masks_of(op))};
  return s.status();
}

// The part of dy where the input was placed; none for paddings (and constant_values).
Status pad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0), paddings = op_input(op, 1);
  const Output before =
      ops::Reshape(s, ops::Slice(s, paddings, {int32_t{0}, int32_t{0}}, {int32_t{-1}, int32_t{1}}),
                   {int32_t{-1}});
  *dx = {ops::Slice(s, dy[0], before, shape_of(s, x, paddings.dtype())), Output()};
  if (op.node()->num_inputs() > 2) dx->push_back(Output());
  return s.status();
}

// Each padded element's gradient goes back to the element it mirrors (TensorFlow's
// MirrorPadGrad); none for the paddings.
Status mirror_pad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output paddings = op_input(op, 1);
  Operation grad = NodeBuilder(s, "MirrorPadGrad")
                       .input(dy[0])
                       .input(paddings)
                       .attr("mode", op.node()->def().find_attr("mode")->get<std::string>())
                       .finalize();
  *dx = {Output(grad, 0), Output()};
  return s.status();
}

Status transpose_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Transpose(s, dy[0], ops::InvertPermutation(s, op_input(op, 1))), Output()};
  return s.status();
}

Status reverse_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::ReverseV2(s, dy[0], op_input(op, 1)), Output()};
  return s.status();
}

// The reversal is its own inverse.
Status reverse_sequence_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::ReverseSequence(s, dy[0], op_input(op, 1), op_attr<int64_t>(op, "seq_dim"),
                              op_attr<int64_t>(op, "batch_dim")),
         Output()};
  return s.status();
}

// dy reshaped to [m_0, d_0, m_1, d_1, ...] and summed over the copies (the m axes).
Status tile_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output x = op_input(op, 0);
  const Output multiples = as_int32(s, op_input(op, 1));
  const Output split_shape = ops::Reshape(
      s, ops::Transpose(s, ops::Pack(s, {multiples, shape_of(s, x)}), {int32_t{1}, int32_t{0}}),
      {int32_t{-1}});
  const Output axes = ops::Range(s, int32_t{0}, ops::Size(s, split_shape), int32_t{2});
  *dx = {ops::Sum(s, ops::Reshape(s, dy[0], split_shape), axes), Output()};
  return s.status();
}

// The gradient, reshaped back to the input's shape; none for the axis.
Status reshape_back_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::Reshape(s, dy[0], shape_of(s, op_input(op, 0)))};
  if (op.node()->num_inputs() > 1) dx->push_back(Output());
  return s.status();
}

}  // namespace

void register_array_manipulation_gradients(GradientRegistry& r) {
  must_register_gradient(r, "ConcatV2", concat_grad);
  must_register_gradient(r, "Split", split_grad);
  must_register_gradient(r, "SplitV", split_v_grad);
  must_register_gradient(r, "Unpack", unpack_grad);
  must_register_gradient(r, "Pack", pack_grad);
  must_register_gradient(r, "Slice", slice_grad);
  must_register_gradient(r, "StridedSlice", strided_slice_grad);
  must_register_gradient(r, "StridedSliceGrad", strided_slice_grad_grad);
  must_register_gradient(r, "Pad", pad_grad);
  must_register_gradient(r, "PadV2", pad_grad);
  must_register_gradient(r, "MirrorPad", mirror_pad_grad);
  must_register_gradient(r, "Transpose", transpose_grad);
  must_register_gradient(r, "ReverseV2", reverse_grad);
  must_register_gradient(r, "ReverseSequence", reverse_sequence_grad);
  must_register_gradient(r, "Tile", tile_grad);
  must_register_gradient(r, "ExpandDims", reshape_back_grad);
  must_register_gradient(r, "Squeeze", reshape_back_grad);
  for (const char* op : {"OneHot", "Range", "Rank", "ConcatOffset", "InvertPermutation"}) {
    must_declare_not_differentiable(r, op);
  }
}

}  // namespace troupe
