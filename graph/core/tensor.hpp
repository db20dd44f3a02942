// Tensor: a dtype, a shape and a shared buffer. Copies share the buffer (no data copy).
//
// A default-constructed Tensor is uninitialised (dtype kInvalid). Tensors are not internally
// synchronised: writing the data of a buffer that other threads read is the writer's problem;
// kernels always write fresh buffers, and variables copy on write (devices/variable.hpp).
#pragma once

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor_buffer.hpp"
#include "troupe/graph/core/tensor_shape.hpp"
#include "troupe/graph/core/types.hpp"

namespace troupe {

class Tensor {
 public:
  Tensor() = default;
  // Allocates an uninitialised buffer (strings start empty).
  Tensor(DataType dtype, TensorShape shape);
  // Uses `buffer`, which must hold at least num_elements * dtype_size bytes (checked).
  Tensor(DataType dtype, TensorShape shape, std::shared_ptr<TensorBuffer> buffer);

  // Convenience constructors for scalars; `Tensor("hello")` is a string scalar.
  template <class T>
  static Tensor scalar(T value);
  Tensor(const char* value);         // NOLINT: string scalars read naturally
  Tensor(const std::string& value);  // NOLINT
  Tensor(float value);               // NOLINT
  Tensor(double value);              // NOLINT
  Tensor(int32_t value);             // NOLINT
  Tensor(int64_t value);             // NOLINT
  Tensor(bool value);                // NOLINT

  // A tensor of `shape` holding `values` in row-major order; InvalidArgument if the count
  // does not match the shape.
  template <class T>
  static StatusOr<Tensor> from_vector(const std::vector<T>& values, TensorShape shape);
  template <class T>
  static Tensor from_vector(const std::vector<T>& values);  // a rank-1 tensor

  bool is_initialized() const { return dtype_ != DataType::kInvalid; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t num_elements() const { return num_elements_; }
  // Bytes of element data (0 for strings, whose bytes live in std::string objects).
  size_t total_bytes() const { return num_elements_ * dtype_size(dtype_); }

  template <class T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  // False when the elements live in a GPU's memory (see TensorBuffer::on_host).
  bool on_host() const { return buffer_ == nullptr || buffer_->on_host(); }

  // The elements in row-major order. Checks the dtype in debug builds only.
  template <class T>
  std::span<T> flat() {
    return {data<T>(), static_cast<size_t>(num_elements_)};
  }
  template <class T>
  std::span<const T> flat() const {
    return {data<T>(), static_cast<size_t>(num_elements_)};
  }
  // The single element of a tensor with one element.
  template <class T>
  const T& scalar() const {
    return *data<T>();
  }

  // The elements as a vector, for tests and small tensors.
  template <class T>
  std::vector<T> to_vector() const {
    auto f = flat<T>();
    return std::vector<T>(f.begin(), f.end());
  }

  const std::shared_ptr<TensorBuffer>& buffer() const { return buffer_; }
  bool shares_buffer_with(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }

  // Same shape, new buffer, same elements.
  Tensor deep_copy() const;

  // Same buffer viewed with another shape of the same element count.
  StatusOr<Tensor> reshaped(const TensorShape& shape) const;

  // The elements converted to `dtype` (C++ conversion rules; bool is 0 / 1). InvalidArgument
  // to or from string.
  StatusOr<Tensor> cast_to(DataType dtype) const;

  // Same dtype, shape and elements (bitwise for floats, so NaN != NaN).
  bool equals(const Tensor& other) const;

  // "float32 [2,2] [[1, 2], [3, 4]]", eliding after `max_entries` elements.
  std::string debug_string(int max_entries = 16) const;
  // Just the values, nested as numpy prints them.
  std::string summarize(int max_entries = 16) const;

 private:
  DataType dtype_ = DataType::kInvalid;
  TensorShape shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<TensorBuffer> buffer_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& tensor);

template <class T>
Tensor Tensor::scalar(T value) {
  Tensor t(dtype_of<T>, TensorShape{});
  *t.data<T>() = std::move(value);
  return t;
}

template <class T>
StatusOr<Tensor> Tensor::from_vector(const std::vector<T>& values, TensorShape shape) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    return errors::InvalidArgument("{} values cannot fill a tensor of shape {}", values.size(),
                                   shape.to_string());
  }
  Tensor t(dtype_of<T>, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values) {
  Tensor t(dtype_of<T>, TensorShape{static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

}  // namespace troupe
