// TensorShape: the fully known dimensions of a tensor value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(std::vector<int64_t> dims);

  // Checks that every dimension is >= 0 and the element count fits in int64.
  static StatusOr<TensorShape> from_dims(std::span<const int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t num_elements() const;
  bool is_scalar() const { return dims_.empty(); }

  void add_dim(int64_t size) { dims_.push_back(size); }
  void set_dim(int i, int64_t size) { dims_[i] = size; }

  // "[2,3]"; "[]" for a scalar.
  std::string to_string() const;

  bool operator==(const TensorShape& other) const = default;

 private:
  std::vector<int64_t> dims_;
};

}  // namespace troupe
