// Tests for the element-wise binary kernels (Add, Sub, Mul, Div, Maximum, Minimum,
// Equal): hand-computed
// values for every dtype and broadcasting pattern, and shape and division errors.
#include <cmath>
#include <limits>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(binary_kernels)

BOOST_AUTO_TEST_CASE(add_same_shape_float) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  auto b = ops::Const(s, {{10.f, 20.f}, {30.f, 40.f}});
  check_tensor<float>(run_one(s, ops::Add(s, a, b)), TensorShape{2, 2}, {11, 22, 33, 44});
}

BOOST_AUTO_TEST_CASE(sub_with_a_scalar_on_either_side_double) {
  Scope s = Scope::new_root();
  auto v = ops::Const(s, {5.0, 6.0, 7.0});
  check_tensor<double>(run_one(s, ops::Sub(s, v, 1.0)), TensorShape{3}, {4, 5, 6});
  check_tensor<double>(run_one(s, ops::Sub(s, 10.0, v)), TensorShape{3}, {5, 4, 3});
}

BOOST_AUTO_TEST_CASE(mul_broadcasts_a_row_int32) {
  Scope s = Scope::new_root();
  auto m = ops::Const(s, {{1, 2, 3}, {4, 5, 6}});
  auto row = ops::Const(s, {1, 10, 100});
  auto product = ops::Mul(s, m, row);
  BOOST_TEST(product.shape().to_string() == "[2,3]");
  check_tensor<int32_t>(run_one(s, product), TensorShape{2, 3}, {1, 20, 300, 4, 50, 600});
  // The other way round gives the same.
  check_tensor<int32_t>(run_one(s, ops::Mul(s, row, m)), TensorShape{2, 3},
                        {1, 20, 300, 4, 50, 600});
}

BOOST_AUTO_TEST_CASE(add_broadcasts_a_column) {
  Scope s = Scope::new_root();
  auto m = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto column = ops::Const(s, {{100.f}, {200.f}});
  check_tensor<float>(run_one(s, ops::Add(s, m, column)), TensorShape{2, 3},
                      {101, 102, 103, 204, 205, 206});
}

BOOST_AUTO_TEST_CASE(add_column_and_row_make_a_matrix_int64) {
  Scope s = Scope::new_root();
  auto column = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({1, 2}, {2, 1})));
  auto row = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({10, 20, 30}, {1, 3})));
  auto sum = ops::Add(s, column, row);
  BOOST_TEST(sum.shape().to_string() == "[2,3]");
  check_tensor<int64_t>(run_one(s, sum), TensorShape{2, 3}, {11, 21, 31, 12, 22, 32});
}

BOOST_AUTO_TEST_CASE(rank_three_broadcasting) {
  Scope s = Scope::new_root();
  // [2,1,3] + [2,1] -> [2,2,3]: out[i,j,k] = a[i,0,k] + b[j,0].
  auto a = ops::Const(s, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 1, 3})));
  auto b = ops::Const(s, value_or_throw(Tensor::from_vector<float>({10, 20}, {2, 1})));
  auto sum = ops::Add(s, a, b);
  BOOST_TEST(sum.shape().to_string() == "[2,2,3]");
  check_tensor<float>(run_one(s, sum), TensorShape{2, 2, 3},
                      {11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26});
}

BOOST_AUTO_TEST_CASE(scalar_of_higher_rank_broadcasts) {
  Scope s = Scope::new_root();
  // A [1,1] operand against a vector makes a [1,3] result, not a [3] one.
  auto v = ops::Const(s, {1, 2, 3});
  auto one = ops::Const(s, value_or_throw(Tensor::from_vector<int32_t>({5}, {1, 1})));
  check_tensor<int32_t>(run_one(s, ops::Sub(s, v, one)), TensorShape{1, 3}, {-4, -3, -2});
}

