// HostKernel: a CPU kernel run by a GPU device, for the ops whose values live in host memory
// there (shapes, indices, steps, predicates: every dtype but float32, as TensorFlow's
// HostMemory arguments) and for the cases a CUDA kernel leaves to the CPU (its error messages
// among them).
//
// Inputs in GPU memory are copied to the host first (waiting for the stream); outputs stay on
// the host, and a GPU kernel that takes one copies it to the GPU. The wrapped kernel must not
// write a variable whose value is in GPU memory: float32 variables of a GPU device are updated
// by GPU kernels only.
#pragma once

#include <memory>

#include "troupe/devices/kernel_registry.hpp"

namespace troupe {

// The CPU kernel of c's node, wrapped: a HostKernel, or an async one for an async CPU kernel.
StatusOr<std::unique_ptr<OpKernel>> make_host_kernel(const OpKernelConstruction& c);

// A factory of make_host_kernel.
KernelFactory host_kernel();

// A factory of the CPU kernel itself, for kernels that never read or write element data
// (Identity, Reshape, NoOp, Variable, _Arg, _Recv): they run as well on GPU tensors.
KernelFactory cpu_kernel_as_is();

// Runs `kernel` (a synchronous kernel built for a GPU device) on host copies of ctx's inputs.
void compute_on_host(OpKernel& kernel, OpKernelContext& ctx);

}  // namespace troupe
