// StridedSliceSpec: what TensorFlow's StridedSlice selects, worked out once from the input's
// shape, begin/end/strides and the five masks, for the shape function (with unknown dimensions)
// and the kernels (StridedSlice, StridedSliceGrad) alike.
//
// The spec given by the user is sparse (one entry per index of `t[...]`: a range, an index that
// removes its dimension (shrink), a new axis, or the ellipsis); the result is dense (one entry
// per dimension of the input): where the selection starts, its step, and how many elements it
// takes, plus the output shape.
#pragma once

#include <cstdint>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct StridedSliceMasks {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};

struct StridedSliceSpec {
  // Per input dimension: the first index taken, the step, and how many are taken (-1 where the
  // input dimension is unknown and so is the count).
  std::vector<int64_t> begin, strides, sizes;
  // The output's dimensions (-1 where unknown).
  std::vector<int64_t> output_dims;
};

// The spec for an input of dimensions `input_dims` (-1 unknown); InvalidArgument (without the
// node's name) for mismatched lengths, a zero stride, more than one ellipsis, or an index out
// of range of a known dimension.
StatusOr<StridedSliceSpec> make_strided_slice_spec(const std::vector<int64_t>& input_dims,
                                                   const std::vector<int64_t>& begin,
                                                   const std::vector<int64_t>& end,
                                                   const std::vector<int64_t>& strides,
                                                   const StridedSliceMasks& masks);

}  // namespace troupe
