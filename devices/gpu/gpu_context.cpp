// GpuContext: the stream, cuBLAS, GPU buffers, staged copies; and the GPU count (gpu_runtime.hpp)
// of a build with CUDA.
#include "troupe/devices/gpu/gpu_context.hpp"

#include <atomic>

#include <cstring>

#include "troupe/graph/core/buffer_pool.hpp"

#include "troupe/devices/gpu/cudnn_library.hpp"
#include "troupe/devices/gpu/gpu_runtime.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

// Memory of one GPU behind tensors: given back to the context's allocator when the last tensor
// lets go of it, which may be on any thread (see the ordering in gpu_context.hpp).
class GpuBuffer final : public TensorBuffer {
 public:
  GpuBuffer(std::shared_ptr<GpuContext> context, void* data, size_t bytes)
      : TensorBuffer(data, bytes, /*on_host=*/false), context_(std::move(context)) {}
  ~GpuBuffer() override { context_->allocator().release(data(), size()); }

  // A copy made on the stream; std::bad_alloc when the GPU has no memory for it (the executor
  // reports that as ResourceExhausted).
  std::shared_ptr<TensorBuffer> duplicate() const override {
    auto block = context_->allocator().allocate(size());
    if (!block.ok()) throw std::bad_alloc();
    auto copy = std::make_shared<GpuBuffer>(context_, *block, size());
    if (size() > 0) {
      cudaMemcpyAsync(*block, data(), size(), cudaMemcpyDeviceToDevice, context_->stream());
    }
    return copy;
  }

 private:
  std::shared_ptr<GpuContext> context_;
};

// Pinned host memory for copies to the GPU that need not wait: reusable once `done` (recorded
// after the copy) has passed.
constexpr size_t kStagingLimit = size_t{64} << 20;  // larger copies go straight from the host
constexpr size_t kStagingSlots = 16;

struct GpuCount {
  int count = 0;
  std::string why;
};

const GpuCount& probe_gpus() {
  static const GpuCount result = [] {
    GpuCount r;
    cudaError_t error = cudaGetDeviceCount(&r.count);
    if (error != cudaSuccess) {
      r.count = 0;
      r.why = std::string("no CUDA driver or GPU: ") + cudaGetErrorString(error);
      cudaGetLastError();
    } else if (r.count == 0) {
      r.why = "no GPU";
    }
    return r;
  }();
  return result;
}

// BufferPool hooks: every large host buffer mapped from now on is pinned (page-locked and
// registered with CUDA), so copies of large host tensors go to and from GPUs by DMA. A
// registration that fails leaves the buffer pageable: copies of it are staged instead.
void pin_buffer(void* data, size_t capacity) {
  if (cudaHostRegister(data, capacity, cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError();
  }
}
void unpin_buffer(void* data, size_t) {
  if (cudaHostUnregister(data) != cudaSuccess) cudaGetLastError();
}

bool is_pinned(const void* data) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

}  // namespace

struct GpuContext::InFlight {
  cudaEvent_t done;
  Tensor host;
};

struct GpuContext::Staging {
  void* pinned = nullptr;
  size_t size = 0;
  cudaEvent_t done = nullptr;
};

Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();
  return errors::Internal("{}: {} ({})", what, cudaGetErrorString(error), cudaGetErrorName(error));
}

bool built_with_cuda() {
  return true;
}
int gpu_count() {
  return probe_gpus().count;
}
std::string why_no_gpu() {
  return probe_gpus().why;
}

StatusOr<std::shared_ptr<GpuContext>> open_gpu(int ordinal) {
  if (ordinal < 0 || ordinal >= gpu_count()) {
    return errors::FailedPrecondition("GPU:{} does not exist: this process sees {} GPU(s){}",
                                      ordinal, gpu_count(),
                                      why_no_gpu().empty() ? "" : " (" + why_no_gpu() + ")");
  }
  return GpuContext::create(ordinal);
}

