// Tests for the neural-network kernels (BiasAdd, Relu, Sigmoid, Tanh, Softmax,
// SparseSoftmaxCrossEntropyWithLogits): hand-computed values, numerical stability for large
// inputs, and shape and label errors.
#include <cmath>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(nn_kernels)

BOOST_AUTO_TEST_CASE(bias_add_matrix) {
  Scope s = Scope::new_root();
  auto value = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto out = ops::BiasAdd(s, value, {10.f, 20.f, 30.f});
  BOOST_TEST(out.shape().to_string() == "[2,3]");
  check_tensor<float>(run_one(s, out), TensorShape{2, 3}, {11, 22, 33, 14, 25, 36});
  auto ints = ops::BiasAdd(s, ops::Const(s, {{1, 2}, {3, 4}}), {-1, 1});
  check_tensor<int32_t>(run_one(s, ints), TensorShape{2, 2}, {0, 3, 2, 5});
}

BOOST_AUTO_TEST_CASE(bias_add_rank_three) {
  Scope s = Scope::new_root();
  auto value = ops::Const(
      s, value_or_throw(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})));
  check_tensor<double>(run_one(s, ops::BiasAdd(s, value, {100.0, 200.0})), TensorShape{2, 2, 2},
                       {101, 202, 103, 204, 105, 206, 107, 208});
}

BOOST_AUTO_TEST_CASE(bias_add_mismatch_when_building) {
  Scope s = Scope::new_root();
  auto value = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  ops::BiasAdd(s.with_op_name("bad_bias"), value, {1.f, 2.f});
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_bias' (BiasAdd)");
  check_error(s.status(), Code::kInvalidArgument,
              "bias has 2 elements but value's last "
              "dimension is 3");
}

BOOST_AUTO_TEST_CASE(bias_add_shape_errors_when_running) {
  Scope s = Scope::new_root();
  auto value = ops::Placeholder(s, DataType::kFloat);
  auto bias = ops::Placeholder(s, DataType::kFloat);
  auto out = ops::BiasAdd(s.with_op_name("late_bias"), value, bias);
  BOOST_REQUIRE(s.ok());
  const Tensor matrix = value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  auto mismatch =
      run_graph(s, {out}, {{value, matrix}, {bias, Tensor::from_vector<float>({1, 2})}});
  check_error(mismatch.status(), Code::kInvalidArgument, "node 'late_bias' (BiasAdd)");
  check_error(mismatch.status(), Code::kInvalidArgument, "bias has 2 elements");
  auto vector = run_graph(
      s, {out},
      {{value, Tensor::from_vector<float>({1, 2})}, {bias, Tensor::from_vector<float>({1, 2})}});
  check_error(vector.status(), Code::kInvalidArgument, "rank >= 2");
  auto matrix_bias = run_graph(s, {out}, {{value, matrix}, {bias, matrix}});
  check_error(matrix_bias.status(), Code::kInvalidArgument, "bias must be a vector");
}

BOOST_AUTO_TEST_CASE(relu) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Relu(s, {-1.f, 0.f, 2.5f, -0.5f})), TensorShape{4},
                      {0, 0, 2.5, 0});
  check_tensor<int32_t>(run_one(s, ops::Relu(s, {{-3, 3}})), TensorShape{1, 2}, {0, 3});
  check_tensor<int64_t>(run_one(s, ops::Relu(s, int64_t{-9})), TensorShape{}, {0});
  check_tensor<double>(run_one(s, ops::Relu(s, {7.0})), TensorShape{1}, {7});
}

BOOST_AUTO_TEST_CASE(sigmoid_including_the_far_tails) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Sigmoid(s, {0.f, 2.f, -2.f, 100.f, -100.f})), TensorShape{5},
                      {0.5f, 0.88079708f, 0.11920292f, 1.f, 0.f});
  Tensor tails = run_one(s, ops::Sigmoid(s, {1000.f, -1000.f, 89.f, -89.f}));
  for (float v : tails.flat<float>())
    BOOST_TEST(std::isfinite(v));
  BOOST_TEST(tails.flat<float>()[0] == 1.f);
  BOOST_TEST(tails.flat<float>()[1] == 0.f);
  // In double, sigmoid(-100) = e^-100 / (1 + e^-100) is representable.
  Tensor d = run_one(s, ops::Sigmoid(s, {-100.0, 100.0}));
  BOOST_TEST(std::abs(d.flat<double>()[0] / 3.720075976020836e-44 - 1) <= 1e-12);
  BOOST_TEST(d.flat<double>()[1] == 1.0);
}

BOOST_AUTO_TEST_CASE(tanh) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Tanh(s, {0.f, 1.f, -1.f, 50.f, -50.f})), TensorShape{5},
                      {0, 0.76159416f, -0.76159416f, 1, -1});
  check_tensor<double>(run_one(s, ops::Tanh(s, 0.5)), TensorShape{}, {0.46211715726000974}, 1e-12);
}

