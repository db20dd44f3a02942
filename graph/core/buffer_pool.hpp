// BufferPool: keeps the memory of freed large tensor buffers and hands it out again.
//
// A large allocation is fresh memory from the kernel: every page faults and is zeroed on first
// touch, which costs more than filling it from a socket (a received 256 MiB tensor spent half
// its time in page faults). Steps allocate the same shapes again and again, so the pool keeps
// freed buffers of kMinBytes and more — up to a byte limit, oldest dropped first — and gives
// one of the same capacity to the next allocation. Memory is page-aligned and, from 2 MiB,
// advised to use transparent huge pages. Thread-safe; one pool per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace troupe {

class BufferPool {
 public:
  static constexpr size_t kMinBytes = size_t{1} << 20;  // smaller ones: malloc
  static constexpr size_t kDefaultLimit = size_t{1} << 30;

  struct Stats {
    size_t cached_bytes = 0;  // held for reuse now
    uint64_t reused = 0;      // allocations served from the pool
    uint64_t fresh = 0;       // allocations that mapped new memory
  };

  static BufferPool& instance();

  // The capacity actually reserved for `bytes` (>= bytes; buffers of one capacity are shared).
  static size_t capacity_for(size_t bytes);

  // Memory of at least `bytes` bytes (>= kMinBytes), page-aligned, contents undefined, or
  // nullptr when the kernel refuses to map it even after the pool gave back what it held.
  // Give it back with release(data, bytes) and the same `bytes`.
  void* acquire(size_t bytes);
  void release(void* data, size_t bytes);

  // Bytes the pool may hold for reuse; buffers beyond it are returned to the kernel. 0 turns
  // pooling off. Lowering it drops the oldest buffers at once.
  void set_limit(size_t bytes);
  size_t limit() const;

  Stats stats() const;

  // Called with each buffer the pool maps fresh (`mapped`) and before it unmaps one
  // (`unmapping`), from whichever thread allocates or frees: the GPU device registers them as
  // pinned memory (devices/gpu/gpu_context.cpp), so its copies of large host tensors need no
  // staging. Buffers mapped before the hooks are set stay as they are. Null hooks unset them.
  using MapHook = void (*)(void* data, size_t capacity);
  static void set_hooks(MapHook mapped, MapHook unmapping);

 private:
  BufferPool() = default;
  struct Cached {
    void* data;
    size_t capacity;
  };
  // Moves the oldest buffers to `dropped` until cached_bytes_ <= limit_.
  void trim_locked(std::vector<Cached>* dropped);
  static void unmap(const std::vector<Cached>& buffers);

  mutable std::mutex mutex_;
  std::deque<Cached> cached_;  // oldest first
  size_t cached_bytes_ = 0;
  size_t limit_ = kDefaultLimit;
  uint64_t reused_ = 0;
  uint64_t fresh_ = 0;
};

}  // namespace troupe
