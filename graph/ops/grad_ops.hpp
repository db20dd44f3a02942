// Builders for the helper ops gradient functions build (graph/gradients/): summing gradients,
// zeros and ones shaped like a tensor, broadcasting and its reduction axes, and the fused
// backward ops of activations and BiasAdd. They are ordinary ops, usable in any graph; names and
// semantics are TensorFlow's.
#pragma once

#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// The element-wise sum of `inputs` (at least one), which must all have the same dtype and shape
// (no broadcasting).
Output AddN(const Scope& scope, const std::vector<Input>& inputs);

// A tensor of x's dtype and shape filled with 0 (ZerosLike) or 1 (OnesLike).
Output ZerosLike(const Scope& scope, const Input& x);
Output OnesLike(const Scope& scope, const Input& x);

// The number of elements of `input`, a scalar of `out_type` (int32 or int64).
Output Size(const Scope& scope, const Input& input, DataType out_type = DataType::kInt32);

// For shapes s0 and s1 (int32 or int64 vectors) that broadcast together (numpy rules): r0 and
// r1 are the axes of the broadcast result, ascending, that the gradient of each side must be
// summed over — the axes where that side has size 1 (or no dimension) — as TensorFlow's
// BroadcastGradientArgs: an axis where both sides have size 1 is listed for both.
struct BroadcastGradientArgsOutputs {
  Output r0;
  Output r1;
};
BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& scope, const Input& s0,
                                                   const Input& s1);

// `input` broadcast (numpy rules) to exactly `shape` (an int32 or int64 vector): input's rank is
// at most shape's length, and each of its dimensions, aligned at the end, is 1 or equal.
Output BroadcastTo(const Scope& scope, const Input& input, const Input& shape);

// gradients where features > 0, else 0: the gradient of Relu. `features` may be Relu's input or
// its output (both are > 0 at the same places).
Output ReluGrad(const Scope& scope, const Input& gradients, const Input& features);
// dy * y * (1 - y), where y = Sigmoid(x): the gradient of Sigmoid with respect to x.
Output SigmoidGrad(const Scope& scope, const Input& y, const Input& dy);
// dy * (1 - y^2), where y = Tanh(x): the gradient of Tanh with respect to x.
Output TanhGrad(const Scope& scope, const Input& y, const Input& dy);
// out_backprop (rank >= 2) summed over every dimension but the last: the gradient of BiasAdd
// with respect to its bias.
Output BiasAddGrad(const Scope& scope, const Input& out_backprop);

}  // namespace troupe::ops
