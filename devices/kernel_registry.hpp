// KernelRegistry: which kernel computes an op on a device type.
//
// A factory gets the node (attributes checked) and decides, usually from the dtype attribute,
// which kernel class to build; it returns an error for a dtype it has no kernel for.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>

#include "troupe/devices/op_kernel.hpp"

namespace troupe {

using KernelFactory =
    std::function<StatusOr<std::unique_ptr<OpKernel>>(const OpKernelConstruction&)>;

class KernelRegistry {
 public:
  // The process-wide registry, with every built-in kernel registered.
  static KernelRegistry& global();

  // AlreadyExists if (op, device_type) has a kernel.
  Status add(std::string op, std::string device_type, KernelFactory factory);
  bool has_kernel(const std::string& op, const std::string& device_type) const;

  // The kernel for `node` on `device`; Unimplemented naming the node, op and device if there
  // is none, or the factory's error.
  StatusOr<std::unique_ptr<OpKernel>> create(const Node& node, Device& device) const;
  // The kernel that `device_type` has for `node`, built for `device`: a GPU device runs the CPU
  // kernels of its host-memory ops (devices/gpu/host_kernel.hpp) this way.
  StatusOr<std::unique_ptr<OpKernel>> create(const Node& node, Device& device,
                                             const std::string& device_type) const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::pair<std::string, std::string>, KernelFactory> factories_;
};

// Registers `factory`; a failure is a bug in troupe, so it ends the process
// (graph/core/check.hpp).
void must_add_kernel(KernelRegistry& registry, std::string op, std::string device_type,
                     KernelFactory factory);

// A factory that builds Kernel<T> for the C++ type T named by the node's `attr`, for the
// types the op allows (Floating: float/double; Numeric: also int32/int64; All: also bool and
// string). TROUPE_SWITCH picks the set.
#define TROUPE_DEFINE_TYPED_FACTORY(NAME, TROUPE_SWITCH)                                  \
  template <template <class> class Kernel>                                                \
  KernelFactory NAME(std::string attr = "T") {                                            \
    return [attr](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> { \
      DataType dtype = c.attr<DataType>(attr);                                            \
      TROUPE_SWITCH(dtype, T, return std::unique_ptr<OpKernel>(new Kernel<T>(c)));        \
      return errors::Unimplemented("node '{}' ({}): no kernel for {} = {}", c.name(),     \
                                   c.node().op_name(), attr, dtype_name(dtype));          \
    };                                                                                    \
  }
TROUPE_DEFINE_TYPED_FACTORY(floating_kernel, TROUPE_SWITCH_FLOATING)
TROUPE_DEFINE_TYPED_FACTORY(numeric_kernel, TROUPE_SWITCH_NUMERIC)
TROUPE_DEFINE_TYPED_FACTORY(numeric_or_uint8_kernel, TROUPE_SWITCH_NUMERIC_OR_UINT8)
TROUPE_DEFINE_TYPED_FACTORY(any_type_kernel, TROUPE_SWITCH_ALL)
#undef TROUPE_DEFINE_TYPED_FACTORY

// A factory for a kernel class that handles every dtype itself.
template <class Kernel>
KernelFactory simple_kernel() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new Kernel(c));
  };
}

}  // namespace troupe
