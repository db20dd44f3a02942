// Sparse update ops: definitions, shape functions and builders.
#include "troupe/graph/ops/sparse_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status unique_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() != 1) {
    return c.invalid("x must be a vector, got shape {}", c.input(0).to_string());
  }
  c.set_output(0, PartialShape({-1}));
  c.set_output(1, c.input(0).rank_known() ? c.input(0) : PartialShape({-1}));
  return Status::OK();
}

// updates: indices.shape + ref.shape[1:]; the output is the reference.
Status scatter_shape(InferenceContext& c) {
  const PartialShape& ref = c.input(0);
  const PartialShape& indices = c.input(1);
  const PartialShape& updates = c.input(2);
  if (ref.rank_known() && ref.rank() == 0) {
    return c.invalid("the variable must have rank >= 1, got a scalar");
  }
  if (ref.rank_known() && indices.rank_known() && !(updates.rank_known() && updates.rank() == 0)) {
    std::vector<int64_t> dims = indices.dims();
    dims.insert(dims.end(), ref.dims().begin() + 1, ref.dims().end());
    if (!updates.compatible_with(PartialShape(dims))) {
      return c.invalid("updates has shape {}, expected indices.shape + ref.shape[1:] = {}",
                       updates.to_string(), PartialShape(dims).to_string());
    }
  }
  c.set_output(0, ref);
  return Status::OK();
}

Status dynamic_partition_shape(InferenceContext& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& partitions = c.input(1);
  PartialShape out = PartialShape::unknown();
  if (data.rank_known() && partitions.rank_known()) {
    if (partitions.rank() > data.rank()) {
      return c.invalid("partitions (shape {}) must be a prefix of data's shape {}",
                       partitions.to_string(), data.to_string());
    }
    for (int d = 0; d < partitions.rank(); ++d) {
      if (partitions.dim(d) >= 0 && data.dim(d) >= 0 && partitions.dim(d) != data.dim(d)) {
        return c.invalid("partitions (shape {}) must be a prefix of data's shape {}",
                         partitions.to_string(), data.to_string());
      }
    }
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), data.dims().begin() + partitions.rank(), data.dims().end());
    out = PartialShape(dims);
  }
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, out);
  return Status::OK();
}

// merged: [?] + data[0].shape[indices[0].rank:].
Status dynamic_stitch_shape(InferenceContext& c) {
  const int n = c.num_inputs() / 2;
  PartialShape out = PartialShape::unknown();
  for (int m = 0; m < n; ++m) {
    const PartialShape& indices = c.input(m);
    const PartialShape& data = c.input(n + m);
    if (!indices.rank_known() || !data.rank_known()) continue;
    if (indices.rank() > data.rank()) {
      return c.invalid("indices[{}] (shape {}) must be a prefix of data[{}]'s shape {}", m,
                       indices.to_string(), m, data.to_string());
    }
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), data.dims().begin() + indices.rank(), data.dims().end());
    auto merged = out.merge(PartialShape(dims));
    if (!merged.ok()) {
      return c.invalid("data[{}] has shape {}; its slices must match the other data's, {}", m,
                       data.to_string(), out.to_string());
    }
    out = *merged;
  }
  c.set_output(0, out);
  return Status::OK();
}

}  // namespace

