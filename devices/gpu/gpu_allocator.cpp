// GpuAllocator: size classes, free lists, and emptying the cache when CUDA runs out.
#include "troupe/devices/gpu/gpu_allocator.hpp"

#include <cuda_runtime_api.h>

namespace troupe {

namespace {
constexpr size_t kSmallQuantum = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kLargeQuantum = size_t{2} << 20;

size_t round_up(size_t bytes, size_t quantum) {
  return (bytes + quantum - 1) / quantum * quantum;
}
}  // namespace

size_t GpuAllocator::rounded(size_t bytes) {
  return bytes <= kSmallLimit ? round_up(bytes, kSmallQuantum) : round_up(bytes, kLargeQuantum);
}

GpuAllocator::~GpuAllocator() {
  std::lock_guard lock(mutex_);
  free_cache_locked();
}

StatusOr<void*> GpuAllocator::allocate(size_t bytes) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  const size_t size = rounded(bytes);
  std::lock_guard lock(mutex_);
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    void* block = it->second.back();
    it->second.pop_back();
    stats_.bytes_cached -= static_cast<int64_t>(size);
    stats_.bytes_in_use += static_cast<int64_t>(size);
    return block;
  }
  void* block = nullptr;
  cudaError_t error = cudaMalloc(&block, size);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clears the error, so later calls do not report it
    free_cache_locked();
    error = cudaMalloc(&block, size);
  }
  if (error != cudaSuccess) {
    cudaGetLastError();
    return errors::ResourceExhausted("GPU:{}: out of memory allocating {} bytes ({}; {} in use)",
                                     ordinal_, size, cudaGetErrorString(error),
                                     stats_.bytes_in_use);
  }
  ++stats_.cuda_mallocs;
  stats_.bytes_in_use += static_cast<int64_t>(size);
  return block;
}

void GpuAllocator::release(void* block, size_t bytes) {
  if (block == nullptr) return;
  const size_t size = rounded(bytes);
  std::lock_guard lock(mutex_);
  free_[size].push_back(block);
  stats_.bytes_in_use -= static_cast<int64_t>(size);
  stats_.bytes_cached += static_cast<int64_t>(size);
}

GpuAllocator::Stats GpuAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void GpuAllocator::free_cache_locked() {
  for (auto& [size, blocks] : free_) {
    for (void* block : blocks)
      cudaFree(block);
    stats_.bytes_cached -= static_cast<int64_t>(size * blocks.size());
    blocks.clear();
  }
}

}  // namespace troupe