BOOST_AUTO_TEST_CASE(broadcasting_with_an_empty_dimension) {
  Scope s = Scope::new_root();
  auto empty = ops::Const(s, value_or_throw(Tensor::from_vector<float>({}, {0, 3})));
  auto row = ops::Const(s, {1.f, 2.f, 3.f});
  check_tensor<float>(run_one(s, ops::Add(s, empty, row)), TensorShape{0, 3}, {});
}

BOOST_AUTO_TEST_CASE(div_float_and_division_by_zero_gives_infinity) {
  Scope s = Scope::new_root();
  auto q = ops::Div(s, ops::Const(s, {1.f, -3.f, 7.f}), ops::Const(s, {2.f, 2.f, 0.f}));
  Tensor out = run_one(s, q);
  BOOST_TEST_REQUIRE(out.num_elements() == 3);
  BOOST_TEST(out.flat<float>()[0] == 0.5f);
  BOOST_TEST(out.flat<float>()[1] == -1.5f);
  BOOST_TEST(out.flat<float>()[2] == std::numeric_limits<float>::infinity());
}

BOOST_AUTO_TEST_CASE(integer_div_truncates_toward_zero) {
  Scope s = Scope::new_root();
  auto q = ops::Div(s, ops::Const(s, {7, -7, 7, -7}), ops::Const(s, {2, 2, -2, -2}));
  check_tensor<int32_t>(run_one(s, q), TensorShape{4}, {3, -3, -3, 3});
  auto q64 = ops::Div(s, Tensor::from_vector<int64_t>({9, -9}), int64_t{4});
  check_tensor<int64_t>(run_one(s, q64), TensorShape{2}, {2, -2});
}

BOOST_AUTO_TEST_CASE(integer_division_by_zero_is_an_error) {
  Scope s = Scope::new_root();
  auto q = ops::Div(s.with_op_name("divide"), Tensor::from_vector<int64_t>({1, 2}),
                    Tensor::from_vector<int64_t>({1, 0}));
  auto result = run_graph(s, {q});
  check_error(result.status(), Code::kInvalidArgument, "integer division by zero");
  check_error(result.status(), Code::kInvalidArgument, "divide");
}

BOOST_AUTO_TEST_CASE(integer_min_divided_by_minus_one_wraps) {
  Scope s = Scope::new_root();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto q = ops::Div(s, ops::Const(s, {kMin, 6}), -1);
  check_tensor<int32_t>(run_one(s, q), TensorShape{2}, {kMin, -6});
}

BOOST_AUTO_TEST_CASE(floor_division_and_remainder_round_toward_negative_infinity) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {7, -7, 7, -7});
  auto b = ops::Const(s, {2, 2, -2, -2});
  check_tensor<int32_t>(run_one(s, ops::FloorDiv(s, a, b)), TensorShape{4}, {3, -4, -4, 3});
  check_tensor<int32_t>(run_one(s, ops::FloorMod(s, a, b)), TensorShape{4}, {1, 1, -1, -1});
  check_tensor<double>(run_one(s, ops::FloorMod(s, {-1.5, 1.5}, 1.0)), TensorShape{2}, {0.5, 0.5});
  auto zero = ops::FloorMod(s.with_op_name("by_zero"), a, 0);
  check_error(testing::run_graph(s, {zero}).status(), Code::kInvalidArgument,
              "node 'by_zero' (FloorMod): integer division by zero");
}

BOOST_AUTO_TEST_CASE(logical_and_or_broadcast) {
  Scope s = Scope::new_root();
  auto p = ops::Const(s, {true, true, false, false});
  check_tensor<bool>(run_one(s, ops::LogicalAnd(s, p, {true, false, true, false})), TensorShape{4},
                     {true, false, false, false});
  check_tensor<bool>(run_one(s, ops::LogicalOr(s, p, false)), TensorShape{4},
                     {true, true, false, false});
}