void register_sparse_ops(OpRegistry& r) {
  // A dense tensor of output_shape holding default_value, with sparse_values (one per index,
  // or one for all) at sparse_indices ([N, rank], [N] for a vector, or a scalar). With
  // validate_indices, the indices must be in bounds, sorted and distinct.
  must_register(r, OpDefBuilder("SparseToDense")
                       .input("sparse_indices: Tindices")
                       .input("output_shape: Tindices")
                       .input("sparse_values: T")
                       .input("default_value: T")
                       .output("dense: T")
                       .attr("validate_indices: bool = true")
                       .attr("T: type")
                       .attr("Tindices: {int32, int64}")
                       .shape_fn([](InferenceContext& c) -> Status {
                         if (auto dims = c.input_as_ints(1)) {
                           c.set_output(0, PartialShape(*dims));
                         } else if (c.input(1).rank_known() && c.input(1).rank() == 1 &&
                                    c.input(1).dim(0) >= 0) {
                           c.set_output(0, PartialShape::unknown_of_rank(
                                               static_cast<int>(c.input(1).dim(0))));
                         } else {
                           c.set_output(0, PartialShape::unknown());
                         }
                         if (c.input(3).rank_known() && c.input(3).rank() != 0) {
                           return c.invalid("default_value should be a scalar, got shape {}",
                                            c.input(3).to_string());
                         }
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("DynamicPartition")
                       .input("data: T")
                       .input("partitions: int32")
                       .output("outputs: num_partitions * T")
                       .attr("num_partitions: int >= 1")
                       .attr("T: type")
                       .shape_fn(dynamic_partition_shape));
  must_register(r, OpDefBuilder("DynamicStitch")
                       .input("indices: N * int32")
                       .input("data: N * T")
                       .output("merged: T")
                       .attr("N: int >= 1")
                       .attr("T: type")
                       .shape_fn(dynamic_stitch_shape));
  must_register(r, OpDefBuilder("Unique")
                       .input("x: T")
                       .output("y: T")
                       .output("idx: out_idx")
                       .attr("T: {float32, float64, int32, int64, string, bool}")
                       .attr("out_idx: {int32, int64} = int32")
                       .shape_fn(unique_shape));
  for (const char* name : {"ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
                           "ScatterMin", "ScatterMax"}) {
    const bool update = std::string_view(name) == "ScatterUpdate";
    must_register(r, OpDefBuilder(name)
                         .input("ref: Ref(T)")
                         .input("indices: Tindices")
                         .input("updates: T")
                         .output("output_ref: Ref(T)")
                         .attr(update ? "T: type" : "T: {float32, float64, int32, int64}")
                         .attr("Tindices: {int32, int64}")
                         .attr(update ? "use_locking: bool = true" : "use_locking: bool = false")
                         .stateful()
                         .shape_fn(scatter_shape));
  }
}

namespace ops {

Output SparseToDense(const Scope& s, const Input& sparse_indices, const Input& output_shape,
                     const Input& sparse_values, const Input& default_value,
                     bool validate_indices) {
  return NodeBuilder(s, "SparseToDense")
      .input(sparse_indices)
      .input(output_shape)
      .input(sparse_values)
      .input(default_value)
      .attr("validate_indices", validate_indices)
      .finalize();
}

UniqueOutputs Unique(const Scope& s, const Input& x, DataType out_idx) {
  Operation op = NodeBuilder(s, "Unique").input(x).attr("out_idx", out_idx).finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

std::vector<Output> DynamicPartition(const Scope& s, const Input& data, const Input& partitions,
                                     int64_t num_partitions) {
  Operation op = NodeBuilder(s, "DynamicPartition")
                     .input(data)
                     .input(partitions)
                     .attr("num_partitions", num_partitions)
                     .finalize();
  std::vector<Output> outs;
  if (!op.valid()) return outs;
  for (int64_t i = 0; i < num_partitions; ++i)
    outs.emplace_back(op, static_cast<int>(i));
  return outs;
}

Output DynamicStitch(const Scope& s, const std::vector<Input>& indices,
                     const std::vector<Input>& data) {
  return NodeBuilder(s, "DynamicStitch").input_list(indices).input_list(data).finalize();
}

Output Scatter(const Scope& s, std::string_view op, const Input& ref, const Input& indices,
               const Input& updates) {
  return NodeBuilder(s, "Scatter" + std::string(op))
      .input(ref)
      .input(indices)
      .input(updates)
      .finalize();
}

Output ScatterUpdate(const Scope& s, const Input& ref, const Input& indices, const Input& updates) {
  return Scatter(s, "Update", ref, indices, updates);
}

Output ScatterAdd(const Scope& s, const Input& ref, const Input& indices, const Input& updates) {
  return Scatter(s, "Add", ref, indices, updates);
}

Output ScatterSub(const Scope& s, const Input& ref, const Input& indices, const Input& updates) {
  return Scatter(s, "Sub", ref, indices, updates);
}

}  // namespace ops
}  // namespace troupe
