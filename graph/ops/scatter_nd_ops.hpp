// Builders for the N-dimensional gathers and scatters of TensorFlow 1.x (array_ops.gather_nd,
// scatter_nd, state_ops.scatter_nd_update/add/sub, tensor_scatter_update/add/sub): `indices`
// (int32 or int64) of shape [..., K] names K-dimensional positions, each a slice of shape
// shape[K:] of the tensor indexed; an index outside that tensor is InvalidArgument naming the
// node, the position in indices and the index, and nothing is written.
#pragma once

#include <string_view>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// output[i...] = params[indices[i..., :]]: shape indices.shape[:-1] + params.shape[K:].
Output GatherNd(const Scope& scope, const Input& params, const Input& indices);
// A zero tensor of `shape` (a vector of indices' dtype) with each updates slice added at its
// index (duplicates sum): updates has shape indices.shape[:-1] + shape[K:].
Output ScatterNd(const Scope& scope, const Input& indices, const Input& updates,
                 const Input& shape);
// The variable `ref` with updates written ("Update"), added ("Add") or subtracted ("Sub") at
// indices, in place, where the variable lives; the reference is the output.
Output ScatterNdRef(const Scope& scope, std::string_view op, const Input& ref, const Input& indices,
                    const Input& updates);
// A copy of `tensor` with updates written ("Update"), added ("Add") or subtracted ("Sub").
Output TensorScatter(const Scope& scope, std::string_view op, const Input& tensor,
                     const Input& indices, const Input& updates);

}  // namespace troupe::ops