BOOST_AUTO_TEST_CASE(maximum) {
  Scope s = Scope::new_root();
  auto m = ops::Maximum(s, ops::Const(s, {1.f, 5.f, -2.f}), ops::Const(s, {3.f, 4.f, -1.f}));
  check_tensor<float>(run_one(s, m), TensorShape{3}, {3, 5, -1});
  auto relu_like = ops::Maximum(s, Tensor::from_vector<int64_t>({-5, 0, 5}), int64_t{0});
  check_tensor<int64_t>(run_one(s, relu_like), TensorShape{3}, {0, 0, 5});
  auto d = ops::Maximum(s, ops::Const(s, {{1.0}, {4.0}}), ops::Const(s, {2.0, 3.0}));
  check_tensor<double>(run_one(s, d), TensorShape{2, 2}, {2, 3, 4, 4});
}

BOOST_AUTO_TEST_CASE(minimum) {
  Scope s = Scope::new_root();
  auto m = ops::Minimum(s, ops::Const(s, {1.f, 5.f, -2.f}), ops::Const(s, {3.f, 4.f, -1.f}));
  check_tensor<float>(run_one(s, m), TensorShape{3}, {1, 4, -2});
  auto clipped = ops::Minimum(s, Tensor::from_vector<int32_t>({-5, 0, 5}), int32_t{1});
  check_tensor<int32_t>(run_one(s, clipped), TensorShape{3}, {-5, 0, 1});
  auto d = ops::Minimum(s, ops::Const(s, {{1.0}, {4.0}}), ops::Const(s, {2.0, 3.0}));
  check_tensor<double>(run_one(s, d), TensorShape{2, 2}, {1, 1, 2, 3});
}

BOOST_AUTO_TEST_CASE(pow_and_squared_difference) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Pow(s, ops::Const(s, {2.f, 9.f, 4.f}), {3.f, 0.5f, -1.f})),
                      TensorShape{3}, {8, 3, 0.25});
  check_tensor<double>(run_one(s, ops::Pow(s, ops::Const(s, {{2.0}, {3.0}}), {1.0, 2.0})),
                       TensorShape{2, 2}, {2, 4, 3, 9});
  BOOST_TEST(std::isnan(run_one(s, ops::Pow(s, -8.0, 1.0 / 3)).scalar<double>()));
  check_tensor<int32_t>(
      run_one(s, ops::SquaredDifference(s, ops::Const(s, {1, 5, -2}), ops::Const(s, {4, 5, 2}))),
      TensorShape{3}, {9, 0, 16});
  ops::Pow(s.with_op_name("int_pow"), {2, 3}, {2, 2});
  check_error(s.status(), Code::kInvalidArgument, "node 'int_pow' (Pow)");
}

BOOST_AUTO_TEST_CASE(equal_on_numbers_strings_and_bools) {
  Scope s = Scope::new_root();
  auto f = ops::Equal(s, ops::Const(s, {1.f, 2.f, 3.f}), ops::Const(s, {1.f, 0.f, 3.f}));
  check_tensor<bool>(run_one(s, f), TensorShape{3}, {true, false, true});
  auto i = ops::Equal(s, ops::Const(s, {{1, 2}, {3, 1}}), ops::Const(s, {1, 1}));
  check_tensor<bool>(run_one(s, i), TensorShape{2, 2}, {true, false, false, true});
  auto strings = ops::Const(s, Tensor::from_vector<std::string>({"a", "b", "a"}));
  check_tensor<bool>(run_one(s, ops::Equal(s, strings, "a")), TensorShape{3}, {true, false, true});
  auto bools = ops::Const(s, Tensor::from_vector<bool>({true, false}));
  check_tensor<bool>(run_one(s, ops::Equal(s, bools, Tensor::from_vector<bool>({true, true}))),
                     TensorShape{2}, {true, false});
}