GpuContext::GpuContext(int ordinal) : ordinal_(ordinal), allocator_(ordinal) {
  static std::atomic<uint64_t> contexts{0};
  serial_ = ++contexts;
}

StatusOr<std::shared_ptr<GpuContext>> GpuContext::create(int ordinal) {
  std::shared_ptr<GpuContext> context(new GpuContext(ordinal));
  TROUPE_RETURN_IF_ERROR(context->activate());
  cudaDeviceProp properties{};
  TROUPE_RETURN_IF_ERROR(
      context->check(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties"));
  context->name_ = properties.name;
  TROUPE_RETURN_IF_ERROR(context->check(
      cudaStreamCreateWithFlags(&context->stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  TROUPE_ASSIGN_OR_RETURN(context->cublas_api_, cublas_library());
  const CublasLibrary& cublas = *context->cublas_api_;
  TROUPE_RETURN_IF_ERROR(context->check(cublas.create(&context->cublas_), "cublasCreate"));
  TROUPE_RETURN_IF_ERROR(
      context->check(cublas.set_stream(context->cublas_, context->stream_), "cublasSetStream"));
  context->profiler_ = GpuProfiler::from_environment(ordinal, context->stream_);
  static std::once_flag pinning;
  std::call_once(pinning, [] { BufferPool::set_hooks(pin_buffer, unpin_buffer); });
  return context;
}

GpuContext::~GpuContext() {
  cudaSetDevice(ordinal_);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  profiler_.reset();  // prints its table
  for (auto& copy : in_flight_)
    cudaEventDestroy(copy.done);
  for (cudaEvent_t event : free_events_)
    cudaEventDestroy(event);
  for (auto& slot : staging_) {
    cudaEventDestroy(slot->done);
    cudaFreeHost(slot->pinned);
  }
  if (cublas_ != nullptr) cublas_api_->destroy(cublas_);
#ifdef TROUPE_HAVE_CUDNN
  if (cudnn_ != nullptr) (*cudnn_library())->destroy(static_cast<cudnnHandle_t>(cudnn_));
#endif
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void* GpuContext::cudnn() {
#ifdef TROUPE_HAVE_CUDNN
  if (!cudnn_tried_) {
    cudnn_tried_ = true;
    auto library = cudnn_library();
    cudnnHandle_t handle = nullptr;
    if (!library.ok()) {
      log_info("GPU:{}: convolutions without cuDNN: {}", ordinal_, library.status().to_string());
    } else if ((*library)->create(&handle) != CUDNN_STATUS_SUCCESS ||
               (*library)->set_stream(handle, stream_) != CUDNN_STATUS_SUCCESS) {
      log_warning("GPU:{}: convolutions without cuDNN: its handle could not be made", ordinal_);
      if (handle != nullptr) (*library)->destroy(handle);
    } else {
      cudnn_ = handle;
    }
  }
#endif
  return cudnn_;
}

Status GpuContext::activate() const {
  return check(cudaSetDevice(ordinal_), "cudaSetDevice");
}

Status GpuContext::check(cudaError_t error, const char* what) const {
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();
  return errors::Internal("GPU:{}: {}: {} ({})", ordinal_, what, cudaGetErrorString(error),
                          cudaGetErrorName(error));
}

Status GpuContext::check(cublasStatus_t status, const char* what) const {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return errors::Internal("GPU:{}: {}: cuBLAS status {}", ordinal_, what, static_cast<int>(status));
}

StatusOr<Tensor> GpuContext::allocate(DataType dtype, const TensorShape& shape) {
  if (dtype == DataType::kString) {
    return errors::InvalidArgument("GPU:{}: string tensors live in host memory", ordinal_);
  }
  const size_t bytes = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  TROUPE_ASSIGN_OR_RETURN(void* block, allocator_.allocate(bytes));
  return Tensor(dtype, shape, std::make_shared<GpuBuffer>(shared_from_this(), block, bytes));
}

StatusOr<Tensor> GpuContext::to_device(const Tensor& host) {
  TROUPE_ASSIGN_OR_RETURN(Tensor device, allocate(host.dtype(), host.shape()));
  const size_t bytes = host.total_bytes();
  if (bytes == 0) return device;
  std::lock_guard lock(staging_mutex_);
  reap_in_flight_locked();
  if (bytes >= BufferPool::kMinBytes && is_pinned(host.raw_data())) {
    cudaEvent_t done = nullptr;
    if (free_events_.empty()) {
      TROUPE_RETURN_IF_ERROR(
          check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate"));
    } else {
      done = free_events_.back();
      free_events_.pop_back();
    }
    Status copied = check(
        cudaMemcpyAsync(device.raw_data(), host.raw_data(), bytes, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (to the GPU)");
    if (copied.ok()) copied = check(cudaEventRecord(done, stream_), "cudaEventRecord");
    if (!copied.ok()) {
      free_events_.push_back(done);
      return copied;
    }
    in_flight_.push_back(InFlight{done, host});
    return device;
  }
  if (bytes <= kStagingLimit) {
    Staging* slot = nullptr;
    for (auto& candidate : staging_) {
      if (candidate->size >= bytes && cudaEventQuery(candidate->done) == cudaSuccess) {
        slot = candidate.get();
        break;
      }
    }
    cudaGetLastError();  // cudaEventQuery's cudaErrorNotReady is not an error
    if (slot == nullptr && staging_.size() < kStagingSlots) {
      auto fresh = std::make_unique<Staging>();
      fresh->size = std::max(bytes, size_t{1} << 16);
      TROUPE_RETURN_IF_ERROR(
          check(cudaHostAlloc(&fresh->pinned, fresh->size, cudaHostAllocDefault), "cudaHostAlloc"));
      TROUPE_RETURN_IF_ERROR(
          check(cudaEventCreateWithFlags(&fresh->done, cudaEventDisableTiming), "cudaEventCreate"));
      slot = fresh.get();
      staging_.push_back(std::move(fresh));
    }
    if (slot != nullptr) {
      std::memcpy(slot->pinned, host.raw_data(), bytes);
      TROUPE_RETURN_IF_ERROR(check(
          cudaMemcpyAsync(device.raw_data(), slot->pinned, bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (to the GPU)"));
      TROUPE_RETURN_IF_ERROR(check(cudaEventRecord(slot->done, stream_), "cudaEventRecord"));
      return device;
    }
  }
  // From pageable memory: CUDA has read the host bytes by the time the call returns.
  TROUPE_RETURN_IF_ERROR(check(
      cudaMemcpyAsync(device.raw_data(), host.raw_data(), bytes, cudaMemcpyHostToDevice, stream_),
      "cudaMemcpyAsync (to the GPU)"));
  return device;
}

void GpuContext::reap_in_flight_locked() {
  while (!in_flight_.empty() && cudaEventQuery(in_flight_.front().done) == cudaSuccess) {
    free_events_.push_back(in_flight_.front().done);
    in_flight_.pop_front();
  }
  cudaGetLastError();  // cudaErrorNotReady
}

StatusOr<Tensor> GpuContext::to_host(const Tensor& device) {
  Tensor host(device.dtype(), device.shape());
  const size_t bytes = host.total_bytes();
  if (bytes > 0) {
    TROUPE_RETURN_IF_ERROR(check(
        cudaMemcpyAsync(host.raw_data(), device.raw_data(), bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (to the host)"));
  }
  TROUPE_RETURN_IF_ERROR(synchronize());
  return host;
}

StatusOr<Tensor> GpuContext::on_device(const Tensor& tensor) {
  if (!tensor.on_host()) return tensor;
  return to_device(tensor);
}

StatusOr<Tensor> GpuContext::on_host(const Tensor& tensor) {
  if (tensor.on_host()) return tensor;
  return to_host(tensor);
}

Status GpuContext::synchronize() {
  return check(cudaStreamSynchronize(stream_), "a kernel on the stream");
}

}  // namespace troupe
