// Tests for the gradient helper kernels (AddN, ZerosLike, OnesLike, Size, BroadcastGradientArgs,
// BroadcastTo, ReluGrad, SigmoidGrad, TanhGrad, BiasAddGrad): hand-computed values, shape
// inference, and shape errors when building and when running.
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(grad_kernels)

BOOST_AUTO_TEST_CASE(add_n_sums_in_order) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  auto b = ops::Const(s, {{10.f, 20.f}, {30.f, 40.f}});
  auto c = ops::Const(s, {{100.f, 200.f}, {300.f, 400.f}});
  auto sum = ops::AddN(s, {a, b, c});
  BOOST_TEST(sum.shape().to_string() == "[2,2]");
  check_tensor<float>(run_one(s, sum), TensorShape{2, 2}, {111, 222, 333, 444});
  check_tensor<float>(run_one(s, ops::AddN(s, {a})), TensorShape{2, 2}, {1, 2, 3, 4});
  check_tensor<int64_t>(run_one(s, ops::AddN(s, {int64_t{5}, int64_t{-7}})), TensorShape{}, {-2});
  check_tensor<double>(
      run_one(s, ops::AddN(s, {ops::Const(s, {0.5, 1.5}), ops::Const(s, {1.0, 2.0})})),
      TensorShape{2}, {1.5, 3.5});
}

BOOST_AUTO_TEST_CASE(add_n_large_input_matches_a_serial_sum) {
  // Big enough to be split over the device's threads.
  Scope s = Scope::new_root();
  std::vector<double> x(100000), y(100000), expected(100000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.25 * static_cast<double>(i);
    y[i] = -0.5 * static_cast<double>(i % 7);
    expected[i] = x[i] + y[i] + x[i];
  }
  auto a = ops::Const(s, Tensor::from_vector(x));
  auto b = ops::Const(s, Tensor::from_vector(y));
  check_tensor<double>(run_one(s, ops::AddN(s, {a, b, a})), TensorShape{100000}, expected, 0);
}

BOOST_AUTO_TEST_CASE(add_n_shape_errors) {
  Scope s = Scope::new_root();
  ops::AddN(s.with_op_name("bad_sum"), {ops::Const(s, {1.f, 2.f}), ops::Const(s, {1.f, 2.f, 3.f})});
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_sum' (AddN)");
  check_error(s.status(), Code::kInvalidArgument, "input 1 has shape [3]");

  Scope r = Scope::new_root();
  auto p = ops::Placeholder(r, DataType::kFloat);
  auto q = ops::Placeholder(r, DataType::kFloat);
  auto sum = ops::AddN(r.with_op_name("late_sum"), {p, q});
  BOOST_REQUIRE(r.ok());
  auto result = run_graph(
      r, {sum}, {{p, Tensor::from_vector<float>({1, 2})}, {q, Tensor::from_vector<float>({1})}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_sum' (AddN)");
  check_error(result.status(), Code::kInvalidArgument, "input 1 has shape [1] but input 0");

  Scope e = Scope::new_root();
  ops::AddN(e.with_op_name("empty_sum"), {});
  check_error(e.status(), Code::kInvalidArgument, "empty_sum");
}

BOOST_AUTO_TEST_CASE(zeros_like_and_ones_like) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.5, -2.0, 3.0}, {4.0, 5.0, 6.0}});
  auto zeros = ops::ZerosLike(s, x);
  BOOST_TEST(zeros.shape().to_string() == "[2,3]");
  check_tensor<double>(run_one(s, zeros), TensorShape{2, 3}, {0, 0, 0, 0, 0, 0});
  check_tensor<double>(run_one(s, ops::OnesLike(s, x)), TensorShape{2, 3}, {1, 1, 1, 1, 1, 1});
  check_tensor<int32_t>(run_one(s, ops::OnesLike(s, {7, 8})), TensorShape{2}, {1, 1});
  check_tensor<float>(run_one(s, ops::ZerosLike(s, 9.f)), TensorShape{}, {0});
  check_tensor<bool>(run_one(s, ops::OnesLike(s, {false, false})), TensorShape{2}, {true, true});
  // An empty tensor stays empty.
  auto empty = ops::Const(s, Tensor(DataType::kFloat, TensorShape{0, 3}));
  check_tensor<float>(run_one(s, ops::OnesLike(s, empty)), TensorShape{0, 3}, {});
}

