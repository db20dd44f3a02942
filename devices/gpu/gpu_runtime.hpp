// The GPUs this process can use, and opening one as a GpuContext (gpu_context.hpp).
//
// Always built: without CUDA (TROUPE_CUDA=OFF, or no toolkit found) there are no GPUs. The CUDA
// runtime's CUDA_VISIBLE_DEVICES decides which of the machine's GPUs a process sees.
#pragma once

#include <memory>
#include <string>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class GpuContext;

// Whether this build of troupe has the CUDA device.
bool built_with_cuda();

// How many GPUs the process can use: 0 without CUDA, a driver or a GPU.
int gpu_count();

// Why gpu_count() is 0 ("built without CUDA", "no CUDA driver: ...", "no GPU"), or "" if it
// is not.
std::string why_no_gpu();

// The context of GPU `ordinal` (its stream, cuBLAS handle and memory): FailedPrecondition
// without that GPU, or the CUDA error that stopped it.
StatusOr<std::shared_ptr<GpuContext>> open_gpu(int ordinal);

}  // namespace troupe
