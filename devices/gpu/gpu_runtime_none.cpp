// gpu_runtime.hpp for builds without CUDA: no GPUs.
#include "troupe/devices/gpu/gpu_runtime.hpp"

namespace troupe {

bool built_with_cuda() {
  return false;
}
int gpu_count() {
  return 0;
}
std::string why_no_gpu() {
  return "built without CUDA";
}

StatusOr<std::shared_ptr<GpuContext>> open_gpu(int ordinal) {
  return errors::FailedPrecondition(
      "GPU:{} does not exist: this troupe was built without CUDA (cmake -DTROUPE_CUDA=ON)",
      ordinal);
}

}  // namespace troupe
