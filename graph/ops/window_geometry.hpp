// WindowGeometry: where a sliding window (a convolution's filter, a pooling window) lands on one
// spatial dimension, as TensorFlow computes it for padding "VALID" and "SAME" — shared by the
// shape functions and the kernels of Conv2D and the pooling ops so both agree.
//
// With an effective window k' = (k - 1) * dilation + 1: VALID gives ceil((in - k' + 1) / stride)
// outputs and no padding; SAME gives ceil(in / stride) outputs and pads max((out - 1) * stride +
// k' - in, 0) elements, the smaller half before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct WindowGeometry {
  int64_t output = 0;      // outputs along the dimension
  int64_t pad_before = 0;  // padding elements before the input (SAME only)
};

enum class Padding { kValid, kSame };

// "VALID" or "SAME"; InvalidArgument naming the value otherwise.
StatusOr<Padding> parse_padding(const std::string& padding);

// The geometry for an input of `in` elements (-1: unknown, giving output -1); InvalidArgument
// when the window does not fit a VALID input or a size is not positive.
StatusOr<WindowGeometry> window_geometry(int64_t in, int64_t window, int64_t stride,
                                         int64_t dilation, Padding padding);

// The NHWC attributes of Conv2D and the pooling ops (strides, ksize, dilations: 4 entries, 1 for
// the batch and the channels); InvalidArgument naming the attribute otherwise.
Status check_nhwc_attribute(const std::string& name, const std::vector<int64_t>& values);

}  // namespace troupe
