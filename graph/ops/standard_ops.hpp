// Registration of troupe's built-in ops, one function per family. OpRegistry::global() calls
// register_standard_ops once; a test or tool may call it on a registry of its own.
#pragma once

#include "troupe/graph/op_registry.hpp"

namespace troupe {

void register_array_ops(OpRegistry& registry);
void register_math_ops(OpRegistry& registry);
void register_nn_ops(OpRegistry& registry);
void register_state_ops(OpRegistry& registry);
void register_data_flow_ops(OpRegistry& registry);
void register_dataset_ops(OpRegistry& registry);
void register_parsing_ops(OpRegistry& registry);
void register_training_ops(OpRegistry& registry);
void register_grad_ops(OpRegistry& registry);
void register_internal_ops(OpRegistry& registry);
void register_summary_ops(OpRegistry& registry);
void register_selection_ops(OpRegistry& registry);
void register_random_ops(OpRegistry& registry);
void register_array_manipulation_ops(OpRegistry& registry);
void register_conv_ops(OpRegistry& registry);
void register_control_flow_ops(OpRegistry& registry);
void register_sparse_ops(OpRegistry& registry);
void register_script_ops(OpRegistry& registry);
void register_segment_ops(OpRegistry& registry);
void register_scatter_nd_ops(OpRegistry& registry);
void register_io_ops(OpRegistry& registry);
void register_beam_search_ops(OpRegistry& registry);

inline void register_standard_ops(OpRegistry& registry) {
  register_array_ops(registry);
  register_math_ops(registry);
  register_nn_ops(registry);
  register_state_ops(registry);
  register_data_flow_ops(registry);
  register_dataset_ops(registry);
  register_parsing_ops(registry);
  register_training_ops(registry);
  register_grad_ops(registry);
  register_internal_ops(registry);
  register_summary_ops(registry);
  register_selection_ops(registry);
  register_random_ops(registry);
  register_array_manipulation_ops(registry);
  register_conv_ops(registry);
  register_control_flow_ops(registry);
  register_sparse_ops(registry);
  register_script_ops(registry);
  register_segment_ops(registry);
  register_scatter_nd_ops(registry);
  register_io_ops(registry);
  register_beam_search_ops(registry);
}

// Registers `builder`; a failure here is a bug in troupe, so it ends the process
// (graph/core/check.hpp).
void must_register(OpRegistry& registry, const OpDefBuilder& builder);

}  // namespace troupe
