// Tests for the element-wise unary math kernels (Neg, Square, Sqrt, Exp, Log): hand-computed
// values for each dtype, IEEE edge cases, and dtypes the ops reject.
#include <cmath>
#include <limits>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(unary_kernels)

BOOST_AUTO_TEST_CASE(neg_every_dtype) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Neg(s, {1.f, -2.5f, 0.f})), TensorShape{3}, {-1, 2.5, 0});
  check_tensor<double>(run_one(s, ops::Neg(s, {{1.0, -2.0}})), TensorShape{1, 2}, {-1, 2});
  check_tensor<int32_t>(run_one(s, ops::Neg(s, {3, -4})), TensorShape{2}, {-3, 4});
  check_tensor<int64_t>(run_one(s, ops::Neg(s, int64_t{7})), TensorShape{}, {-7});
}

BOOST_AUTO_TEST_CASE(square) {
  Scope s = Scope::new_root();
  check_tensor<int64_t>(run_one(s, ops::Square(s, Tensor::from_vector<int64_t>({-3, 4, 0}))),
                        TensorShape{3}, {9, 16, 0});
  check_tensor<float>(run_one(s, ops::Square(s, {1.5f, -0.5f})), TensorShape{2}, {2.25, 0.25});
  check_tensor<int32_t>(run_one(s, ops::Square(s, {{2, -3}, {5, 1}})), TensorShape{2, 2},
                        {4, 9, 25, 1});
}

BOOST_AUTO_TEST_CASE(sqrt_and_its_negative_input) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Sqrt(s, {4.f, 2.25f, 0.f})), TensorShape{3}, {2, 1.5, 0});
  check_tensor<double>(run_one(s, ops::Sqrt(s, 2.0)), TensorShape{}, {1.4142135623730951}, 1e-12);
  Tensor negative = run_one(s, ops::Sqrt(s, -1.f));
  BOOST_TEST(std::isnan(negative.scalar<float>()));
}

BOOST_AUTO_TEST_CASE(exp) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Exp(s, {0.f, 1.f, -1.f})), TensorShape{3},
                      {1, 2.7182818f, 0.36787944f});
  check_tensor<double>(run_one(s, ops::Exp(s, {2.0})), TensorShape{1}, {7.38905609893065}, 1e-12);
  Tensor huge = run_one(s, ops::Exp(s, 1000.f));
  BOOST_TEST(huge.scalar<float>() == std::numeric_limits<float>::infinity());
}

BOOST_AUTO_TEST_CASE(log_of_zero_and_negative_follow_ieee) {
  Scope s = Scope::new_root();
  Tensor out = run_one(s, ops::Log(s, {1.f, 2.7182818f, 0.f, -1.f}));
  BOOST_TEST_REQUIRE(out.num_elements() == 4);
  auto v = out.flat<float>();
  BOOST_TEST(std::abs(v[0]) <= 1e-6);
  BOOST_TEST(std::abs(v[1] - 1.f) <= 1e-6);
  BOOST_TEST(v[2] == -std::numeric_limits<float>::infinity());
  BOOST_TEST(std::isnan(v[3]));
  check_tensor<double>(run_one(s, ops::Log(s, {100.0})), TensorShape{1}, {4.605170185988092},
                       1e-12);
}

BOOST_AUTO_TEST_CASE(empty_input_gives_empty_output) {
  Scope s = Scope::new_root();
  auto empty = ops::Const(s, value_or_throw(Tensor::from_vector<float>({}, {2, 0})));
  check_tensor<float>(run_one(s, ops::Exp(s, empty)), TensorShape{2, 0}, {});
}

BOOST_AUTO_TEST_CASE(large_inputs_split_over_threads) {
  Scope s = Scope::new_root();
  constexpr int64_t n = 50000;
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<double>(i);
  Tensor out = run_one(s, ops::Sqrt(s, ops::Square(s, Tensor::from_vector(x))));
  BOOST_TEST_REQUIRE(out.num_elements() == n);
  bool all_right = true;
  for (int64_t i = 0; i < n; ++i)
    all_right &= out.flat<double>()[i] == static_cast<double>(i);
  BOOST_TEST(all_right);
}

BOOST_AUTO_TEST_CASE(floating_ops_reject_integers) {
  Scope s = Scope::new_root();
  ops::Sqrt(s.with_op_name("int_sqrt"), {4, 9});
  check_error(s.status(), Code::kInvalidArgument, "node 'int_sqrt' (Sqrt)");
  check_error(s.status(), Code::kInvalidArgument, "int32");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
