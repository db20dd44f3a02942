// Tests for the element-wise unary math kernels (Neg, Square, Sqrt, Exp, Log, Abs, Sign, Rsqrt,
// Reciprocal, Expm1, Log1p, Floor, Ceil, Round, Cos, Sin): hand-computed values for each dtype,
// IEEE edge cases, and dtypes the ops reject.
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

BOOST_AUTO_TEST_CASE(abs_and_sign) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Abs(s, {-1.5f, 0.f, 2.f})), TensorShape{3}, {1.5, 0, 2});
  check_tensor<int32_t>(run_one(s, ops::Abs(s, {-3, 4})), TensorShape{2}, {3, 4});
  check_tensor<int64_t>(run_one(s, ops::Sign(s, Tensor::from_vector<int64_t>({-7, 0, 9}))),
                        TensorShape{3}, {-1, 0, 1});
  Tensor sign = run_one(s, ops::Sign(s, {-0.5, 0.0, 3.0, std::nan("")}));
  auto v = sign.flat<double>();
  BOOST_TEST(v[0] == -1.0);
  BOOST_TEST(v[1] == 0.0);
  BOOST_TEST(v[2] == 1.0);
  BOOST_TEST(std::isnan(v[3]));
}

BOOST_AUTO_TEST_CASE(reciprocals_and_exact_forms_near_zero) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Rsqrt(s, {4.f, 0.25f})), TensorShape{2}, {0.5, 2});
  check_tensor<double>(run_one(s, ops::Reciprocal(s, {-4.0, 0.5})), TensorShape{2}, {-0.25, 2});
  BOOST_TEST(run_one(s, ops::Reciprocal(s, 0.f)).scalar<float>() ==
             std::numeric_limits<float>::infinity());
  // log1p and expm1 keep the digits log(1 + x) and exp(x) - 1 lose for tiny x.
  check_tensor<double>(run_one(s, ops::Log1p(s, {1e-10, 1.0})), TensorShape{2},
                       {9.9999999995e-11, 0.6931471805599453}, 1e-20);
  check_tensor<double>(run_one(s, ops::Expm1(s, {1e-10, 1.0})), TensorShape{2},
                       {1.00000000005e-10, 1.718281828459045}, 1e-20);
}

BOOST_AUTO_TEST_CASE(floor_ceil_and_round_halves_to_even) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Floor(s, {-1.5f, 1.5f, 2.f})), TensorShape{3}, {-2, 1, 2});
  check_tensor<double>(run_one(s, ops::Ceil(s, {-1.5, 1.2, 2.0})), TensorShape{3}, {-1, 2, 2});
  check_tensor<float>(run_one(s, ops::Round(s, {0.5f, 1.5f, 2.5f, -0.5f, -1.7f})), TensorShape{5},
                      {0, 2, 2, -0, -2});
}

BOOST_AUTO_TEST_CASE(cos_and_sin) {
  Scope s = Scope::new_root();
  check_tensor<double>(run_one(s, ops::Cos(s, {0.0, M_PI})), TensorShape{2}, {1, -1}, 1e-12);
  check_tensor<float>(run_one(s, ops::Sin(s, {0.f, static_cast<float>(M_PI / 2)})), TensorShape{2},
                      {0, 1}, 1e-6);
}

BOOST_AUTO_TEST_CASE(activations_and_erf) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Relu6(s, {-1.f, 3.f, 7.f})), TensorShape{3}, {0, 3, 6});
  check_tensor<double>(run_one(s, ops::Elu(s, {-1.0, 2.0})), TensorShape{2},
                       {std::expm1(-1.0), 2.0}, 1e-12);
  check_tensor<double>(
      run_one(s, ops::Selu(s, {-1.0, 2.0})), TensorShape{2},
      {1.0507009873554805 * 1.6732632423543772 * std::expm1(-1.0), 2 * 1.0507009873554805}, 1e-12);
  // Softplus does not overflow for large inputs.
  check_tensor<float>(run_one(s, ops::Softplus(s, {0.f, 100.f, -100.f})), TensorShape{3},
                      {std::log(2.f), 100.f, 0.f}, 1e-6);
  check_tensor<float>(run_one(s, ops::Softsign(s, {-3.f, 1.f})), TensorShape{2}, {-0.75f, 0.5f});
  check_tensor<double>(run_one(s, ops::Erf(s, {0.0, 0.5})), TensorShape{2}, {0.0, std::erf(0.5)},
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
