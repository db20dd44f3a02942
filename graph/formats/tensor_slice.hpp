// A slice of a checkpointed tensor, as TensorFlow's RestoreV2 names it in `shape_and_slices`:
// "" for the whole tensor, else the whole tensor's dimensions and then the slice, one
// "start,length" (or "-" for all of it) per dimension, ':'-separated —
// "100 100 20,20:-" is rows 20..39 of a [100, 100] tensor, every column. A partitioned
// variable's shard restores from such a slice of the whole variable saved in a checkpoint.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

struct TensorSliceSpec {
  bool whole = true;                // "": the tensor as it is, whatever its shape
  std::vector<int64_t> full_shape;  // otherwise: the whole tensor's shape ...
  std::vector<int64_t> start;       // ... and, per dimension, where the slice starts
  std::vector<int64_t> length;      // and how long it is
};

// Parses `spec`. InvalidArgument quoting it and saying what is wrong: a dimension that is not
// a number >= 0, a slice of another rank than the shape, a start or length outside the
// dimension.
StatusOr<TensorSliceSpec> parse_tensor_slice_spec(std::string_view spec);

// The slice of `whole` that `spec` names, in a new buffer (`whole` itself for a whole spec).
// InvalidArgument, naming `what`, if whole's shape is not the spec's full shape or its dtype is
// a string.
StatusOr<Tensor> slice_of(const Tensor& whole, const TensorSliceSpec& spec, std::string_view what);

// The spec string of the block of a `full_shape` tensor that starts at `start` and is `length`
// long in each dimension: "10 16 0,5:-" (a dimension taken whole is "-").
std::string tensor_slice_spec_string(const std::vector<int64_t>& full_shape,
                                     const std::vector<int64_t>& start,
                                     const std::vector<int64_t>& length);

// Copies into `dst` the elements it shares with `src`, where each is a block of one larger
// tensor starting at `dst_start` and `src_start` (dimensions: their shapes; all of one rank and
// one dtype, not strings). Returns how many elements were copied (0 if the blocks are apart).
int64_t copy_overlap(const Tensor& src, const std::vector<int64_t>& src_start, Tensor& dst,
                     const std::vector<int64_t>& dst_start);

}  // namespace troupe
