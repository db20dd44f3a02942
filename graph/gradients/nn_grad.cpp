// Gradients of the neural-network ops: BiasAdd, Relu, Sigmoid, Tanh, Softmax,
// SparseSoftmaxCrossEntropyWithLogits, and the fused ReluGrad and BiasAddGrad (second order).
// The formulas are TensorFlow's (python/ops/nn_grad.py, math_grad.py).
#include "troupe/graph/gradients/standard_gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using Outputs = std::vector<Output>;

Status bias_add_grad(const Scope& s, const Operation&, const Outputs& dy, Outputs* dx) {
  *dx = {dy[0], ops::BiasAddGrad(s, dy[0])};
  return s.status();
}

// Relu's output is > 0 exactly where its input is.
Status relu_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::ReluGrad(s, dy[0], Output(op, 0))};
  return s.status();
}

Status sigmoid_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::SigmoidGrad(s, Output(op, 0), dy[0])};
  return s.status();
}

Status tanh_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::TanhGrad(s, Output(op, 0), dy[0])};
  return s.status();
}

// For softmax s of the last dimension and gradient g: (g - sum(g * s, last, keep_dims)) * s.
Output softmax_backprop(const Scope& s, const Output& softmax, const Output& g) {
  const Output dot = ops::Sum(s, ops::Mul(s, g, softmax), -1, {.keep_dims = true});
  return ops::Mul(s, ops::Sub(s, g, dot), softmax);
}

Status softmax_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {softmax_backprop(s, Output(op, 0), dy[0])};
  return s.status();
}

// loss[b] = logsumexp(features[b]) - features[b, label[b]], whose gradient with respect to
// features[b] is the op's second output, backprop[b] = softmax(features[b]) - one_hot(label[b]):
// d(features) = d(loss)[:, None] * backprop. backprop = softmax(features) - constant adds, for a
// gradient g reaching it, softmax's backprop of g. No gradient for the labels.
Status sparse_softmax_xent_grad(const Scope& s, const Operation& op, const Outputs& dy,
                                Outputs* dx) {
  const Output backprop(op, 1);
  Output features_grad = ops::Mul(s, ops::Reshape(s, dy[0], {-1, 1}), backprop);
  // add_gradients fills an output that received nothing with ZerosLike: skip the term then.
  if (dy[1].node()->op_name() != "ZerosLike") {
    const Output softmax = ops::Softmax(s, op_input(op, 0));
    features_grad = ops::Add(s, features_grad, softmax_backprop(s, softmax, dy[1]));
  }
  *dx = {features_grad, Output()};
  return s.status();
}

// ReluGrad(g, features) is linear in g, masked by features > 0: d/dg = ReluGrad(dy, features);
// zero (almost everywhere) with respect to features.
Status relu_grad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const Output features = op_input(op, 1);
  *dx = {ops::ReluGrad(s, dy[0], features), ops::ZerosLike(s, features)};
  return s.status();
}

// BiasAddGrad sums over all but the last dimension: its gradient broadcasts back.
Status bias_add_grad_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  *dx = {ops::BroadcastTo(s, dy[0], shape_of(s, op_input(op, 0)))};
  return s.status();
}

// LRN: its gradient kernel, given the input and the output (TensorFlow's _LRNGrad).
Status lrn_grad(const Scope& s, const Operation& op, const Outputs& dy, Outputs* dx) {
  const AttrMap& attrs = op.node()->def().attrs;
  Operation grad = NodeBuilder(s, "LRNGrad")
                       .input(dy[0])
                       .input(op_input(op, 0))
                       .input(Output(op, 0))
                       .attr("depth_radius", attrs.at("depth_radius").get<int64_t>())
                       .attr("bias", attrs.at("bias").get<float>())
                       .attr("alpha", attrs.at("alpha").get<float>())
                       .attr("beta", attrs.at("beta").get<float>())
                       .finalize();
  *dx = {Output(grad, 0)};
  return s.status();
}

}  // namespace

void register_nn_gradients(GradientRegistry& r) {
  must_register_gradient(r, "LRN", lrn_grad);
  must_register_gradient(r, "BiasAdd", bias_add_grad);
  must_register_gradient(r, "Relu", relu_grad);
  must_register_gradient(r, "Sigmoid", sigmoid_grad);
  must_register_gradient(r, "Tanh", tanh_grad);
  must_register_gradient(r, "Softmax", softmax_grad);
  must_register_gradient(r, "SparseSoftmaxCrossEntropyWithLogits", sparse_softmax_xent_grad);
  must_register_gradient(r, "ReluGrad", relu_grad_grad);
  must_register_gradient(r, "BiasAddGrad", bias_add_grad_grad);
}

}  // namespace troupe
