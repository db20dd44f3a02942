// Convolution and pooling ops: definitions, shape functions and builders.
#include "troupe/graph/ops/conv_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/ops/window_geometry.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

constexpr std::string_view kFloating = "T: {float32, float64}";

// The attributes every op here shares: strides (or ksize too), padding, data_format.
Status check_window_attrs(const InferenceContext& c, bool pooling) {
  auto checked = [&](Status s) { return s.ok() ? s : c.invalid("{}", s.message()); };
  TROUPE_RETURN_IF_ERROR(
      checked(check_nhwc_attribute("strides", c.attr<std::vector<int64_t>>("strides"))));
  if (pooling) {
    TROUPE_RETURN_IF_ERROR(
        checked(check_nhwc_attribute("ksize", c.attr<std::vector<int64_t>>("ksize"))));
  } else {
    TROUPE_RETURN_IF_ERROR(
        checked(check_nhwc_attribute("dilations", c.attr<std::vector<int64_t>>("dilations"))));
  }
  TROUPE_RETURN_IF_ERROR(checked(parse_padding(c.attr<std::string>("padding")).status()));
  if (c.attr<std::string>("data_format") != "NHWC") {
    return c.invalid("data_format \"{}\": only NHWC is supported on the CPU",
                     c.attr<std::string>("data_format"));
  }
  return Status::OK();
}

Status require_rank4(const InferenceContext& c, int i, std::string_view what) {
  if (c.input(i).rank_known() && c.input(i).rank() != 4) {
    return c.invalid("{} must be 4-dimensional, got shape {}", what, c.input(i).to_string());
  }
  return Status::OK();
}

// One spatial output dimension, or -1 while unknown.
StatusOr<int64_t> spatial_output(const InferenceContext& c, int64_t in, int64_t window,
                                 int64_t stride, int64_t dilation) {
  if (window < 0) return int64_t{-1};
  auto g =
      window_geometry(in, window, stride, dilation, *parse_padding(c.attr<std::string>("padding")));
  if (!g.ok()) return c.invalid("{}", g.status().message());
  return g->output;
}

// Conv2D, and DepthwiseConv2dNative (`depthwise`: each input channel convolved with its own
// filters [rows, cols, channels, multiplier], giving channels * multiplier outputs).
Status convolution_shape(InferenceContext& c, bool depthwise) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/false));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 0, "input"));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 1, "filter"));
  auto dim = [&](int i, int d) { return c.input(i).rank_known() ? c.input(i).dim(d) : -1; };
  const int64_t in_channels = dim(0, 3), filter_channels = dim(1, 2);
  if (in_channels >= 0 && filter_channels >= 0 && in_channels != filter_channels) {
    return c.invalid("the input has {} channels but the filter expects {} (input {}, filter {})",
                     in_channels, filter_channels, c.input(0).to_string(), c.input(1).to_string());
  }
  const auto& strides = c.attr<std::vector<int64_t>>("strides");
  const auto& dilations = c.attr<std::vector<int64_t>>("dilations");
  TROUPE_ASSIGN_OR_RETURN(int64_t rows,
                          spatial_output(c, dim(0, 1), dim(1, 0), strides[1], dilations[1]));
  TROUPE_ASSIGN_OR_RETURN(int64_t cols,
                          spatial_output(c, dim(0, 2), dim(1, 1), strides[2], dilations[2]));
  int64_t depth = dim(1, 3);
  if (depthwise) depth = depth < 0 || filter_channels < 0 ? -1 : depth * filter_channels;
  c.set_output(0, PartialShape({dim(0, 0), rows, cols, depth}));
  return Status::OK();
}

Status conv2d_shape(InferenceContext& c) {
  return convolution_shape(c, false);
}
Status depthwise_shape(InferenceContext& c) {
  return convolution_shape(c, true);
}

// Output 0 is the shape held by input `i` (an int32 vector of 4), as far as it is known.
Status shape_from_sizes(InferenceContext& c, int i) {
  if (auto sizes = c.input_as_ints(i)) {
    if (sizes->size() != 4) {
      return c.invalid("the sizes must have 4 entries, got {}", sizes->size());
    }
    c.set_output(0, PartialShape(*sizes));
  } else {
    c.set_output(0, PartialShape::unknown_of_rank(4));
  }
  return Status::OK();
}

Status conv2d_backprop_input_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/false));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 1, "filter"));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 2, "out_backprop"));
  return shape_from_sizes(c, 0);
}

Status conv2d_backprop_filter_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/false));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 0, "input"));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 2, "out_backprop"));
  return shape_from_sizes(c, 1);
}

Status pool_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/true));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 0, "value"));
  const PartialShape& in = c.input(0);
  auto dim = [&](int d) { return in.rank_known() ? in.dim(d) : -1; };
  const auto& ksize = c.attr<std::vector<int64_t>>("ksize");
  const auto& strides = c.attr<std::vector<int64_t>>("strides");
  TROUPE_ASSIGN_OR_RETURN(int64_t rows, spatial_output(c, dim(1), ksize[1], strides[1], 1));
  TROUPE_ASSIGN_OR_RETURN(int64_t cols, spatial_output(c, dim(2), ksize[2], strides[2], 1));
  c.set_output(0, PartialShape({dim(0), rows, cols, dim(3)}));
  return Status::OK();
}

Status max_pool_grad_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/true));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 0, "orig_input"));
  c.set_output(0, c.input(0));
  return Status::OK();
}

