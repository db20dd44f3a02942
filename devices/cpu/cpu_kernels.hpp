// Registration of the CPU kernels, one function per family (devices/cpu/*_kernels.cpp).
#pragma once

#include "troupe/devices/kernel_registry.hpp"

namespace troupe {

inline constexpr const char* kCpu = "CPU";

void register_array_kernels(KernelRegistry& registry);
void register_state_kernels(KernelRegistry& registry);
void register_binary_kernels(KernelRegistry& registry);
void register_unary_kernels(KernelRegistry& registry);
void register_matmul_kernels(KernelRegistry& registry);
void register_reduction_kernels(KernelRegistry& registry);
void register_nn_kernels(KernelRegistry& registry);
void register_cast_kernels(KernelRegistry& registry);
void register_queue_kernels(KernelRegistry& registry);
void register_sendrecv_kernels(KernelRegistry& registry);
void register_grad_kernels(KernelRegistry& registry);
void register_training_kernels(KernelRegistry& registry);
void register_accumulator_kernels(KernelRegistry& registry);
void register_summary_kernels(KernelRegistry& registry);
void register_selection_kernels(KernelRegistry& registry);
void register_random_kernels(KernelRegistry& registry);
void register_candidate_sampler_kernels(KernelRegistry& registry);
void register_join_split_kernels(KernelRegistry& registry);
void register_slice_kernels(KernelRegistry& registry);
void register_reorder_kernels(KernelRegistry& registry);
void register_sequence_kernels(KernelRegistry& registry);
void register_conv_kernels(KernelRegistry& registry);
void register_pooling_kernels(KernelRegistry& registry);
void register_scan_kernels(KernelRegistry& registry);
void register_beam_search_kernels(KernelRegistry& registry);
void register_control_flow_kernels(KernelRegistry& registry);
void register_sparse_kernels(KernelRegistry& registry);
void register_parsing_kernels(KernelRegistry& registry);
void register_segment_kernels(KernelRegistry& registry);
void register_scatter_nd_kernels(KernelRegistry& registry);
void register_checkpoint_kernels(KernelRegistry& registry);

inline void register_cpu_kernels(KernelRegistry& registry) {
  register_array_kernels(registry);
  register_state_kernels(registry);
  register_binary_kernels(registry);
  register_unary_kernels(registry);
  register_matmul_kernels(registry);
  register_reduction_kernels(registry);
  register_nn_kernels(registry);
  register_cast_kernels(registry);
  register_queue_kernels(registry);
  register_sendrecv_kernels(registry);
  register_grad_kernels(registry);
  register_training_kernels(registry);
  register_accumulator_kernels(registry);
  register_summary_kernels(registry);
  register_selection_kernels(registry);
  register_random_kernels(registry);
  register_candidate_sampler_kernels(registry);
  register_join_split_kernels(registry);
  register_slice_kernels(registry);
  register_reorder_kernels(registry);
  register_sequence_kernels(registry);
  register_conv_kernels(registry);
  register_pooling_kernels(registry);
  register_scan_kernels(registry);
  register_beam_search_kernels(registry);
  register_control_flow_kernels(registry);
  register_sparse_kernels(registry);
  register_parsing_kernels(registry);
  register_segment_kernels(registry);
  register_scatter_nd_kernels(registry);
  register_checkpoint_kernels(registry);
}

}  // namespace troupe