BOOST_AUTO_TEST_CASE(comparisons_broadcast_and_nan_compares_false) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {3.f, 2.f, NAN}});
  auto y = ops::Const(s, {2.f, 2.f, 2.f});
  check_tensor<bool>(run_one(s, ops::Less(s, x, y)), TensorShape{2, 3},
                     {true, false, false, false, false, false});
  check_tensor<bool>(run_one(s, ops::LessEqual(s, x, y)), TensorShape{2, 3},
                     {true, true, false, false, true, false});
  check_tensor<bool>(run_one(s, ops::Greater(s, x, 2.f)), TensorShape{2, 3},
                     {false, false, true, true, false, false});
  check_tensor<bool>(run_one(s, ops::GreaterEqual(s, x, y)), TensorShape{2, 3},
                     {false, true, true, true, true, false});
  check_tensor<bool>(run_one(s, ops::NotEqual(s, x, y)), TensorShape{2, 3},
                     {true, false, true, true, false, true});
  auto i = ops::Less(s, ops::Const(s, {int64_t{1}, int64_t{5}}), int64_t{3});
  check_tensor<bool>(run_one(s, i), TensorShape{2}, {true, false});
  auto strings = ops::Const(s, Tensor::from_vector<std::string>({"a", "b"}));
  check_tensor<bool>(run_one(s, ops::NotEqual(s, strings, "a")), TensorShape{2}, {false, true});
  ops::Less(s.with_op_name("less_strings"), strings, "a");
  check_error(s.status(), Code::kInvalidArgument, "less_strings");
}

BOOST_AUTO_TEST_CASE(incompatible_shapes_are_caught_when_building) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto b = ops::Const(s, {1.f, 2.f});
  auto bad = ops::Add(s.with_op_name("bad_add"), a, b);
  BOOST_TEST(!bad.valid());
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_add' (Add)");
  check_error(s.status(), Code::kInvalidArgument, "[2,3] and [2] cannot be broadcast");
}

BOOST_AUTO_TEST_CASE(incompatible_shapes_are_caught_when_running) {
  Scope s = Scope::new_root();
  auto a = ops::Placeholder(s, DataType::kFloat);
  auto b = ops::Placeholder(s, DataType::kFloat);
  auto sum = ops::Add(s.with_op_name("late_add"), a, b);
  BOOST_REQUIRE(s.ok());
  auto result =
      run_graph(s, {sum},
                {{a, value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}))},
                 {b, Tensor::from_vector<float>({1, 2})}});
  check_error(result.status(), Code::kInvalidArgument, "node 'late_add' (Add)");
  check_error(result.status(), Code::kInvalidArgument, "[2,3] and [2] cannot be broadcast");
}

BOOST_AUTO_TEST_CASE(large_inputs_split_over_threads) {
  Scope s = Scope::new_root();
  constexpr int64_t n = 100000;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(2 * i);
  }
  Tensor out = run_one(s, ops::Add(s, Tensor::from_vector(x), Tensor::from_vector(y)));
  BOOST_TEST_REQUIRE(out.num_elements() == n);
  bool all_right = true;
  for (int64_t i = 0; i < n; ++i)
    all_right &= out.flat<float>()[i] == static_cast<float>(3 * i);
  BOOST_TEST(all_right);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe

namespace troupe {

BOOST_AUTO_TEST_SUITE(binary_kernels_nan)

BOOST_AUTO_TEST_CASE(maximum_propagates_nan_from_either_side) {
  Scope s = Scope::new_root();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto left =
      ops::Maximum(s, Tensor::from_vector<float>({nan, 1}), Tensor::from_vector<float>({1, nan}));
  Tensor out = testing::run_one(s, left);
  BOOST_TEST(std::isnan(out.flat<float>()[0]));
  BOOST_TEST(std::isnan(out.flat<float>()[1]));
}

BOOST_AUTO_TEST_CASE(a_literal_that_cannot_convert_names_the_node) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  ops::Mul(s.with_op_name("scale"), x, "two");
  BOOST_TEST(s.status().code() == Code::kInvalidArgument);
  BOOST_TEST(s.status().message().find("node 'scale' (Mul)") != std::string::npos,
             s.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