BOOST_AUTO_TEST_CASE(size) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto n = ops::Size(s, x);
  BOOST_TEST(n.shape().to_string() == "[]");
  check_tensor<int32_t>(run_one(s, n), TensorShape{}, {6});
  check_tensor<int64_t>(run_one(s, ops::Size(s, 3.0, DataType::kInt64)), TensorShape{}, {1});
  auto empty = ops::Const(s, Tensor(DataType::kDouble, TensorShape{4, 0}));
  check_tensor<int32_t>(run_one(s, ops::Size(s, empty)), TensorShape{}, {0});
  check_tensor<int32_t>(run_one(s, ops::Size(s, Tensor::from_vector<std::string>({"a", "b"}))),
                        TensorShape{}, {2});
}

BOOST_AUTO_TEST_CASE(broadcast_gradient_args) {
  Scope s = Scope::new_root();
  auto check = [&](const Input& s0, const Input& s1, const std::vector<int32_t>& r0,
                   const std::vector<int32_t>& r1) {
    auto r = ops::BroadcastGradientArgs(s, s0, s1);
    BOOST_REQUIRE(s.ok());
    auto values = run_graph(s, {r.r0, r.r1});
    BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
    check_tensor<int32_t>(values->at(0), TensorShape{static_cast<int64_t>(r0.size())}, r0);
    check_tensor<int32_t>(values->at(1), TensorShape{static_cast<int64_t>(r1.size())}, r1);
  };
  check({2, 3}, {2, 3}, {}, {});
  check({2, 3}, {3}, {}, {0});
  check({3}, {2, 3}, {0}, {});
  check({2, 1}, {1, 3}, {1}, {0});
  check(Tensor(DataType::kInt32, TensorShape{0}), {2, 3}, {0, 1}, {});
  check({2, 3, 5}, {1}, {}, {0, 1, 2});
  // A dimension where both sides are 1 is reduced on both (TensorFlow's BCast).
  check({1, 4}, {1, 4}, {0}, {0});
  check({5, 1, 4}, {1, 1, 4}, {1}, {0, 1});

  auto wide = ops::BroadcastGradientArgs(s, {int64_t{4}, int64_t{1}}, {int64_t{3}});
  BOOST_TEST(wide.r0.shape().to_string() == "[?]");
  auto values = run_graph(s, {wide.r0, wide.r1});
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<int64_t>(values->at(0), TensorShape{1}, {1});
  check_tensor<int64_t>(values->at(1), TensorShape{1}, {0});
}

BOOST_AUTO_TEST_CASE(broadcast_gradient_args_errors) {
  Scope s = Scope::new_root();
  auto r = ops::BroadcastGradientArgs(s.with_op_name("bad_args"), {2, 3}, {4});
  BOOST_REQUIRE(s.ok());
  auto result = run_graph(s, {r.r0});
  check_error(result.status(), Code::kInvalidArgument, "node 'bad_args' (BroadcastGradientArgs)");
  check_error(result.status(), Code::kInvalidArgument,
              "shapes [2,3] and [4] cannot be broadcast together");

  Scope m = Scope::new_root();
  ops::BroadcastGradientArgs(m.with_op_name("matrix_args"),
                             value_or_throw(Tensor::from_vector<int32_t>({2, 3}, {1, 2})), {4});
  check_error(m.status(), Code::kInvalidArgument, "node 'matrix_args' (BroadcastGradientArgs)");
  check_error(m.status(), Code::kInvalidArgument, "s0 must be a vector");
}

