// TensorBuffer: the reference-counted memory behind tensors.
//
// Copying a Tensor copies a shared_ptr to its buffer, never the data. Buffers that troupe
// allocates are 64-byte aligned (cache lines, AVX-512 loads), and those of 1 MiB and more are
// reused from the process's BufferPool (graph/core/buffer_pool.hpp); a buffer may also wrap memory
// owned by something else (a received Cap'n Proto message) and keep that owner alive, in which
// case the data is aligned at least to its element size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace troupe {

class TensorBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  virtual ~TensorBuffer() = default;
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }  // bytes
  // False for memory the CPU cannot read, such as a GPU's (devices/gpu/): data() is then an
  // address on that device, and only its kernels and copies may use it.
  bool on_host() const { return on_host_; }
  // A new buffer of the same size and bytes, on the same device. Buffers on the host are
  // copied by Tensor::deep_copy itself; buffers elsewhere must override this.
  virtual std::shared_ptr<TensorBuffer> duplicate() const { return nullptr; }

  // Uninitialised, 64-byte aligned memory of `bytes` bytes. Throws std::bad_alloc.
  static std::shared_ptr<TensorBuffer> allocate(size_t bytes);

  // An aligned array of `count` empty std::string objects, destroyed with the buffer.
  static std::shared_ptr<TensorBuffer> allocate_strings(int64_t count);

  // `bytes` bytes at `data`, owned by `owner`, which lives as long as the buffer does.
  static std::shared_ptr<TensorBuffer> wrap(const void* data, size_t bytes,
                                            std::shared_ptr<const void> owner);

 protected:
  TensorBuffer(void* data, size_t size, bool on_host = true)
      : data_(data), size_(size), on_host_(on_host) {}

 private:
  void* data_;
  size_t size_;
  bool on_host_;
};

}  // namespace troupe
