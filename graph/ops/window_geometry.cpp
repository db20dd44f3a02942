// WindowGeometry: TensorFlow's output sizes and padding for VALID and SAME windows.
#include "troupe/graph/ops/window_geometry.hpp"

#include <fmt/ranges.h>

#include <algorithm>

namespace troupe {

StatusOr<Padding> parse_padding(const std::string& padding) {
  if (padding == "VALID") return Padding::kValid;
  if (padding == "SAME") return Padding::kSame;
  return errors::InvalidArgument("padding must be \"SAME\" or \"VALID\", got \"{}\"", padding);
}

StatusOr<WindowGeometry> window_geometry(int64_t in, int64_t window, int64_t stride,
                                         int64_t dilation, Padding padding) {
  if (window <= 0 || stride <= 0 || dilation <= 0) {
    return errors::InvalidArgument(
        "window size ({}), stride ({}) and dilation ({}) must be positive", window, stride,
        dilation);
  }
  if (in < 0) return WindowGeometry{-1, -1};
  const int64_t effective = (window - 1) * dilation + 1;
  WindowGeometry g;
  if (padding == Padding::kValid) {
    if (in < effective) {
      return errors::InvalidArgument(
          "the window ({} elements, dilated to {}) is larger than the input ({}) with VALID "
          "padding",
          window, effective, in);
    }
    g.output = (in - effective + stride) / stride;
    return g;
  }
  g.output = (in + stride - 1) / stride;
  const int64_t needed = std::max<int64_t>((g.output - 1) * stride + effective - in, 0);
  g.pad_before = needed / 2;
  return g;
}

Status check_nhwc_attribute(const std::string& name, const std::vector<int64_t>& values) {
  if (values.size() != 4) {
    return errors::InvalidArgument("{} must have 4 entries (NHWC), got [{}]", name,
                                   fmt::join(values, ","));
  }
  if (values[0] != 1 || values[3] != 1) {
    return errors::InvalidArgument(
        "{} [{}]: windows over the batch or the channels are not supported (the first and last "
        "entries must be 1)",
        name, fmt::join(values, ","));
  }
  for (int64_t v : values) {
    if (v <= 0) {
      return errors::InvalidArgument("{} [{}] must be positive", name, fmt::join(values, ","));
    }
  }
  return Status::OK();
}

}  // namespace troupe
