// Gradients of the segment reductions (TensorFlow 1.x's python/ops/math_grad.py): the sorted
// SegmentSum, SegmentMean, SegmentProd, SegmentMin and SegmentMax, the unsorted
// UnsortedSegmentProd, UnsortedSegmentMin and UnsortedSegmentMax (UnsortedSegmentSum's is beside
// GatherV2's), and the sparse ones: d data of SparseSegmentSum is the output gradient's rows
// gathered by segment and summed back by index; of SparseSegmentMean and SparseSegmentSqrtN, their
// Grad kernels. Min and Max share a segment's gradient among the elements equal to its result. None
// for the indices, the segment ids or num_segments; the Grad ops have no gradient.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// dy gathered at each row's segment.
Status segment_sum_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::GatherV2(s, dy[0], op_input(op, 1), int32_t{0}), Output()};
  return s.status();
}

// `per_segment` ([segments] + ...) reshaped to [segments, 1, ..., 1] of data's rank, so that
// it divides a tensor of the output's shape.
Output as_column(const Scope& s, const Output& per_segment, const Output& data) {
  const Output ones = ops::Fill(
      s, ops::Reshape(s, ops::Sub(s, ops::Rank(s, data), int32_t{1}), {int32_t{1}}), int32_t{1});
  return ops::Reshape(s, per_segment,
                      ops::ConcatV2(s, {ops::Const(s, {int32_t{-1}}), ones}, int32_t{0}));
}

// dy divided by each segment's count, gathered at each row's segment.
Status segment_mean_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output data = op_input(op, 0), ids = op_input(op, 1);
  const Output counts =
      ops::SegmentReduction(s, "Sum", ops::Cast(s, ops::OnesLike(s, ids), dy[0].dtype()), ids);
  const Output scaled = ops::Div(s, dy[0], as_column(s, counts, data));
  *dx = {ops::GatherV2(s, scaled, ids, int32_t{0}), Output()};
  return s.status();
}

// Sorted Min and Max: each segment's gradient shared by the rows equal to its result.
Status segment_min_or_max_grad(const Scope& s, const Operation& op, const Outputs& dy,
                               Outputs* dx) {
  const Output data = op_input(op, 0), ids = op_input(op, 1);
  const Output chosen = ops::Equal(s, data, ops::GatherV2(s, Output(op, 0), ids, int32_t{0}));
  const Output counts = ops::SegmentReduction(s, "Sum", ops::Cast(s, chosen, dy[0].dtype()), ids);
  const Output shared = ops::GatherV2(s, ops::Div(s, dy[0], counts), ids, int32_t{0});
  *dx = {ops::Select(s, chosen, shared, ops::ZerosLike(s, shared)), Output()};
  return s.status();
}

// TensorFlow's _GatherDropNegatives: params gathered at max(ids, 0), zero where an id is
// negative; `kept` is where it is not, broadcast to the gathered shape.
struct GatheredDroppingNegatives {
  Output values;
  Output clipped_ids;
  Output kept;
};
GatheredDroppingNegatives gather_drop_negatives(const Scope& s, const Output& params,
                                                const Output& ids) {
  const Output clipped = ops::Maximum(s, ids, ops::ZerosLike(s, ids));
  const Output gathered = ops::GatherV2(s, params, clipped, int32_t{0});
  // ids as [ids.shape, 1, ...] in gathered's dtype, compared with zeros of gathered's shape.
  const Output extra = ops::Fill(
      s, ops::Reshape(s, ops::Sub(s, ops::Rank(s, gathered), ops::Rank(s, ids)), {int32_t{1}}),
      int32_t{1});
  const Output ids_column =
      ops::Reshape(s, ids, ops::ConcatV2(s, {ops::Shape(s, ids), extra}, int32_t{0}));
  const Output zeros = ops::ZerosLike(s, gathered);
  const Output kept = ops::GreaterEqual(s, ops::Cast(s, ids_column, gathered.dtype()), zeros);
  return {ops::Select(s, kept, gathered, zeros), clipped, kept};
}

// Unsorted Min and Max: as the sorted ones, negative ids getting no gradient.
Status unsorted_segment_min_or_max_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                        Outputs* dx) {
  const Output data = op_input(op, 0), ids = op_input(op, 1), num = op_input(op, 2);
  const GatheredDroppingNegatives results = gather_drop_negatives(s, Output(op, 0), ids);
  const Output chosen = ops::LogicalAnd(s, ops::Equal(s, data, results.values), results.kept);
  const Output counts = ops::UnsortedSegmentSum(s, ops::Cast(s, chosen, dy[0].dtype()), ids, num);
  const Output shared =
      ops::GatherV2(s, ops::Div(s, dy[0], counts), results.clipped_ids, int32_t{0});
  *dx = {ops::Select(s, chosen, shared, ops::ZerosLike(s, shared)), Output(), Output()};
  return s.status();
}

