// TensorShape: validation and printing.
#include "troupe/graph/core/tensor_shape.hpp"

#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace troupe {

TensorShape::TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
TensorShape::TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

StatusOr<TensorShape> TensorShape::from_dims(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return errors::InvalidArgument("dimension {} of shape [{}] is {}: expected a size >= 0", i,
                                     fmt::join(dims, ","), dims[i]);
    }
    if (dims[i] != 0 && count > std::numeric_limits<int64_t>::max() / dims[i]) {
      return errors::InvalidArgument("shape [{}] has more than 2^63 elements",
                                     fmt::join(dims, ","));
    }
    count *= dims[i];
  }
  return TensorShape(std::vector<int64_t>(dims.begin(), dims.end()));
}

int64_t TensorShape::num_elements() const {
  int64_t count = 1;
  for (int64_t d : dims_)
    count *= d;
  return count;
}

std::string TensorShape::to_string() const {
  return fmt::format("[{}]", fmt::join(dims_, ","));
}

}  // namespace troupe
