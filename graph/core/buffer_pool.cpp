// BufferPool: mmap'd buffers kept after their tensors die, reused by capacity.
#include "troupe/graph/core/buffer_pool.hpp"

#include <sys/mman.h>

#include <atomic>
#include <vector>

namespace troupe {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSmallStep = size_t{64} << 10;

size_t round_up(size_t value, size_t step) {
  return (value + step - 1) / step * step;
}

// Fresh memory, or nullptr when the kernel refuses the mapping.
void* map_fresh(size_t capacity) {
  void* data =
      ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) return nullptr;
  // One fault per 2 MiB instead of per 4 KiB where the kernel allows it; advice only.
  if (capacity >= kHugePage) ::madvise(data, capacity, MADV_HUGEPAGE);
  return data;
}

}  // namespace

BufferPool& BufferPool::instance() {
  // Never destroyed: tensors held by static objects may die after it would.
  static BufferPool* pool = new BufferPool();
  return *pool;
}

size_t BufferPool::capacity_for(size_t bytes) {
  // Coarse enough that nearly equal shapes share buffers, fine enough to waste little:
  // 64 KiB steps below 32 MiB (<= 6%), whole huge pages above (<= 6%).
  return bytes < (size_t{32} << 20) ? round_up(bytes, kSmallStep) : round_up(bytes, kHugePage);
}

namespace {
std::atomic<BufferPool::MapHook> mapped_hook{nullptr};
std::atomic<BufferPool::MapHook> unmapping_hook{nullptr};

// A fresh mapping, shown to the `mapped` hook.
void* map_and_announce(size_t capacity) {
  void* data = map_fresh(capacity);
  if (data != nullptr) {
    if (BufferPool::MapHook hook = mapped_hook.load()) hook(data, capacity);
  }
  return data;
}
}  // namespace

void BufferPool::set_hooks(MapHook mapped, MapHook unmapping) {
  mapped_hook.store(mapped);
  unmapping_hook.store(unmapping);
}

void* BufferPool::acquire(size_t bytes) {
  size_t capacity = capacity_for(bytes);
  {
    std::lock_guard lock(mutex_);
    // Newest first: the buffer most likely still in cache and backed by pages.
    for (auto it = cached_.rbegin(); it != cached_.rend(); ++it) {
      if (it->capacity != capacity) continue;
      void* data = it->data;
      cached_bytes_ -= capacity;
      cached_.erase(std::next(it).base());
      ++reused_;
      return data;
    }
    ++fresh_;
  }
  if (void* data = map_and_announce(capacity)) return data;
  // Out of memory or of mappings (vm.max_map_count): give back what the pool holds, then try
  // once more.
  std::vector<Cached> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped.assign(cached_.begin(), cached_.end());
    cached_.clear();
    cached_bytes_ = 0;
  }
  unmap(dropped);
  return map_and_announce(capacity);
}

void BufferPool::release(void* data, size_t bytes) {
  if (data == nullptr) return;
  size_t capacity = capacity_for(bytes);
  std::vector<Cached> dropped{{data, capacity}};
  {
    std::lock_guard lock(mutex_);
    if (capacity <= limit_) {
      dropped.clear();
      cached_.push_back({data, capacity});
      cached_bytes_ += capacity;
      trim_locked(&dropped);
    }
  }
  unmap(dropped);  // outside the lock: unmapping hundreds of MiB takes a while
}

void BufferPool::trim_locked(std::vector<Cached>* dropped) {
  while (cached_bytes_ > limit_) {
    dropped->push_back(cached_.front());
    cached_bytes_ -= cached_.front().capacity;
    cached_.pop_front();
  }
}

void BufferPool::unmap(const std::vector<Cached>& buffers) {
  MapHook hook = unmapping_hook.load();
  for (const Cached& buffer : buffers) {
    if (hook != nullptr) hook(buffer.data, buffer.capacity);
    ::munmap(buffer.data, buffer.capacity);
  }
}

void BufferPool::set_limit(size_t bytes) {
  std::vector<Cached> dropped;
  {
    std::lock_guard lock(mutex_);
    limit_ = bytes;
    trim_locked(&dropped);
  }
  unmap(dropped);
}

size_t BufferPool::limit() const {
  std::lock_guard lock(mutex_);
  return limit_;
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard lock(mutex_);
  return {cached_bytes_, reused_, fresh_};
}

}  // namespace troupe
