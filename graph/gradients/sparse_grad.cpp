// Gradients of DynamicPartition and DynamicStitch, each other's inverse (TensorFlow's
// python/ops/data_flow_grad.py), and of SparseToDense (sparse_grad.py); Unique and the Scatter
// updates have none.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// d data: each partition's gradient put back where its slices came from.
Status dynamic_partition_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output data = op_input(op, 0), partitions = op_input(op, 1);
  const int64_t num = op_attr<int64_t>(op, "num_partitions");
  const Output prefix_shape = shape_of(s, partitions);
  const Output positions =
      ops::Reshape(s, ops::Range(s, int32_t{0}, ops::Prod(s, prefix_shape, int32_t{0}), int32_t{1}),
                   prefix_shape);
  const Outputs partitioned = ops::DynamicPartition(s, positions, partitions, num);
  std::vector<Input> indices(partitioned.begin(), partitioned.end());
  std::vector<Input> grads(dy.begin(), dy.end());
  *dx = {ops::Reshape(s, ops::DynamicStitch(s, indices, grads), shape_of(s, data)), Output()};
  return s.status();
}

// d data[m]: the merged gradient's rows at indices[m]; none for the indices.
Status dynamic_stitch_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const int n = op.node()->num_inputs() / 2;
  dx->assign(n, Output());
  for (int m = 0; m < n; ++m)
    dx->push_back(ops::GatherV2(s, dy[0], op_input(op, m), int32_t{0}));
  return s.status();
}

// d sparse_values = dy at the indices (summed when one value fills them all); d default_value =
// the rest of dy. TensorFlow's gradient, for indices of any rank SparseToDense takes (a scalar
// or vector index is one row of [N, rank]) and values of either rank, known or not.
Status sparse_to_dense_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output indices = op_input(op, 0), output_shape = op_input(op, 1);
  const Output values = op_input(op, 2);
  const Output index_rows = ops::Reshape(
      s, indices,
      ops::ConcatV2(
          s,
          {ops::Const(s, {int32_t{-1}}), ops::Reshape(s, ops::Size(s, output_shape), {int32_t{1}})},
          int32_t{0}));
  const Output gathered = ops::GatherNd(s, dy[0], index_rows);  // [N]
  const Output all = ops::Const(s, Tensor::from_vector<int32_t>({0}));
  const Output total = ops::Sum(s, ops::Reshape(s, dy[0], {int32_t{-1}}), all);
  const Output taken = ops::Sum(s, gathered, all);
  // One value for every index (a scalar): the sum of their gradients.
  const Output summed_axes = ops::Range(
      s, int32_t{0}, ops::Sub(s, ops::Rank(s, gathered), ops::Rank(s, values)), int32_t{1});
  const Output values_grad =
      ops::Reshape(s, ops::Sum(s, gathered, summed_axes), ops::Shape(s, values));
  *dx = {Output(), Output(), values_grad, ops::Sub(s, total, taken)};
  return s.status();
}

}  // namespace

void register_sparse_gradients(GradientRegistry& r) {
  must_register_gradient(r, "DynamicPartition", dynamic_partition_grad);
  must_register_gradient(r, "DynamicStitch", dynamic_stitch_grad);
  must_register_gradient(r, "SparseToDense", sparse_to_dense_grad);
  for (const char* op : {"Unique", "ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul",
                         "ScatterDiv", "ScatterMin", "ScatterMax"}) {
    must_declare_not_differentiable(r, op);
  }
}

}  // namespace troupe
