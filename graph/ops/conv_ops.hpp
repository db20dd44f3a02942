// Convolution and pooling ops in NHWC layout, as TensorFlow 1.x defines them: Conv2D (filter
// [height, width, in_channels, out_channels]) with its two backprops, MaxPool and AvgPool with
// their gradients. Padding is "SAME" or "VALID" (window_geometry.hpp); strides, ksize and
// dilations have 4 entries whose first and last are 1. data_format must be "NHWC" (as
// TensorFlow's CPU kernels require).
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct ConvAttrs {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "VALID";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
};

Output Conv2D(const Scope& scope, const Input& input, const Input& filter, const ConvAttrs& attrs);
// The gradient with respect to the input, of shape `input_sizes` (an int32 vector).
Output Conv2DBackpropInput(const Scope& scope, const Input& input_sizes, const Input& filter,
                           const Input& out_backprop, const ConvAttrs& attrs);
// The gradient with respect to the filter, of shape `filter_sizes` (an int32 vector).
Output Conv2DBackpropFilter(const Scope& scope, const Input& input, const Input& filter_sizes,
                            const Input& out_backprop, const ConvAttrs& attrs);

struct PoolAttrs {
  std::vector<int64_t> ksize;
  std::vector<int64_t> strides;
  std::string padding = "VALID";
};

Output MaxPool(const Scope& scope, const Input& value, const PoolAttrs& attrs);
Output AvgPool(const Scope& scope, const Input& value, const PoolAttrs& attrs);
// grad routed to the first maximum of each window of orig_input.
Output MaxPoolGrad(const Scope& scope, const Input& orig_input, const Input& orig_output,
                   const Input& grad, const PoolAttrs& attrs);
// grad spread evenly over each window (padding excluded) of an input of shape orig_input_shape.
Output AvgPoolGrad(const Scope& scope, const Input& orig_input_shape, const Input& grad,
                   const PoolAttrs& attrs);

}  // namespace troupe::ops
