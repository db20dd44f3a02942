// Gradients of GatherV2 and UnsortedSegmentSum, each other's adjoint; Where and LogicalNot have
// none (TensorFlow's python/ops/array_grad.py and math_grad.py). GatherV2's sparse gradient along
// axis 0 is IndexedSlices (the gathered rows' gradients and their indices), as TensorFlow's;
// along another axis, and as a dense gradient, the slices' gradients are summed into a tensor of
// params' shape.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// The value of `axis` when its node is a Const, else nullopt.
std::optional<int64_t> constant_axis(const Output& axis) {
  const auto values = constant_ints(axis);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

// The dims [from, to) of `shape` (an int32 vector of `rank` entries).
Output dims_of(const Scope& s, const Output& shape, int64_t from, int64_t to) {
  return ops::Slice(s, shape, Tensor::from_vector<int32_t>({static_cast<int32_t>(from)}),
                    Tensor::from_vector<int32_t>({static_cast<int32_t>(to - from)}));
}

// A constant int32 vector of [from, to).
Output iota(const Scope& s, int64_t from, int64_t to) {
  std::vector<int32_t> values;
  for (int64_t i = from; i < to; ++i)
    values.push_back(static_cast<int32_t>(i));
  return ops::Const(s, Tensor::from_vector(values));
}

// d params = the gradient's slices summed by the index they were gathered from. Along axis a > 0
// the slices are moved to the front first and back after.
Status gather_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output params = op_input(op, 0), indices = op_input(op, 1);
  const std::optional<int64_t> given = constant_axis(op_input(op, 2));
  const int rank = params.shape().rank();
  if (!given || rank < 0) {
    return errors::Unimplemented(
        "node '{}' (GatherV2): the gradient needs a constant axis and params of known rank",
        op.name());
  }
  const int64_t axis = *given < 0 ? *given + rank : *given;
  const Output params_shape = shape_of(s, params);
  const Output flat_indices = ops::Reshape(s, indices, {int32_t{-1}});
  const Output segments =
      ops::Reshape(s, dims_of(s, params_shape, axis, axis + 1), Tensor::from_vector<int32_t>({}));
  // dy: outer + indices + inner -> outer + [n] + inner.
  const Output values_shape =
      ops::ConcatV2(s,
                    {dims_of(s, params_shape, 0, axis), ops::Const(s, {int32_t{-1}}),
                     dims_of(s, params_shape, axis + 1, rank)},
                    int32_t{0});
  Output values = ops::Reshape(s, dy[0], values_shape);
  if (axis == 0) {
    *dx = {ops::UnsortedSegmentSum(s, values, flat_indices, segments), Output(), Output()};
    return s.status();
  }
  const Output to_front = ops::ConcatV2(
      s, {ops::Const(s, {static_cast<int32_t>(axis)}), iota(s, 0, axis), iota(s, axis + 1, rank)},
      int32_t{0});
  const Output back = ops::ConcatV2(
      s, {iota(s, 1, axis + 1), ops::Const(s, {int32_t{0}}), iota(s, axis + 1, rank)}, int32_t{0});
  const Output summed =
      ops::UnsortedSegmentSum(s, ops::Transpose(s, values, to_front), flat_indices, segments);
  *dx = {ops::Transpose(s, summed, back), Output(), Output()};
  return s.status();
}

// d data = dy gathered at each slice's segment (zero for dropped, negative ids).
Status unsorted_segment_sum_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                 Outputs* dx) {
  const Output data = op_input(op, 0), ids = op_input(op, 1);
  const Output flat_ids = ops::Reshape(s, ids, {int32_t{-1}});
  const Output zero = ops::ZerosLike(s, flat_ids);
  const Output gathered = ops::GatherV2(s, dy[0], ops::Maximum(s, flat_ids, zero), int32_t{0});
  const Output kept =
      ops::Select(s, ops::GreaterEqual(s, flat_ids, zero), gathered, ops::ZerosLike(s, gathered));
  *dx = {ops::Reshape(s, kept, shape_of(s, data)), Output(), Output()};
  return s.status();
}

// Along axis 0: IndexedSlices{dy as one row per index, the indices flattened, params' shape}.
// The shape is a constant when known, else a Shape node colocated with params (so a table on a
// ps is not sent to compute it).
Status sparse_gather_grad(const Scope& s, const Operation& op, const std::vector<Gradient>& dy,
                          std::vector<Gradient>* dx) {
  const Output params = op_input(op, 0), indices = op_input(op, 1);
  const std::optional<int64_t> axis = constant_axis(op_input(op, 2));
  const int rank = params.shape().rank();
  if (!axis || rank < 1 || (*axis != 0 && *axis != -rank)) {
    Outputs dense;
    TROUPE_RETURN_IF_ERROR(gather_grad(s, op, {to_dense(s, dy[0])}, &dense));
    dx->assign(dense.begin(), dense.end());
    return s.status();
  }
  const Output params_shape = params.shape().is_fully_defined()
                                  ? shape_of(s, params)
                                  : ops::Shape(s.colocate_with(params.op()), params);
  Output row_shape;
  if (params.shape().is_fully_defined()) {
    std::vector<int32_t> dims = {-1};
    for (int d = 1; d < rank; ++d)
      dims.push_back(static_cast<int32_t>(params.shape().dim(d)));
    row_shape = ops::Const(s, Tensor::from_vector(dims));
  } else {
    row_shape = ops::ConcatV2(s, {ops::Const(s, {int32_t{-1}}), dims_of(s, params_shape, 1, rank)},
                              int32_t{0});
  }
  IndexedSlices slices{ops::Reshape(s, to_dense(s, dy[0]), row_shape),
                       ops::Reshape(s, indices, {int32_t{-1}}), params_shape};
  *dx = {Gradient(slices), Gradient(), Gradient()};
  return s.status();
}

}  // namespace

void register_selection_gradients(GradientRegistry& r) {
  must_register_gradient(r, "GatherV2", gather_grad);
  must_register_sparse_gradient(r, "GatherV2", sparse_gather_grad);
  must_register_gradient(r, "UnsortedSegmentSum", unsorted_segment_sum_grad);
  for (const char* op : {"Where", "LogicalNot"})
    must_declare_not_differentiable(r, op);
}

}  // namespace troupe