// Prod, sorted or not: dy times the product of the segment's other elements (computed without
// dividing by zero: with one zero in a segment only that element gets a gradient, with more
// none does); negative ids get none.
Outputs segment_prod_grad(const Scope& s, const Output& data, const Output& ids, const Output& num,
                          const Output& product_by_segment, const Output& dy) {
  const Output zeros = ops::ZerosLike(s, data);
  const Output is_zero = ops::Equal(s, data, zeros);
  const Output zeros_in_segment =
      ops::UnsortedSegmentSum(s, ops::Cast(s, is_zero, DataType::kInt32), ids, num);
  const Output grad =
      ops::Select(s, ops::Greater(s, zeros_in_segment, int32_t{1}), ops::ZerosLike(s, dy), dy);
  const Output non_zero_data = ops::Select(s, is_zero, ops::OnesLike(s, data), data);
  const Output non_zero_prod = ops::UnsortedSegmentReduction(s, "Prod", non_zero_data, ids, num);
  const Output clipped = ops::Maximum(s, ids, ops::ZerosLike(s, ids));
  const Output product = ops::GatherV2(s, product_by_segment, clipped, int32_t{0});
  const Output non_zero_product = ops::GatherV2(s, non_zero_prod, clipped, int32_t{0});
  // Where data is zero the quotient is not used (and may be inf or nan).
  const Output others =
      ops::Select(s, is_zero, non_zero_product,
                  ops::Div(s, product, ops::Select(s, is_zero, ops::OnesLike(s, data), data)));
  return {ops::Mul(s, gather_drop_negatives(s, grad, ids).values, others), Output()};
}

Status unsorted_segment_prod_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                  Outputs* dx) {
  *dx =
      segment_prod_grad(s, op_input(op, 0), op_input(op, 1), op_input(op, 2), Output(op, 0), dy[0]);
  dx->push_back(Output());
  return s.status();
}

// data's first dimension, an int32 scalar.
Output rows_of(const Scope& s, const Output& data) {
  return ops::Reshape(s,
                      ops::Slice(s, shape_of(s, data), Tensor::from_vector<int32_t>({0}),
                                 Tensor::from_vector<int32_t>({1})),
                      Tensor::from_vector<int32_t>({}));
}

// Sorted Prod: the unsorted gradient with as many segments as the output has rows.
Status sorted_segment_prod_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                Outputs* dx) {
  *dx = segment_prod_grad(s, op_input(op, 0), op_input(op, 1), rows_of(s, Output(op, 0)),
                          Output(op, 0), dy[0]);
  return s.status();
}

// The data gradient first, then none for each other input.
void data_gradient_only(const Operation& op, const Output& d_data, Outputs* dx) {
  dx->assign(op.node()->num_inputs(), Output());
  (*dx)[0] = d_data;
}

Status sparse_segment_sum_grad(const Scope& s, const Operation& op, const Outputs& dy,
                               Outputs* dx) {
  const Output data = op_input(op, 0), indices = op_input(op, 1), ids = op_input(op, 2);
  data_gradient_only(op,
                     ops::UnsortedSegmentSum(s, ops::GatherV2(s, dy[0], ids, int32_t{0}), indices,
                                             rows_of(s, data)),
                     dx);
  return s.status();
}

GradFn sparse_segment_scaled_grad(std::string reduction) {
  return [reduction](const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
    const Output data = op_input(op, 0);
    data_gradient_only(op,
                       ops::SparseSegmentReductionGrad(s, reduction, dy[0], op_input(op, 1),
                                                       op_input(op, 2), rows_of(s, data)),
                       dx);
    return s.status();
  };
}

}  // namespace

void register_segment_gradients(GradientRegistry& r) {
  must_register_gradient(r, "SegmentSum", segment_sum_grad);
  must_register_gradient(r, "SegmentMean", segment_mean_grad);
  must_register_gradient(r, "SegmentMin", segment_min_or_max_grad);
  must_register_gradient(r, "SegmentMax", segment_min_or_max_grad);
  must_register_gradient(r, "UnsortedSegmentMin", unsorted_segment_min_or_max_grad);
  must_register_gradient(r, "UnsortedSegmentMax", unsorted_segment_min_or_max_grad);
  must_register_gradient(r, "SegmentProd", sorted_segment_prod_grad);
  must_register_gradient(r, "UnsortedSegmentProd", unsorted_segment_prod_grad);
  must_register_gradient(r, "SparseSegmentSum", sparse_segment_sum_grad);
  must_register_gradient(r, "SparseSegmentSumWithNumSegments", sparse_segment_sum_grad);
  for (const char* reduction : {"Mean", "SqrtN"}) {
    const std::string op = std::string("SparseSegment") + reduction;
    must_register_gradient(r, op, sparse_segment_scaled_grad(reduction));
    must_register_gradient(r, op + "WithNumSegments", sparse_segment_scaled_grad(reduction));
    must_declare_not_differentiable(r, op + "Grad");
  }
}

}  // namespace troupe
