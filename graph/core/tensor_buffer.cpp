// TensorBuffer implementations: aligned and pooled numeric storage, string storage, wrapped
// memory.
#include "troupe/graph/core/tensor_buffer.hpp"

#include <new>
#include <string>

#include "troupe/graph/core/buffer_pool.hpp"

namespace troupe {
namespace {

void* aligned_new(size_t bytes) {
  if (bytes == 0) return nullptr;
  return ::operator new(bytes, std::align_val_t(TensorBuffer::kAlignment));
}

class AlignedBuffer final : public TensorBuffer {
 public:
  explicit AlignedBuffer(size_t bytes) : TensorBuffer(aligned_new(bytes), bytes) {}
  ~AlignedBuffer() override {
    if (data() != nullptr) ::operator delete(data(), std::align_val_t(kAlignment));
  }
};

// Large buffers come from, and go back to, the process's BufferPool (page-aligned).
class PooledBuffer final : public TensorBuffer {
 public:
  PooledBuffer(void* data, size_t bytes) : TensorBuffer(data, bytes) {}
  ~PooledBuffer() override { BufferPool::instance().release(data(), size()); }
};

class StringBuffer final : public TensorBuffer {
 public:
  explicit StringBuffer(int64_t count)
      : TensorBuffer(aligned_new(count * sizeof(std::string)), count * sizeof(std::string)),
        count_(count) {
    auto* strings = static_cast<std::string*>(data());
    for (int64_t i = 0; i < count_; ++i)
      new (strings + i) std::string();
  }
  ~StringBuffer() override {
    auto* strings = static_cast<std::string*>(data());
    for (int64_t i = 0; i < count_; ++i)
      strings[i].~basic_string();
    if (data() != nullptr) ::operator delete(data(), std::align_val_t(kAlignment));
  }

 private:
  int64_t count_;
};

class WrappedBuffer final : public TensorBuffer {
 public:
  WrappedBuffer(const void* data, size_t bytes, std::shared_ptr<const void> owner)
      : TensorBuffer(const_cast<void*>(data), bytes), owner_(std::move(owner)) {}

 private:
  std::shared_ptr<const void> owner_;
};

}  // namespace

std::shared_ptr<TensorBuffer> TensorBuffer::allocate(size_t bytes) {
  if (bytes >= BufferPool::kMinBytes) {
    // When the pool cannot map memory the heap is tried, and operator new reports exhaustion
    // (std::bad_alloc) as every allocation does; the executor turns it into ResourceExhausted.
    if (void* data = BufferPool::instance().acquire(bytes)) {
      return std::make_shared<PooledBuffer>(data, bytes);
    }
  }
  return std::make_shared<AlignedBuffer>(bytes);
}

std::shared_ptr<TensorBuffer> TensorBuffer::allocate_strings(int64_t count) {
  return std::make_shared<StringBuffer>(count);
}

std::shared_ptr<TensorBuffer> TensorBuffer::wrap(const void* data, size_t bytes,
                                                 std::shared_ptr<const void> owner) {
  return std::make_shared<WrappedBuffer>(data, bytes, std::move(owner));
}

}  // namespace troupe
