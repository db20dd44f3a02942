// Gradients of the N-dimensional gathers and scatters (TensorFlow 1.x's python/ops/array_grad.py):
// GatherNd and ScatterNd are each other's adjoint; a TensorScatter passes the gradient through
// where it did not write and gathers it for the updates. GatherNd with indices of shape [n, 1]
// has a sparse gradient (IndexedSlices of params' rows), as TensorFlow's. The in-place
// ScatterNd updates of a variable have none.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

// d params = dy's slices added at their indices, in a tensor of params' shape.
Status gather_nd_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output params = op_input(op, 0), indices = op_input(op, 1);
  *dx = {ops::ScatterNd(s, indices, dy[0], shape_of(s, params, indices.dtype())), Output()};
  return s.status();
}

// Indices of shape [n, 1] name rows: the gradient is IndexedSlices{dy, indices[:, 0], shape}.
Status sparse_gather_nd_grad(const Scope& s, const Operation& op, const std::vector<Gradient>& dy,
                             std::vector<Gradient>* dx) {
  const Output params = op_input(op, 0), indices = op_input(op, 1);
  const PartialShape& index_shape = indices.shape();
  if (!(index_shape.rank_known() && index_shape.rank() == 2 && index_shape.dim(1) == 1)) {
    Outputs dense;
    TROUPE_RETURN_IF_ERROR(gather_nd_grad(s, op, {to_dense(s, dy[0])}, &dense));
    dx->assign(dense.begin(), dense.end());
    return s.status();
  }
  // A Shape node, when needed, runs where params lives (a table on a ps is not sent for it).
  const Output params_shape = params.shape().is_fully_defined()
                                  ? shape_of(s, params)
                                  : ops::Shape(s.colocate_with(params.op()), params);
  IndexedSlices slices{to_dense(s, dy[0]), ops::Reshape(s, indices, {int32_t{-1}}), params_shape};
  *dx = {Gradient(slices), Gradient()};
  return s.status();
}

// d updates = dy gathered at the indices.
Status scatter_nd_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {Output(), ops::GatherNd(s, dy[0], op_input(op, 0)), Output()};
  return s.status();
}

// d tensor: dy, zero where an Update wrote; d updates: dy gathered (negated for Sub).
GradFn tensor_scatter_grad(std::string op_kind) {
  return [op_kind](const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
    const Output indices = op_input(op, 1), updates = op_input(op, 2);
    const Output gathered = ops::GatherNd(s, dy[0], indices);
    Output d_tensor = dy[0];
    if (op_kind == "Update") {
      d_tensor = ops::TensorScatter(s, "Update", dy[0], indices, ops::ZerosLike(s, updates));
    }
    *dx = {d_tensor, Output(), op_kind == "Sub" ? ops::Neg(s, gathered) : gathered};
    return s.status();
  };
}

}  // namespace

void register_scatter_nd_gradients(GradientRegistry& r) {
  must_register_gradient(r, "GatherNd", gather_nd_grad);
  must_register_sparse_gradient(r, "GatherNd", sparse_gather_nd_grad);
  must_register_gradient(r, "ScatterNd", scatter_nd_grad);
  for (const char* kind : {"Update", "Add", "Sub"}) {
    must_register_gradient(r, std::string("TensorScatter") + kind, tensor_scatter_grad(kind));
    must_declare_not_differentiable(r, std::string("ScatterNd") + kind);
  }
}

}  // namespace troupe
