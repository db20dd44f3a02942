// IndexedSlices and Gradient: the sparse form of a gradient (TensorFlow's tf.IndexedSlices).
//
// The gradient of a gather (an embedding lookup) with respect to its table is zero except in the
// rows it read. IndexedSlices holds only those rows:
//
//   dense[indices[i], ...] += values[i, ...]   for each i (duplicate indices sum)
//
// with every other row of the dense tensor (of shape dense_shape) zero. A step that touches a few
// rows of a large table then moves, and updates, only those rows.
//
// A Gradient is either a dense tensor or IndexedSlices; add_gradients_or_slices
// (graph/gradients.hpp) returns Gradients, and an optimizer updates a variable from a sparse one
// with its SparseApply op (graph/optimizers.hpp).
#pragma once

#include <vector>

#include "troupe/graph/scope.hpp"

namespace troupe {

struct IndexedSlices {
  Output values;       // [n, d1, ..., dk]: the rows, of the dense tensor's dtype
  Output indices;      // int32 or int64 [n]: the row of each
  Output dense_shape;  // int32 or int64 [k + 1]: the dense tensor's shape
};

class Gradient {
 public:
  Gradient() = default;
  Gradient(Output dense) : dense_(std::move(dense)) {}            // NOLINT: implicit by design
  Gradient(IndexedSlices slices) : slices_(std::move(slices)) {}  // NOLINT
  Gradient(const Operation& op) : dense_(op, 0) {}                // NOLINT

  bool valid() const { return dense_.valid() || slices_.values.valid(); }
  bool is_sparse() const { return slices_.values.valid(); }
  // The dense tensor; an invalid Output for IndexedSlices.
  const Output& dense() const { return dense_; }
  const IndexedSlices& slices() const { return slices_; }
  // The dtype of the dense tensor (of the values for IndexedSlices).
  DataType dtype() const { return is_sparse() ? slices_.values.dtype() : dense_.dtype(); }
  // The tensor that holds the numbers: the dense tensor, or the slices' values.
  const Output& values() const { return is_sparse() ? slices_.values : dense_; }

 private:
  Output dense_;
  IndexedSlices slices_;
};

// The dense tensor `slices` stands for: UnsortedSegmentSum of the values by index (as
// TensorFlow's convert_to_tensor of IndexedSlices). When dense_shape is a constant the result's
// shape is known. `gradient` that is already dense is returned as it is.
Output to_dense(const Scope& scope, const Gradient& gradient);

// IndexedSlices holding every row of each of `parts` (TensorFlow's aggregation of sparse
// gradients: values and indices concatenated, dense_shape of the first). Indices of mixed dtypes
// are cast to int64.
IndexedSlices concat_slices(const Scope& scope, const std::vector<IndexedSlices>& parts);

// IndexedSlices with one entry per distinct index, the values of duplicate indices summed
// (TensorFlow's Optimizer._deduplicate_indexed_slices: Unique, then UnsortedSegmentSum).
IndexedSlices deduplicate(const Scope& scope, const IndexedSlices& slices);

}  // namespace troupe
