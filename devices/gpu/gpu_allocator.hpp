// GpuAllocator: the caching allocator of one GPU's memory.
//
// A step allocates the same sizes every time, and cudaMalloc/cudaFree synchronise the device,
// so freed blocks are kept in free lists by size class and handed out again; nothing goes back
// to CUDA until an allocation fails, when the cache is emptied and the allocation tried once
// more. Size classes: multiples of 512 bytes up to 1 MiB, multiples of 2 MiB above.
// Safe for reuse only under the single-stream ordering described in gpu_context.hpp.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class GpuAllocator {
 public:
  explicit GpuAllocator(int ordinal) : ordinal_(ordinal) {}
  ~GpuAllocator();  // frees the cache (blocks still in use are the owners' to return first)
  GpuAllocator(const GpuAllocator&) = delete;
  GpuAllocator& operator=(const GpuAllocator&) = delete;

  // A block of at least `bytes` bytes (nullptr for 0); ResourceExhausted naming the GPU and
  // the size when CUDA has no memory for it even after the cache is emptied.
  StatusOr<void*> allocate(size_t bytes);
  // Returns a block that allocate() gave out, of the size that was asked for.
  void release(void* block, size_t bytes);

  // The block size class of `bytes`.
  static size_t rounded(size_t bytes);

  struct Stats {
    int64_t cuda_mallocs = 0;  // blocks obtained from CUDA
    int64_t bytes_in_use = 0;  // handed out, by size class
    int64_t bytes_cached = 0;  // free, kept for reuse
  };
  Stats stats() const;

 private:
  void free_cache_locked();

  int ordinal_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;  // by size class
  Stats stats_;
};

}  // namespace troupe
