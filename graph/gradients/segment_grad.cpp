// Gradients of the sparse segment reductions (TensorFlow 1.x's python/ops/math_grad.py): d data
// of SparseSegmentSum is the output gradient's rows gathered by segment and summed back by index;
// of SparseSegmentMean and SparseSegmentSqrtN, their Grad kernels. None for the indices, the
// segment ids or num_segments; the Grad ops have no gradient of their own.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// data's first dimension, an int32 scalar.
Output rows_of(const Scope& s, const Output& data) {
  return ops::Reshape(s,
                      ops::Slice(s, shape_of(s, data), Tensor::from_vector<int32_t>({0}),
                                 Tensor::from_vector<int32_t>({1})),
                      Tensor::from_vector<int32_t>({}));
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
