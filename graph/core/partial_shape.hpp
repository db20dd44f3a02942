// PartialShape: what shape inference knows about a tensor before it exists: maybe the rank,
// maybe some dimensions (-1 where unknown).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/core/tensor_shape.hpp"

namespace troupe {

class PartialShape {
 public:
  static constexpr int64_t kUnknownDim = -1;

  PartialShape() = default;  // unknown rank
  PartialShape(std::initializer_list<int64_t> dims);
  explicit PartialShape(std::vector<int64_t> dims);
  PartialShape(const TensorShape& shape);  // NOLINT: a known shape is a partial one

  static PartialShape unknown() { return PartialShape(); }
  static PartialShape unknown_of_rank(int rank);
  static PartialShape scalar() { return PartialShape(std::vector<int64_t>{}); }

  bool rank_known() const { return dims_.has_value(); }
  int rank() const { return dims_ ? static_cast<int>(dims_->size()) : -1; }
  int64_t dim(int i) const { return (*dims_)[i]; }
  const std::vector<int64_t>& dims() const { return *dims_; }
  bool is_fully_defined() const;
  // Number of elements if fully defined, else -1.
  int64_t num_elements() const;

  // The known shape. Requires is_fully_defined().
  TensorShape to_shape() const;

  // True if some fully defined shape matches both.
  bool compatible_with(const PartialShape& other) const;
  // True if `shape` is one of the shapes this describes.
  bool matches(const TensorShape& shape) const;
  // The most specific shape compatible with both; InvalidArgument if they conflict.
  StatusOr<PartialShape> merge(const PartialShape& other) const;

  // "[?,3]", "[]" or "<unknown>".
  std::string to_string() const;

  bool operator==(const PartialShape& other) const = default;

 private:
  std::optional<std::vector<int64_t>> dims_;
};

}  // namespace troupe
