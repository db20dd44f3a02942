// Tests for Conv2D, its backprops, MaxPool, AvgPool and their gradients through the C++
// builder API: small cases worked by hand, shapes at build time, and the errors.
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/gradients.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

namespace {

// A [1, 3, 3, 1] image 1..9.
Output image(const Scope& s) {
  return ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                                 TensorShape{1, 3, 3, 1})));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(conv_kernels)

BOOST_AUTO_TEST_CASE(conv2d_same_and_valid_by_hand) {
  Scope s = Scope::new_root();
  // A 2x2 filter of ones: each output sums a 2x2 window.
  auto ones = ops::Const(
      s, value_or_throw(Tensor::from_vector<float>({1, 1, 1, 1}, TensorShape{2, 2, 1, 1})));
  auto valid = ops::Conv2D(s, image(s), ones, {.padding = "VALID"});
  BOOST_TEST(valid.shape().to_string() == "[1,2,2,1]");
  check_tensor<float>(run_one(s, valid), TensorShape{1, 2, 2, 1}, {12, 16, 24, 28});
  // SAME pads one row and column after (the smaller half before): the last ones see less.
  auto same = ops::Conv2D(s, image(s), ones, {.padding = "SAME"});
  check_tensor<float>(run_one(s, same), TensorShape{1, 3, 3, 1},
                      {12, 16, 9, 24, 28, 15, 15, 17, 9});
  auto strided = ops::Conv2D(s, image(s), ones, {.strides = {1, 2, 2, 1}, .padding = "SAME"});
  check_tensor<float>(run_one(s, strided), TensorShape{1, 2, 2, 1}, {12, 9, 15, 9});
}

BOOST_AUTO_TEST_CASE(pooling_by_hand_and_their_gradients) {
  Scope s = Scope::new_root();
  ops::PoolAttrs attrs{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "SAME"};
  auto max = ops::MaxPool(s, image(s), attrs);
  check_tensor<float>(run_one(s, max), TensorShape{1, 2, 2, 1}, {5, 6, 8, 9});
  auto avg = ops::AvgPool(s, image(s), attrs);
  check_tensor<float>(run_one(s, avg), TensorShape{1, 2, 2, 1}, {3, 4.5f, 7.5f, 9});
  auto x = image(s);
  auto dmax =
      value_or_throw(add_gradients(s, {ops::Sum(s, ops::MaxPool(s, x, attrs), {0, 1, 2, 3})}, {x}));
  check_tensor<float>(run_one(s, dmax[0]), TensorShape{1, 3, 3, 1}, {0, 0, 0, 0, 1, 1, 0, 1, 1});
  auto davg =
      value_or_throw(add_gradients(s, {ops::Sum(s, ops::AvgPool(s, x, attrs), {0, 1, 2, 3})}, {x}));
  check_tensor<float>(run_one(s, davg[0]), TensorShape{1, 3, 3, 1},
                      {0.25f, 0.25f, 0.5f, 0.25f, 0.25f, 0.5f, 0.5f, 0.5f, 1});
}

BOOST_AUTO_TEST_CASE(max_pool_gradient_goes_to_each_channels_first_maximum) {
  // One 2x2 window, three channels: all equal (the first position takes it), the maximum last,
  // and a tie between the second and fourth positions (the second takes it).
  Scope s = Scope::new_root();
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector<float>(
                             {7, 1, 0, 7, 2, 5, 7, 3, 0, 7, 4, 5}, TensorShape{1, 2, 2, 3})));
  ops::PoolAttrs attrs{.ksize = {1, 2, 2, 1}, .strides = {1, 2, 2, 1}, .padding = "VALID"};
  auto dx =
      value_or_throw(add_gradients(s, {ops::Sum(s, ops::MaxPool(s, x, attrs), {0, 1, 2, 3})}, {x}));
  check_tensor<float>(run_one(s, dx[0]), TensorShape{1, 2, 2, 3},
                      {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
}

BOOST_AUTO_TEST_CASE(conv2d_gradients_by_hand) {
  Scope s = Scope::new_root();
  auto x = image(s);
  auto w = ops::Const(
      s, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, TensorShape{2, 2, 1, 1})));
  auto y = ops::Sum(s, ops::Conv2D(s, x, w, {.padding = "VALID"}), {0, 1, 2, 3});
  auto grads = value_or_throw(add_gradients(s, {y}, {x, w}));
  // dy/dx: how many windows cover each pixel, weighted by the filter entry covering it.
  check_tensor<float>(run_one(s, grads[0]), TensorShape{1, 3, 3, 1}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  // dy/dw[i][j]: the sum of the pixels that entry sees.
  check_tensor<float>(run_one(s, grads[1]), TensorShape{2, 2, 1, 1}, {12, 16, 24, 28});
}

BOOST_AUTO_TEST_CASE(bad_shapes_and_attributes_are_errors_naming_the_node) {
  Scope s = Scope::new_root();
  auto filter = ops::Const(s, Tensor(DataType::kFloat, TensorShape{2, 2, 3, 1}));
  ops::Conv2D(s.with_op_name("mismatch"), image(s), filter, {.padding = "VALID"});
  check_error(s.status(), Code::kInvalidArgument,
              "node 'mismatch' (Conv2D): the input has 1 channels but the filter expects 3");
  Scope t = Scope::new_root();
  ops::MaxPool(t.with_op_name("pool"), image(t),
               {.ksize = {1, 2, 2, 1}, .strides = {1, 1, 1, 1}, .padding = "FULL"});
  check_error(t.status(), Code::kInvalidArgument,
              "node 'pool' (MaxPool): padding must be \"SAME\" or \"VALID\", got \"FULL\"");
  Scope u = Scope::new_root();
  auto fed = ops::Placeholder(u, DataType::kFloat);
  auto conv = ops::Conv2D(u.with_op_name("late"), fed,
                          ops::Const(u, Tensor(DataType::kFloat, TensorShape{3, 3, 1, 1})),
                          {.padding = "VALID"});
  check_error(
      run_graph(u, {conv}, {{fed, Tensor(DataType::kFloat, TensorShape{1, 2, 2, 1})}}).status(),
      Code::kInvalidArgument, "node 'late' (Conv2D): the window");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
