// Builders for array ops: constants, placeholders, identity, shapes.
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// A constant. `value` may be a Tensor or a literal: 3.f, "text", {1, 2}, {{1.f, 2.f}}.
Output Const(const Scope& scope, const Input& value);
// A constant of `shape` with every element equal to the single element of `value`.
Output Const(const Scope& scope, const Input& value, const TensorShape& shape);

// A value the caller must feed at run time (feeding it is checked against dtype and shape).
Output Placeholder(const Scope& scope, DataType dtype,
                   const PartialShape& shape = PartialShape::unknown());

// `input` unless the step feeds this node another value of `shape`.
Output PlaceholderWithDefault(const Scope& scope, const Input& input, const PartialShape& shape);

Output Identity(const Scope& scope, const Input& input);
// The input, as Identity, through which no gradient flows (tf.stop_gradient).
Output StopGradient(const Scope& scope, const Input& input);
// `input`, unchanged, if it has the shape of `like` (of any dtype); InvalidArgument otherwise,
// when building where both shapes are known and when running where they are not.
Output EnsureShapeLike(const Scope& scope, const Input& input, const Input& like);
// Does nothing; a point to hang control dependencies on.
Operation NoOp(const Scope& scope);
// `tensor` with a new shape; one dimension of `shape` may be -1 (inferred).
Output Reshape(const Scope& scope, const Input& tensor, const Input& shape);
// The shape of `input` as a vector of `out_type` (int32 or int64).
Output Shape(const Scope& scope, const Input& input, DataType out_type = DataType::kInt32);
// A tensor of shape `dims` filled with the scalar `value`.
Output Fill(const Scope& scope, const Input& dims, const Input& value);

}  // namespace troupe::ops
