// N-dimensional gathers and scatters: definitions, shape functions and builders (TensorFlow
// 1.x's core/ops/array_ops.cc and state_ops.cc GatherNd, ScatterNd*, TensorScatter*).
#include "troupe/graph/ops/scatter_nd_ops.hpp"

#include <string>

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// The partial shape of indices.shape[:-1] + shape[K:], or nullopt when a rank or K is unknown.
std::optional<PartialShape> slices_shape(const PartialShape& indices, const PartialShape& shape) {
  if (!indices.rank_known() || !shape.rank_known() || indices.rank() < 1) return std::nullopt;
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k < 0 || k > shape.rank()) return std::nullopt;
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), shape.dims().begin() + k, shape.dims().end());
  return PartialShape(dims);
}

// Indices of rank >= 1 whose last dimension is at most the rank of the tensor they index.
Status check_indices(InferenceContext& c, const PartialShape& indices, const PartialShape& shape,
                     std::string_view what) {
  if (indices.rank_known() && indices.rank() < 1) {
    return c.invalid("indices must be at least a vector, got a scalar");
  }
  if (indices.rank_known() && shape.rank_known()) {
    const int64_t k = indices.dim(indices.rank() - 1);
    if (k > shape.rank()) {
      return c.invalid("indices.shape[-1] must be <= the rank of {}: saw {} vs. {}", what, k,
                       shape.rank());
    }
  }
  return Status::OK();
}

// updates must have the shape indices.shape[:-1] + shape[K:].
Status check_updates(InferenceContext& c, const PartialShape& indices, const PartialShape& updates,
                     const PartialShape& shape) {
  auto expected = slices_shape(indices, shape);
  if (expected && !updates.compatible_with(*expected)) {
    return c.invalid("updates has shape {}, expected indices.shape[:-1] + shape[K:] = {}",
                     updates.to_string(), expected->to_string());
  }
  return Status::OK();
}

Status gather_nd_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_indices(c, c.input(1), c.input(0), "params"));
  auto out = slices_shape(c.input(1), c.input(0));
  c.set_output(0, out ? *out : PartialShape::unknown());
  return Status::OK();
}

Status scatter_nd_shape(InferenceContext& c) {
  PartialShape shape = PartialShape::unknown();
  if (auto dims = c.input_as_ints(2)) {
    for (int64_t d : *dims) {
      if (d < 0) return c.invalid("shape must not have negative dimensions, got {}", d);
    }
    shape = PartialShape(*dims);
  } else if (c.input(2).rank_known() && c.input(2).rank() == 1 && c.input(2).dim(0) >= 0) {
    shape = PartialShape::unknown_of_rank(static_cast<int>(c.input(2).dim(0)));
  }
  if (c.input(2).rank_known() && c.input(2).rank() != 1) {
    return c.invalid("shape must be a vector, got shape {}", c.input(2).to_string());
  }
  TROUPE_RETURN_IF_ERROR(check_indices(c, c.input(0), shape, "shape"));
  TROUPE_RETURN_IF_ERROR(check_updates(c, c.input(0), c.input(1), shape));
  c.set_output(0, shape);
  return Status::OK();
}

// ScatterNd{Update,Add,Sub} and TensorScatter{Update,Add,Sub}: (tensor, indices, updates).
Status scatter_into_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_indices(c, c.input(1), c.input(0), "the tensor"));
  TROUPE_RETURN_IF_ERROR(check_updates(c, c.input(1), c.input(2), c.input(0)));
  c.set_output(0, c.input(0));
  return Status::OK();
}

}  // namespace

void register_scatter_nd_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("GatherNd")
                       .input("params: Tparams")
                       .input("indices: Tindices")
                       .output("output: Tparams")
                       .attr("Tparams: type")
                       .attr("Tindices: {int32, int64}")
                       .shape_fn(gather_nd_shape));
  must_register(r, OpDefBuilder("ScatterNd")
                       .input("indices: Tindices")
                       .input("updates: T")
                       .input("shape: Tindices")
                       .output("output: T")
                       .attr("T: {float32, float64, int32, int64}")
                       .attr("Tindices: {int32, int64}")
                       .shape_fn(scatter_nd_shape));
  for (const std::string op : {"Update", "Add", "Sub"}) {
    const char* types = op == "Update" ? "T: type" : "T: {float32, float64, int32, int64}";
    must_register(
        r, OpDefBuilder("ScatterNd" + op)
               .input("ref: Ref(T)")
               .input("indices: Tindices")
               .input("updates: T")
               .output("output_ref: Ref(T)")
               .attr(types)
               .attr("Tindices: {int32, int64}")
               .attr(op == "Update" ? "use_locking: bool = true" : "use_locking: bool = false")
               .stateful()
               .shape_fn(scatter_into_shape));
    must_register(r, OpDefBuilder("TensorScatter" + op)
                         .input("tensor: T")
                         .input("indices: Tindices")
                         .input("updates: T")
                         .output("output: T")
                         .attr(types)
                         .attr("Tindices: {int32, int64}")
                         .shape_fn(scatter_into_shape));
  }
}

namespace ops {

Output GatherNd(const Scope& s, const Input& params, const Input& indices) {
  return NodeBuilder(s, "GatherNd").input(params).input(indices).finalize();
}

Output ScatterNd(const Scope& s, const Input& indices, const Input& updates, const Input& shape) {
  return NodeBuilder(s, "ScatterNd").input(indices).input(updates).input(shape).finalize();
}

Output ScatterNdRef(const Scope& s, std::string_view op, const Input& ref, const Input& indices,
                    const Input& updates) {
  return NodeBuilder(s, "ScatterNd" + std::string(op))
      .input(ref)
      .input(indices)
      .input(updates)
      .finalize();
}

Output TensorScatter(const Scope& s, std::string_view op, const Input& tensor, const Input& indices,
                     const Input& updates) {
  return NodeBuilder(s, "TensorScatter" + std::string(op))
      .input(tensor)
      .input(indices)
      .input(updates)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
