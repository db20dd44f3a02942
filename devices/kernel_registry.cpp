// KernelRegistry: registration and lookup; the global registry's CPU kernels.
#include "troupe/devices/kernel_registry.hpp"

#include <mutex>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/devices/py_func.hpp"
#ifdef TROUPE_HAVE_CUDA
#include "troupe/devices/gpu/gpu_kernels.hpp"
#endif
#include "troupe/graph/core/check.hpp"

namespace troupe {

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();  // never destroyed: devices may outlive static destructors
    register_cpu_kernels(*r);
    data::register_dataset_kernels(*r);
    register_py_func_kernels(*r);
#ifdef TROUPE_HAVE_CUDA
    register_gpu_kernels(*r);
#endif
    return r;
  }();
  return *registry;
}

Status KernelRegistry::add(std::string op, std::string device_type, KernelFactory factory) {
  std::unique_lock lock(mutex_);
  auto key = std::make_pair(std::move(op), std::move(device_type));
  if (factories_.count(key) > 0) {
    return errors::AlreadyExists("a {} kernel for op '{}' is already registered", key.second,
                                 key.first);
  }
  factories_.emplace(std::move(key), std::move(factory));
  return Status::OK();
}

bool KernelRegistry::has_kernel(const std::string& op, const std::string& device_type) const {
  std::shared_lock lock(mutex_);
  return factories_.count(std::make_pair(op, device_type)) > 0;
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::create(const Node& node, Device& device) const {
  return create(node, device, device.type());
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::create(const Node& node, Device& device,
                                                           const std::string& device_type) const {
  KernelFactory factory;
  {
    std::shared_lock lock(mutex_);
    auto it = factories_.find(std::make_pair(node.op_name(), device_type));
    if (it == factories_.end()) {
      return errors::Unimplemented("node '{}': op '{}' has no {} kernel (device {})", node.name(),
                                   node.op_name(), device_type, device.name());
    }
    factory = it->second;
  }
  return factory(OpKernelConstruction(node, device));
}

void must_add_kernel(KernelRegistry& registry, std::string op, std::string device_type,
                     KernelFactory factory) {
  TROUPE_CHECK_OK(registry.add(std::move(op), std::move(device_type), std::move(factory)));
}

}  // namespace troupe
