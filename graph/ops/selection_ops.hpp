// Builders for ops that assemble or select elements: Pack (tf.stack), Where (the coordinates of
// true elements), Select (tf.where(c, t, e)), GatherV2 (tf.gather; its adjoint
// UnsortedSegmentSum is in segment_ops.hpp), and LogicalNot.
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// Stacks tensors of one shape into one of rank + 1, along `axis` (negative counts from the
// end, in [-(rank + 1), rank]).
Output Pack(const Scope& scope, const std::vector<Input>& values, int64_t axis = 0);
// The coordinates of the true elements of a bool tensor, row-major: int64 [num_true, rank].
Output Where(const Scope& scope, const Input& condition);
// Slices of `params` along `axis` at `indices` (int32 or int64, each in [0, dim)):
// params.shape[:axis] + indices.shape + params.shape[axis + 1:].
Output GatherV2(const Scope& scope, const Input& params, const Input& indices, const Input& axis);
// Elements of `t` where `condition` is true, else of `e` (TensorFlow 1.x's Select: t and e of
// one shape; the condition a scalar, of their shape, or a vector choosing whole rows).
Output Select(const Scope& scope, const Input& condition, const Input& t, const Input& e);
Output LogicalNot(const Scope& scope, const Input& x);

}  // namespace troupe::ops