BOOST_AUTO_TEST_CASE(softmax_rows) {
  Scope s = Scope::new_root();
  auto logits = ops::Const(s, {{1.f, 2.f, 3.f}, {1000.f, 1000.f, 1000.f}, {1000.f, 0.f, -1000.f}});
  Tensor out = run_one(s, ops::Softmax(s, logits));
  check_tensor<float>(out, TensorShape{3, 3},
                      {0.09003057f, 0.24472847f, 0.66524096f, 1 / 3.f, 1 / 3.f, 1 / 3.f, 1, 0, 0});
  for (int row = 0; row < 3; ++row) {
    float sum = 0;
    for (int c = 0; c < 3; ++c)
      sum += out.flat<float>()[row * 3 + c];
    BOOST_TEST(std::abs(sum - 1.f) <= 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(softmax_of_a_vector_and_rank_three) {
  Scope s = Scope::new_root();
  check_tensor<double>(run_one(s, ops::Softmax(s, {0.0, std::log(3.0)})), TensorShape{2},
                       {0.25, 0.75}, 1e-12);
  auto cube = ops::Const(
      s, value_or_throw(Tensor::from_vector<float>({0, 0, 5, 5, -1, -1, 9, 9}, {2, 2, 2})));
  check_tensor<float>(run_one(s, ops::Softmax(s, cube)), TensorShape{2, 2, 2},
                      std::vector<float>(8, 0.5f));
}

BOOST_AUTO_TEST_CASE(softmax_of_a_scalar_fails) {
  Scope s = Scope::new_root();
  ops::Softmax(s.with_op_name("scalar_softmax"), 1.f);
  check_error(s.status(), Code::kInvalidArgument, "node 'scalar_softmax' (Softmax)");
  Scope t = Scope::new_root();
  auto x = ops::Placeholder(t, DataType::kFloat);
  auto late = run_graph(t, {ops::Softmax(t, x)}, {{x, Tensor(1.f)}});
  check_error(late.status(), Code::kInvalidArgument, "rank >= 1");
}

// features [[1,2,3],[1,1,1]], labels [2,0]:
//   row 0: softmax [0.0900306, 0.2447285, 0.6652410], loss = log(e^1+e^2+e^3) - 3 = 0.4076060
//   row 1: softmax [1/3, 1/3, 1/3], loss = log 3 = 1.0986123
BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy_by_hand) {
  Scope s = Scope::new_root();
  auto features = ops::Const(s, {{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}});
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, features, {2, 0});
  BOOST_TEST(xent.loss.shape().to_string() == "[2]");
  BOOST_TEST(xent.backprop.shape().to_string() == "[2,3]");
  auto result = run_graph(s, {xent.loss, xent.backprop});
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  check_tensor<float>(result->at(0), TensorShape{2}, {0.4076060f, 1.0986123f});
  check_tensor<float>(result->at(1), TensorShape{2, 3},
                      {0.0900306f, 0.2447285f, 0.6652410f - 1, 1 / 3.f - 1, 1 / 3.f, 1 / 3.f});
}

BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy_int64_labels_and_large_logits) {
  Scope s = Scope::new_root();
  // Row 0: logsumexp = 1000 (the other terms vanish), loss = 1000 - 0; backprop [1, -1, 0].
  // Row 1: [0.5, -1, 2] with label 1: loss = 3.2413113.
  auto features = ops::Const(s, {{1000.0, 0.0, -1000.0}, {0.5, -1.0, 2.0}});
  auto labels = ops::Const(s, Tensor::from_vector<int64_t>({1, 1}));
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s, features, labels);
  auto result = run_graph(s, {xent.loss, xent.backprop});
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  check_tensor<double>(result->at(0), TensorShape{2}, {1000, 3.2413113}, 1e-6);
  check_tensor<double>(result->at(1), TensorShape{2, 3},
                       {1, -1, 0, 0.1752904, 0.0391126 - 1, 0.7855970}, 1e-6);
}

BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy_bad_label) {
  Scope s = Scope::new_root();
  auto features = ops::Const(s, {{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}});
  auto labels = ops::Placeholder(s, DataType::kInt32);
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(s.with_op_name("xent"), features, labels);
  BOOST_REQUIRE(s.ok());
  auto too_big = run_graph(s, {xent.loss}, {{labels, Tensor::from_vector<int32_t>({0, 3})}});
  check_error(too_big.status(), Code::kInvalidArgument, "node 'xent'");
  check_error(too_big.status(), Code::kInvalidArgument,
              "label 3 at batch index 1 is outside the valid range [0, 3)");
  auto negative = run_graph(s, {xent.loss}, {{labels, Tensor::from_vector<int32_t>({-1, 0})}});
  check_error(negative.status(), Code::kInvalidArgument, "label -1 at batch index 0");
  auto short_batch = run_graph(s, {xent.loss}, {{labels, Tensor::from_vector<int32_t>({0})}});
  check_error(short_batch.status(), Code::kInvalidArgument,
              "features have batch 2 but labels have 1");
}

BOOST_AUTO_TEST_CASE(sparse_softmax_cross_entropy_shape_errors_when_building) {
  Scope s = Scope::new_root();
  auto features = ops::Const(s, {{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}});
  ops::SparseSoftmaxCrossEntropyWithLogits(s.with_op_name("xent"), features, {0, 1, 2});
  check_error(s.status(), Code::kInvalidArgument, "node 'xent'");
  check_error(s.status(), Code::kInvalidArgument, "features have batch 2 but labels have 3");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
