// Tensor: construction, reshaping, comparison and printing.
#include "troupe/graph/core/tensor.hpp"

#include <algorithm>
#include <ostream>

#include "troupe/graph/core/check.hpp"

namespace troupe {
namespace {

std::shared_ptr<TensorBuffer> allocate_for(DataType dtype, int64_t count) {
  if (dtype == DataType::kString) return TensorBuffer::allocate_strings(count);
  return TensorBuffer::allocate(count * dtype_size(dtype));
}

template <class T>
void append_element(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    out += '"';
    out += value;
    out += '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else {
    out += fmt::format("{}", value);
  }
}

// Prints dimension `axis` of the block starting at element `offset`, numpy style.
template <class T>
void summarize_dim(const T* data, const std::vector<int64_t>& dims, size_t axis, int64_t offset,
                   int64_t stride, int& budget, std::string& out) {
  out += '[';
  int64_t inner = stride / std::max<int64_t>(dims[axis], 1);
  for (int64_t i = 0; i < dims[axis]; ++i) {
    if (i > 0) out += ", ";
    if (budget <= 0) {
      out += "...";
      break;
    }
    if (axis + 1 == dims.size()) {
      append_element(out, data[offset + i]);
      --budget;
    } else {
      summarize_dim(data, dims, axis + 1, offset + i * inner, inner, budget, out);
    }
  }
  out += ']';
}

}  // namespace

Tensor::Tensor(DataType dtype, TensorShape shape)
    : dtype_(dtype), shape_(std::move(shape)), num_elements_(shape_.num_elements()) {
  buffer_ = allocate_for(dtype_, num_elements_);
}

Tensor::Tensor(DataType dtype, TensorShape shape, std::shared_ptr<TensorBuffer> buffer)
    : dtype_(dtype),
      shape_(std::move(shape)),
      num_elements_(shape_.num_elements()),
      buffer_(std::move(buffer)) {
  size_t needed = dtype_ == DataType::kString ? num_elements_ * sizeof(std::string)
                                              : num_elements_ * dtype_size(dtype_);
  if ((buffer_ == nullptr && needed > 0) || (buffer_ != nullptr && buffer_->size() < needed)) {
    TROUPE_CHECK_OK(errors::Internal("buffer of {} bytes is too small for a {} tensor of shape {}",
                                     buffer_ ? buffer_->size() : 0, dtype_name(dtype_),
                                     shape_.to_string()));
  }
}

Tensor::Tensor(const char* value) : Tensor(std::string(value)) {}
Tensor::Tensor(const std::string& value) : Tensor(scalar<std::string>(value)) {}
Tensor::Tensor(float value) : Tensor(scalar<float>(value)) {}
Tensor::Tensor(double value) : Tensor(scalar<double>(value)) {}
Tensor::Tensor(int32_t value) : Tensor(scalar<int32_t>(value)) {}
Tensor::Tensor(int64_t value) : Tensor(scalar<int64_t>(value)) {}
Tensor::Tensor(bool value) : Tensor(scalar<bool>(value)) {}

Tensor Tensor::deep_copy() const {
  if (!is_initialized()) return Tensor();
  if (!on_host()) return Tensor(dtype_, shape_, buffer_->duplicate());
  Tensor copy(dtype_, shape_);
  if (dtype_ == DataType::kString) {
    std::copy_n(data<std::string>(), num_elements_, copy.data<std::string>());
  } else if (total_bytes() > 0) {
    std::memcpy(copy.raw_data(), raw_data(), total_bytes());
  }
  return copy;
}

StatusOr<Tensor> Tensor::reshaped(const TensorShape& shape) const {
  if (shape.num_elements() != num_elements_) {
    return errors::InvalidArgument("cannot reshape a tensor of shape {} ({} elements) to {}",
                                   shape_.to_string(), num_elements_, shape.to_string());
  }
  Tensor view = *this;
  view.shape_ = shape;
  return view;
}

StatusOr<Tensor> Tensor::cast_to(DataType dtype) const {
  if (dtype == dtype_) return *this;
  if (dtype == DataType::kString || dtype_ == DataType::kString || !is_initialized() ||
      dtype == DataType::kInvalid) {
    return errors::InvalidArgument("cannot convert a {} tensor to {}", dtype_name(dtype_),
                                   dtype_name(dtype));
  }
  Tensor out(dtype, shape_);
  TROUPE_SWITCH_NUMERIC_OR_BOOL(dtype_, From, {
    const From* src = data<From>();
    TROUPE_SWITCH_NUMERIC_OR_BOOL(dtype, To, {
      To* dst = out.data<To>();
      for (int64_t i = 0; i < num_elements_; ++i)
        dst[i] = convert_element<To>(src[i]);
    });
  });
  return out;
}

bool Tensor::equals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DataType::kString) {
    return std::equal(data<std::string>(), data<std::string>() + num_elements_,
                      other.data<std::string>());
  }
  return total_bytes() == 0 || std::memcmp(raw_data(), other.raw_data(), total_bytes()) == 0;
}

std::string Tensor::summarize(int max_entries) const {
  if (!is_initialized()) return "<uninitialized>";
  std::string out;
  int budget = max_entries;
  TROUPE_SWITCH_ALL(dtype_, T, {
    if (shape_.is_scalar()) {
      append_element(out, *data<T>());
    } else {
      summarize_dim(data<T>(), shape_.dims(), 0, 0, num_elements_, budget, out);
    }
  });
  return out;
}

std::string Tensor::debug_string(int max_entries) const {
  if (!is_initialized()) return "<uninitialized tensor>";
  return fmt::format("{} {} {}", dtype_name(dtype_), shape_.to_string(), summarize(max_entries));
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) {
  return os << tensor.debug_string();
}

}  // namespace troupe
