// PartialShape: compatibility, merging and printing.
#include "troupe/graph/core/partial_shape.hpp"

#include <fmt/format.h>

namespace troupe {

PartialShape::PartialShape(std::initializer_list<int64_t> dims)
    : dims_(std::vector<int64_t>(dims)) {}
PartialShape::PartialShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
PartialShape::PartialShape(const TensorShape& shape) : dims_(shape.dims()) {}

PartialShape PartialShape::unknown_of_rank(int rank) {
  return PartialShape(std::vector<int64_t>(rank, kUnknownDim));
}

bool PartialShape::is_fully_defined() const {
  if (!dims_) return false;
  for (int64_t d : *dims_) {
    if (d < 0) return false;
  }
  return true;
}

int64_t PartialShape::num_elements() const {
  if (!is_fully_defined()) return -1;
  int64_t count = 1;
  for (int64_t d : *dims_)
    count *= d;
  return count;
}

TensorShape PartialShape::to_shape() const {
  return TensorShape(*dims_);
}

bool PartialShape::compatible_with(const PartialShape& other) const {
  if (!dims_ || !other.dims_) return true;
  if (dims_->size() != other.dims_->size()) return false;
  for (size_t i = 0; i < dims_->size(); ++i) {
    int64_t a = (*dims_)[i], b = (*other.dims_)[i];
    if (a >= 0 && b >= 0 && a != b) return false;
  }
  return true;
}

bool PartialShape::matches(const TensorShape& shape) const {
  return compatible_with(PartialShape(shape));
}

StatusOr<PartialShape> PartialShape::merge(const PartialShape& other) const {
  if (!compatible_with(other)) {
    return errors::InvalidArgument("shapes {} and {} are not compatible", to_string(),
                                   other.to_string());
  }
  if (!dims_) return other;
  if (!other.dims_) return *this;
  std::vector<int64_t> merged = *dims_;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (merged[i] < 0) merged[i] = (*other.dims_)[i];
  }
  return PartialShape(std::move(merged));
}

std::string PartialShape::to_string() const {
  if (!dims_) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < dims_->size(); ++i) {
    if (i > 0) out += ',';
    out += (*dims_)[i] < 0 ? std::string("?") : std::to_string((*dims_)[i]);
  }
  return out + "]";
}

}  // namespace troupe
