// Registration of the gradients of troupe's built-in ops, one function per op family
// (graph/gradients/*_grad.cpp), and the shape helpers those gradient functions share.
// GradientRegistry::global() calls register_standard_gradients once; a test or tool may call it
// on a registry of its own.
#pragma once

#include <optional>
#include <vector>

#include "troupe/graph/gradient_registry.hpp"

namespace troupe {

void register_array_gradients(GradientRegistry& registry);
void register_array_manipulation_gradients(GradientRegistry& registry);
void register_conv_gradients(GradientRegistry& registry);
void register_selection_gradients(GradientRegistry& registry);
void register_math_gradients(GradientRegistry& registry);
void register_nn_gradients(GradientRegistry& registry);
void register_sparse_gradients(GradientRegistry& registry);
void register_segment_gradients(GradientRegistry& registry);
void register_scatter_nd_gradients(GradientRegistry& registry);
// State, queue and runtime-internal ops: none of them has a gradient.
void register_state_gradients(GradientRegistry& registry);

// The shape of `x` as a vector of `out_type` (int32 or int64): a constant when x's shape is
// fully known while building (so shape inference downstream knows it too), else Shape(x).
Output shape_of(const Scope& scope, const Output& x, DataType out_type = DataType::kInt32);
// The values of `output` if a Const node makes it and it is an int32 or int64 scalar or vector
// (an axis, a shape), else nullopt.
std::optional<std::vector<int64_t>> constant_ints(const Output& output);

inline void register_standard_gradients(GradientRegistry& registry) {
  register_array_gradients(registry);
  register_array_manipulation_gradients(registry);
  register_conv_gradients(registry);
  register_selection_gradients(registry);
  register_math_gradients(registry);
  register_nn_gradients(registry);
  register_sparse_gradients(registry);
  register_segment_gradients(registry);
  register_scatter_nd_gradients(registry);
  register_state_gradients(registry);
}

}  // namespace troupe