BOOST_AUTO_TEST_CASE(broadcast_to) {
  Scope s = Scope::new_root();
  auto row = ops::BroadcastTo(s, {1.f, 2.f, 3.f}, {2, 3});
  BOOST_TEST(row.shape().to_string() == "[2,3]");
  check_tensor<float>(run_one(s, row), TensorShape{2, 3}, {1, 2, 3, 1, 2, 3});
  auto column = ops::BroadcastTo(s, {{1.0}, {2.0}}, {2, 3});
  check_tensor<double>(run_one(s, column), TensorShape{2, 3}, {1, 1, 1, 2, 2, 2});
  check_tensor<int32_t>(run_one(s, ops::BroadcastTo(s, 7, {2, 2})), TensorShape{2, 2},
                        {7, 7, 7, 7});
  auto middle = ops::BroadcastTo(
      s, ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 1, 2}))),
      {int64_t{2}, int64_t{3}, int64_t{2}});
  check_tensor<int64_t>(run_one(s, middle), TensorShape{2, 3, 2},
                        {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  // Same shape: the input itself; more leading dimensions; an empty result.
  check_tensor<float>(run_one(s, ops::BroadcastTo(s, {5.f, 6.f}, {2})), TensorShape{2}, {5, 6});
  check_tensor<float>(run_one(s, ops::BroadcastTo(s, {5.f, 6.f}, {2, 1, 2})), TensorShape{2, 1, 2},
                      {5, 6, 5, 6});
  check_tensor<float>(run_one(s, ops::BroadcastTo(s, {5.f}, {0, 4})), TensorShape{0, 4}, {});
  check_tensor<std::string>(
      run_one(s, ops::BroadcastTo(s, Tensor::from_vector<std::string>({"a", "b"}), {2, 2})),
      TensorShape{2, 2}, {"a", "b", "a", "b"});
}

BOOST_AUTO_TEST_CASE(broadcast_to_errors) {
  Scope s = Scope::new_root();
  ops::BroadcastTo(s.with_op_name("narrow"), {1.f, 2.f, 3.f}, {2, 2});
  check_error(s.status(), Code::kInvalidArgument, "node 'narrow' (BroadcastTo)");
  check_error(s.status(), Code::kInvalidArgument,
              "cannot broadcast a tensor of shape [3] to [2,2]");
  Scope r = Scope::new_root();
  ops::BroadcastTo(r.with_op_name("lower"), {{1.f, 2.f}}, {2});
  check_error(r.status(), Code::kInvalidArgument, "to the lower rank");

  Scope late = Scope::new_root();
  auto x = ops::Placeholder(late, DataType::kFloat);
  auto shape = ops::Placeholder(late, DataType::kInt32);
  auto out = ops::BroadcastTo(late.with_op_name("late_broadcast"), x, shape);
  BOOST_REQUIRE(late.ok());
  auto result = run_graph(
      late, {out},
      {{x, Tensor::from_vector<float>({1, 2, 3})}, {shape, Tensor::from_vector<int32_t>({3, 1})}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_broadcast' (BroadcastTo)");
  check_error(result.status(), Code::kInvalidArgument,
              "cannot broadcast a tensor of shape [3] to [3,1]");
  auto negative = run_graph(
      late, {out},
      {{x, Tensor::from_vector<float>({1})}, {shape, Tensor::from_vector<int32_t>({-2})}});
  check_error(negative.status(), Code::kInvalidArgument, "node 'late_broadcast' (BroadcastTo)");
}

BOOST_AUTO_TEST_CASE(relu_grad) {
  Scope s = Scope::new_root();
  auto g = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto features = ops::Const(s, {{-1.f, 0.f, 0.5f}, {2.f, -3.f, 1e-30f}});
  auto out = ops::ReluGrad(s, g, features);
  BOOST_TEST(out.shape().to_string() == "[2,3]");
  // Zero where features <= 0 (the gradient at 0 is 0, as TensorFlow).
  check_tensor<float>(run_one(s, out), TensorShape{2, 3}, {0, 0, 3, 4, 0, 6});
  check_tensor<int32_t>(run_one(s, ops::ReluGrad(s, {5, 6}, {1, -1})), TensorShape{2}, {5, 0});
}

BOOST_AUTO_TEST_CASE(sigmoid_grad_and_tanh_grad) {
  Scope s = Scope::new_root();
  auto y = ops::Const(s, {0.5, 0.25, 0.9});
  auto dy = ops::Const(s, {2.0, -4.0, 10.0});
  // dy * y * (1 - y)
  check_tensor<double>(run_one(s, ops::SigmoidGrad(s, y, dy)), TensorShape{3},
                       {2 * 0.5 * 0.5, -4 * 0.25 * 0.75, 10 * 0.9 * 0.1}, 1e-12);
  // dy * (1 - y^2)
  check_tensor<double>(run_one(s, ops::TanhGrad(s, y, dy)), TensorShape{3},
                       {2 * 0.75, -4 * (1 - 0.0625), 10 * (1 - 0.81)}, 1e-12);
  check_tensor<float>(run_one(s, ops::TanhGrad(s, {{0.f}}, {{3.f}})), TensorShape{1, 1}, {3});
}

BOOST_AUTO_TEST_CASE(fused_grad_shape_errors) {
  Scope s = Scope::new_root();
  ops::SigmoidGrad(s.with_op_name("bad_sigmoid_grad"), {0.5f, 0.5f}, {1.f, 2.f, 3.f});
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_sigmoid_grad' (SigmoidGrad)");

  Scope r = Scope::new_root();
  auto g = ops::Placeholder(r, DataType::kFloat);
  auto f = ops::Placeholder(r, DataType::kFloat);
  auto out = ops::ReluGrad(r.with_op_name("late_relu_grad"), g, f);
  BOOST_REQUIRE(r.ok());
  auto result = run_graph(
      r, {out}, {{g, Tensor::from_vector<float>({1, 2})}, {f, Tensor::from_vector<float>({1})}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_relu_grad' (ReluGrad)");
  check_error(result.status(), Code::kInvalidArgument, "inputs must have the same shape");

  Scope i = Scope::new_root();
  ops::TanhGrad(i.with_op_name("int_tanh_grad"), {1}, {2});
  check_error(i.status(), Code::kInvalidArgument, "int_tanh_grad");
}

BOOST_AUTO_TEST_CASE(bias_add_grad) {
  Scope s = Scope::new_root();
  auto g = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto out = ops::BiasAddGrad(s, g);
  BOOST_TEST(out.shape().to_string() == "[3]");
  check_tensor<float>(run_one(s, out), TensorShape{3}, {5, 7, 9});
  auto rank3 = ops::Const(
      s, value_or_throw(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})));
  check_tensor<double>(run_one(s, ops::BiasAddGrad(s, rank3)), TensorShape{2}, {16, 20});
  auto ints = ops::Const(s, value_or_throw(Tensor::from_vector<int32_t>({1, -1, 2, -2}, {4, 1})));
  check_tensor<int32_t>(run_one(s, ops::BiasAddGrad(s, ints)), TensorShape{1}, {0});
  auto empty = ops::Const(s, Tensor(DataType::kFloat, TensorShape{0, 2}));
  check_tensor<float>(run_one(s, ops::BiasAddGrad(s, empty)), TensorShape{2}, {0, 0});
}

BOOST_AUTO_TEST_CASE(bias_add_grad_large_input) {
  // Several blocks of rows summed apart (the last one short), split over the threads; and wide
  // rows, whose channels are split instead.
  for (auto [rows, channels] : {std::pair<int64_t, int64_t>{2000, 64}, {30001, 7}, {50, 3000}}) {
    Scope s = Scope::new_root();
    std::vector<double> values(rows * channels), expected(channels, 0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < channels; ++c) {
        values[r * channels + c] = static_cast<double>((r * 7 + c) % 11) - 5;
        expected[c] += values[r * channels + c];
      }
    }
    auto g =
        ops::Const(s, value_or_throw(Tensor::from_vector(values, TensorShape{rows, channels})));
    check_tensor<double>(run_one(s, ops::BiasAddGrad(s, g)), TensorShape{channels}, expected, 0);
  }
}

BOOST_AUTO_TEST_CASE(bias_add_grad_errors) {
  Scope s = Scope::new_root();
  ops::BiasAddGrad(s.with_op_name("vector_bias_grad"), {1.f, 2.f});
  check_error(s.status(), Code::kInvalidArgument, "node 'vector_bias_grad' (BiasAddGrad)");
  check_error(s.status(), Code::kInvalidArgument, "rank >= 2");

  Scope r = Scope::new_root();
  auto g = ops::Placeholder(r, DataType::kFloat);
  auto out = ops::BiasAddGrad(r.with_op_name("late_bias_grad"), g);
  BOOST_TEST(out.shape().to_string() == "[?]");
  auto result = run_graph(r, {out}, {{g, Tensor::from_vector<float>({1, 2})}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_bias_grad' (BiasAddGrad)");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