Status avg_pool_grad_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_window_attrs(c, /*pooling=*/true));
  TROUPE_RETURN_IF_ERROR(require_rank4(c, 1, "grad"));
  return shape_from_sizes(c, 0);
}

OpDefBuilder conv_def(const char* name) {
  OpDefBuilder b(name);
  b.attr(kFloating)
      .attr("strides: list(int)")
      .attr("use_cudnn_on_gpu: bool = true")
      .attr("padding: string")
      .attr("data_format: string = \"NHWC\"")
      .attr("dilations: list(int) = [1, 1, 1, 1]");
  return b;
}

OpDefBuilder pool_def(const char* name) {
  OpDefBuilder b(name);
  b.attr(kFloating)
      .attr("ksize: list(int)")
      .attr("strides: list(int)")
      .attr("padding: string")
      .attr("data_format: string = \"NHWC\"");
  return b;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  must_register(r, conv_def("Conv2D")
                       .input("input: T")
                       .input("filter: T")
                       .output("output: T")
                       .shape_fn(conv2d_shape));
  must_register(r, conv_def("Conv2DBackpropInput")
                       .input("input_sizes: int32")
                       .input("filter: T")
                       .input("out_backprop: T")
                       .output("output: T")
                       .shape_fn(conv2d_backprop_input_shape));
  must_register(r, conv_def("Conv2DBackpropFilter")
                       .input("input: T")
                       .input("filter_sizes: int32")
                       .input("out_backprop: T")
                       .output("output: T")
                       .shape_fn(conv2d_backprop_filter_shape));
  // tf.nn.depthwise_conv2d_native and its gradients: input [batch, rows, cols, channels],
  // filter [rows, cols, channels, multiplier], output channel c * multiplier + m the
  // convolution of input channel c with filter (:, :, c, m).
  must_register(r, conv_def("DepthwiseConv2dNative")
                       .input("input: T")
                       .input("filter: T")
                       .output("output: T")
                       .shape_fn(depthwise_shape));
  must_register(r, conv_def("DepthwiseConv2dNativeBackpropInput")
                       .input("input_sizes: int32")
                       .input("filter: T")
                       .input("out_backprop: T")
                       .output("output: T")
                       .shape_fn(conv2d_backprop_input_shape));
  must_register(r, conv_def("DepthwiseConv2dNativeBackpropFilter")
                       .input("input: T")
                       .input("filter_sizes: int32")
                       .input("out_backprop: T")
                       .output("output: T")
                       .shape_fn(conv2d_backprop_filter_shape));
  for (const char* name : {"MaxPool", "AvgPool"}) {
    must_register(r, pool_def(name).input("value: T").output("output: T").shape_fn(pool_shape));
  }
  must_register(r, pool_def("MaxPoolGrad")
                       .input("orig_input: T")
                       .input("orig_output: T")
                       .input("grad: T")
                       .output("output: T")
                       .shape_fn(max_pool_grad_shape));
  must_register(r, pool_def("AvgPoolGrad")
                       .input("orig_input_shape: int32")
                       .input("grad: T")
                       .output("output: T")
                       .shape_fn(avg_pool_grad_shape));
}

namespace ops {
namespace {

Operation conv(NodeBuilder b, const ConvAttrs& a) {
  return b.attr("strides", a.strides)
      .attr("padding", a.padding)
      .attr("dilations", a.dilations)
      .finalize();
}

Operation pool(NodeBuilder b, const PoolAttrs& a) {
  return b.attr("ksize", a.ksize).attr("strides", a.strides).attr("padding", a.padding).finalize();
}

}  // namespace

Output Conv2D(const Scope& s, const Input& input, const Input& filter, const ConvAttrs& attrs) {
  NodeBuilder b(s, "Conv2D");
  b.input(input).input(filter);
  return conv(std::move(b), attrs);
}

Output Conv2DBackpropInput(const Scope& s, const Input& input_sizes, const Input& filter,
                           const Input& out_backprop, const ConvAttrs& attrs) {
  NodeBuilder b(s, "Conv2DBackpropInput");
  b.input(input_sizes).input(filter).input(out_backprop);
  return conv(std::move(b), attrs);
}

Output Conv2DBackpropFilter(const Scope& s, const Input& input, const Input& filter_sizes,
                            const Input& out_backprop, const ConvAttrs& attrs) {
  NodeBuilder b(s, "Conv2DBackpropFilter");
  b.input(input).input(filter_sizes).input(out_backprop);
  return conv(std::move(b), attrs);
}

Output MaxPool(const Scope& s, const Input& value, const PoolAttrs& attrs) {
  NodeBuilder b(s, "MaxPool");
  b.input(value);
  return pool(std::move(b), attrs);
}

Output AvgPool(const Scope& s, const Input& value, const PoolAttrs& attrs) {
  NodeBuilder b(s, "AvgPool");
  b.input(value);
  return pool(std::move(b), attrs);
}

Output MaxPoolGrad(const Scope& s, const Input& orig_input, const Input& orig_output,
                   const Input& grad, const PoolAttrs& attrs) {
  NodeBuilder b(s, "MaxPoolGrad");
  b.input(orig_input).input(orig_output).input(grad);
  return pool(std::move(b), attrs);
}

Output AvgPoolGrad(const Scope& s, const Input& orig_input_shape, const Input& grad,
                   const PoolAttrs& attrs) {
  NodeBuilder b(s, "AvgPoolGrad");
  b.input(orig_input_shape).input(grad);
  return pool(std::move(b), attrs);
}

}  // namespace ops
}  // namespace troupe
