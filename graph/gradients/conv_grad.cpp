// Gradients of Conv2D, MaxPool and AvgPool (graph/ops/conv_ops.hpp), as TensorFlow's
// (python/ops/nn_grad.py): the backprop ops with the forward op's attributes.
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

ops::ConvAttrs conv_attrs(const Operation& op) {
  return {op_attr<std::vector<int64_t>>(op, "strides"), op_attr<std::string>(op, "padding"),
          op_attr<std::vector<int64_t>>(op, "dilations")};
}

ops::PoolAttrs pool_attrs(const Operation& op) {
  return {op_attr<std::vector<int64_t>>(op, "ksize"), op_attr<std::vector<int64_t>>(op, "strides"),
          op_attr<std::string>(op, "padding")};
}

Status conv2d_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output input = op_input(op, 0), filter = op_input(op, 1);
  const ops::ConvAttrs attrs = conv_attrs(op);
  *dx = {ops::Conv2DBackpropInput(s, shape_of(s, input), filter, dy[0], attrs),
         ops::Conv2DBackpropFilter(s, input, shape_of(s, filter), dy[0], attrs)};
  return s.status();
}

// TensorFlow's _Conv2DBackpropInputGrad (the gradients of a transposed convolution): none for
// the sizes, the filter's from a backprop of the filter, the input's from a convolution.
Status conv2d_backprop_input_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                  Outputs* dx) {
  const Output filter = op_input(op, 1), out_backprop = op_input(op, 2);
  const ops::ConvAttrs attrs = conv_attrs(op);
  *dx = {Output(), ops::Conv2DBackpropFilter(s, dy[0], shape_of(s, filter), out_backprop, attrs),
         ops::Conv2D(s, dy[0], filter, attrs)};
  return s.status();
}

// TensorFlow's _Conv2DBackpropFilterGrad.
Status conv2d_backprop_filter_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                   Outputs* dx) {
  const Output input = op_input(op, 0), out_backprop = op_input(op, 2);
  const ops::ConvAttrs attrs = conv_attrs(op);
  *dx = {ops::Conv2DBackpropInput(s, shape_of(s, input), dy[0], out_backprop, attrs), Output(),
         ops::Conv2D(s, input, dy[0], attrs)};
  return s.status();
}

// A depthwise convolution's gradients: its two backprops, with its attributes (TensorFlow's
// _DepthwiseConv2dNativeGrad).
Status depthwise_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output input = op_input(op, 0), filter = op_input(op, 1);
  auto backprop = [&](const char* name, Output first, Output second) {
    return Output(NodeBuilder(s, name)
                      .input(first)
                      .input(second)
                      .input(dy[0])
                      .attr("strides", op_attr<std::vector<int64_t>>(op, "strides"))
                      .attr("padding", op_attr<std::string>(op, "padding"))
                      .attr("dilations", op_attr<std::vector<int64_t>>(op, "dilations"))
                      .finalize(),
                  0);
  };
  *dx = {backprop("DepthwiseConv2dNativeBackpropInput", shape_of(s, input), filter),
         backprop("DepthwiseConv2dNativeBackpropFilter", input, shape_of(s, filter))};
  return s.status();
}

Status max_pool_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::MaxPoolGrad(s, op_input(op, 0), Output(op, 0), dy[0], pool_attrs(op))};
  return s.status();
}

Status avg_pool_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::AvgPoolGrad(s, shape_of(s, op_input(op, 0)), dy[0], pool_attrs(op))};
  return s.status();
}

}  // namespace

void register_conv_gradients(GradientRegistry& r) {
  must_register_gradient(r, "Conv2D", conv2d_grad);
  must_register_gradient(r, "Conv2DBackpropInput", conv2d_backprop_input_grad);
  must_register_gradient(r, "Conv2DBackpropFilter", conv2d_backprop_filter_grad);
  must_register_gradient(r, "DepthwiseConv2dNative", depthwise_grad);
  must_register_gradient(r, "MaxPool", max_pool_grad);
  must_register_gradient(r, "AvgPool", avg_pool_grad);
}

}  // namespace troupe
