// GpuContext: one GPU as a device sees it — the CUDA stream every kernel of the device runs on,
// the cuBLAS handle bound to it, the caching allocator of its memory, and the copies between
// host and GPU memory.
//
// Ordering: everything runs on the one stream, in the order the device's executor launches it,
// so a buffer freed back to the allocator may be handed to the next kernel at once (it runs
// after every earlier use), as PyTorch's caching allocator reasons. Host code never reads GPU
// memory: it copies to the host (to_host, which waits for the stream) first.
// Thread-safety: allocation and release are thread-safe; launches and copies are made from the
// device actor's thread, one kernel at a time.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "troupe/devices/gpu/cublas_library.hpp"
#include "troupe/devices/gpu/gpu_allocator.hpp"
#include "troupe/devices/gpu/gpu_profiler.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class GpuContext : public std::enable_shared_from_this<GpuContext> {
 public:
  // Creates the stream and the cuBLAS handle of GPU `ordinal`.
  static StatusOr<std::shared_ptr<GpuContext>> create(int ordinal);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int ordinal() const { return ordinal_; }
  // This context's number in the process (1, 2, ...: never reused), for caches of what is
  // bound to one context's handles.
  uint64_t serial() const { return serial_; }
  const std::string& device_name() const { return name_; }  // "NVIDIA H100 80GB HBM3"
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  // The cuBLAS functions (cublas_library.hpp), loaded when the first GPU opened.
  const CublasLibrary& cublas_api() const { return *cublas_api_; }
  GpuAllocator& allocator() { return allocator_; }
  // The profiler of this GPU's launches when TROUPE_GPU_PROFILE is set, else nullptr.
  GpuProfiler* profiler() const { return profiler_.get(); }

  // The cuDNN handle on this GPU's stream (a cudnnHandle_t), made the first time it is asked
  // for; nullptr where troupe was built without cuDNN's header or cuDNN cannot be loaded (then
  // convolutions are im2col products on cuBLAS).
  void* cudnn();

  // Makes this GPU current on the calling thread (CUDA's current device is per thread, and the
  // device actor may run on any of the actor system's threads).
  Status activate() const;

  // An uninitialised tensor in this GPU's memory. ResourceExhausted naming the GPU when even
  // a freed cache cannot hold it.
  StatusOr<Tensor> allocate(DataType dtype, const TensorShape& shape);

  // A copy in GPU memory of host tensor `host` (numeric dtypes), queued on the stream without
  // waiting: straight from `host` when its memory is pinned (large tensors: their BufferPool
  // memory is registered with CUDA once a GPU is open), through pinned staging memory when it
  // is not (up to 64 MiB), else from pageable memory (CUDA's own staging). `host` is kept alive
  // until the copy has run.
  StatusOr<Tensor> to_device(const Tensor& host);
  // A host copy of GPU tensor `device`; waits for the stream (and so for every kernel queued).
  StatusOr<Tensor> to_host(const Tensor& device);
  // `tensor` if it is in this GPU's memory already, else to_device(tensor).
  StatusOr<Tensor> on_device(const Tensor& tensor);
  // `tensor` if it is in host memory already, else to_host(tensor).
  StatusOr<Tensor> on_host(const Tensor& tensor);

  // Waits for everything queued on the stream; the first error of a kernel, if any.
  Status synchronize();

  // Internal (named after the failed call) for a CUDA error, naming this GPU; OK for success.
  Status check(cudaError_t error, const char* what) const;
  Status check(cublasStatus_t status, const char* what) const;

 private:
  explicit GpuContext(int ordinal);
  struct Staging;
  struct InFlight;
  // Drops the host tensors whose copies have finished.
  void reap_in_flight_locked();

  int ordinal_;
  uint64_t serial_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  const CublasLibrary* cublas_api_ = nullptr;
  void* cudnn_ = nullptr;
  bool cudnn_tried_ = false;
  GpuAllocator allocator_;
  std::mutex staging_mutex_;
  std::vector<std::unique_ptr<Staging>> staging_;
  std::deque<InFlight> in_flight_;  // copies from pinned host tensors, oldest first
  std::vector<cudaEvent_t> free_events_;
  std::unique_ptr<GpuProfiler> profiler_;
};

// Internal naming the CUDA call and error, for code that has no context at hand.
Status cuda_status(cudaError_t error, const char* what);

}  // namespace troupe
