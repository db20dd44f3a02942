// Builders for the ops of sparse lookups and updates: SparseToDense, Unique (the distinct values
// of a vector),
// DynamicPartition and DynamicStitch (ids split by shard and results put back in order, as a
// partitioned embedding lookup does), and the Scatter updates of a variable's rows
// (ScatterUpdate, ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMin, ScatterMax),
// TensorFlow's state_ops.scatter_*.
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// A dense tensor of `output_shape` holding `default_value` (a scalar), with `sparse_values`
// (one per index, or a scalar for all) at `sparse_indices` ([N, rank], [N] for a vector, or a
// scalar); with validate_indices the indices must be in bounds, sorted and distinct.
Output SparseToDense(const Scope& scope, const Input& sparse_indices, const Input& output_shape,
                     const Input& sparse_values, const Input& default_value,
                     bool validate_indices = true);

struct UniqueOutputs {
  Output y;    // the distinct values of x, in order of first occurrence
  Output idx;  // x[i] == y[idx[i]]; int32 or int64 (out_idx)
};
// The distinct values of the vector `x` and, for each element, its position among them.
UniqueOutputs Unique(const Scope& scope, const Input& x, DataType out_idx = DataType::kInt32);

// Splits `data` into `num_partitions` tensors: the slices data[i...] with partitions[i...] == p,
// in order, go to output p. partitions (int32) has a prefix of data's shape; each output has
// shape [count] + data.shape[partitions.rank:]. A partition outside [0, num_partitions) is
// InvalidArgument naming it.
std::vector<Output> DynamicPartition(const Scope& scope, const Input& data, const Input& partitions,
                                     int64_t num_partitions);
// Interleaves the `data` tensors by `indices` (int32, one tensor per data tensor, each a prefix
// of its shape): merged[indices[m][i...], ...] = data[m][i..., ...]; the merged tensor has
// max(index) + 1 rows (zero where no index names a row; a repeated index takes the later
// value, in the order of the lists). A negative index is InvalidArgument.
Output DynamicStitch(const Scope& scope, const std::vector<Input>& indices,
                     const std::vector<Input>& data);

// ref[indices[i], ...] <op>= updates[i, ...] for each i, in order; outputs the reference.
// updates has shape indices.shape + ref.shape[1:] (or is a scalar, for every element); an index
// outside [0, ref.shape[0]) is InvalidArgument naming it, and nothing is written. Duplicate indices
// apply one after another (ScatterAdd sums them; ScatterUpdate keeps the last). `op` is "Update",
// "Add", "Sub", "Mul", "Div", "Min" or "Max".
Output Scatter(const Scope& scope, std::string_view op, const Input& ref, const Input& indices,
               const Input& updates);
Output ScatterUpdate(const Scope& scope, const Input& ref, const Input& indices,
                     const Input& updates);
Output ScatterAdd(const Scope& scope, const Input& ref, const Input& indices, const Input& updates);
Output ScatterSub(const Scope& scope, const Input& ref, const Input& indices, const Input& updates);

}  // namespace troupe::ops
