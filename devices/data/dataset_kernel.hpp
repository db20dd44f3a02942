// What the dataset ops' kernels share: a base class that outputs the dataset a subclass makes,
// and readers for their inputs (a dataset reference, a scalar argument) that name the node and
// the argument in errors.
#pragma once

#include <memory>
#include <string_view>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/data/dataset.hpp"
#include "troupe/devices/kernel_registry.hpp"

namespace troupe::data {

class DatasetOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) final;

 protected:
  // The dataset this run of the node describes; errors are recorded as they are.
  virtual StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) = 0;
};

// A new dataset of type T, as make_dataset returns it.
template <class T, class... Args>
std::shared_ptr<const DatasetBase> new_dataset(Args&&... args) {
  return std::make_shared<T>(std::forward<Args>(args)...);
}

// The dataset behind reference input `i`.
StatusOr<std::shared_ptr<const DatasetBase>> dataset_input(const OpKernelContext& ctx, int i);

// Input `i`, a scalar of dtype T; InvalidArgument naming the node and `what` otherwise.
template <class T>
StatusOr<T> scalar_input(const OpKernelContext& ctx, int i, std::string_view what) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != dtype_of<T> || t.rank() != 0) {
    return errors::InvalidArgument("node '{}' ({}): {} must be a {} scalar, got {} of shape {}",
                                   ctx.node().name(), ctx.node().op_name(), what,
                                   dtype_name(dtype_of<T>), dtype_name(t.dtype()),
                                   t.shape().to_string());
  }
  return t.scalar<T>();
}

// InvalidArgument "node 'n' (Op): <message>".
template <class... Args>
Status invalid(const OpKernelContext& ctx, fmt::format_string<Args...> format, Args&&... args) {
  return errors::InvalidArgument("node '{}' ({}): {}", ctx.node().name(), ctx.node().op_name(),
                                 fmt::format(format, std::forward<Args>(args)...));
}

void register_source_dataset_kernels(KernelRegistry& registry);
void register_file_dataset_kernels(KernelRegistry& registry);
void register_transform_dataset_kernels(KernelRegistry& registry);
void register_function_dataset_kernels(KernelRegistry& registry);
void register_iterator_kernels(KernelRegistry& registry);

inline void register_dataset_kernels(KernelRegistry& registry) {
  register_source_dataset_kernels(registry);
  register_file_dataset_kernels(registry);
  register_transform_dataset_kernels(registry);
  register_function_dataset_kernels(registry);
  register_iterator_kernels(registry);
}

}  // namespace troupe::data
