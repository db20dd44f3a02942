// Tests for the Cast and ArgMax kernels: conversions between every pair of kinds (including
// bool), truncation, and ArgMax over each axis with ties, NaN and errors.
#include <cmath>
#include <limits>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(cast_kernels)

BOOST_AUTO_TEST_CASE(float_to_integers_truncates_toward_zero) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {1.9f, -1.9f, 0.5f, -0.5f, 3.f});
  auto i32 = ops::Cast(s, x, DataType::kInt32);
  BOOST_TEST(i32.shape().to_string() == "[5]");
  check_tensor<int32_t>(run_one(s, i32), TensorShape{5}, {1, -1, 0, 0, 3});
  check_tensor<int64_t>(run_one(s, ops::Cast(s, {{2.99, -7.5}}, DataType::kInt64)),
                        TensorShape{1, 2}, {2, -7});
}

BOOST_AUTO_TEST_CASE(between_numeric_types) {
  Scope s = Scope::new_root();
  check_tensor<float>(run_one(s, ops::Cast(s, {-3, 7}, DataType::kFloat)), TensorShape{2}, {-3, 7});
  check_tensor<double>(
      run_one(s, ops::Cast(s, Tensor::from_vector<int64_t>({int64_t{1} << 40}), DataType::kDouble)),
      TensorShape{1}, {1099511627776.0});
  check_tensor<int64_t>(run_one(s, ops::Cast(s, {5, -6}, DataType::kInt64)), TensorShape{2},
                        {5, -6});
  check_tensor<int32_t>(
      run_one(s, ops::Cast(s, Tensor::from_vector<int64_t>({-2, 9}), DataType::kInt32)),
      TensorShape{2}, {-2, 9});
  check_tensor<float>(run_one(s, ops::Cast(s, {0.1}, DataType::kFloat)), TensorShape{1}, {0.1f}, 0);
  check_tensor<double>(run_one(s, ops::Cast(s, 0.5f, DataType::kDouble)), TensorShape{}, {0.5}, 0);
}

BOOST_AUTO_TEST_CASE(to_and_from_bool) {
  Scope s = Scope::new_root();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  check_tensor<bool>(run_one(s, ops::Cast(s, {0.f, -0.f, 0.1f, -2.f, nan}, DataType::kBool)),
                     TensorShape{5}, {false, false, true, true, true});
  check_tensor<bool>(
      run_one(s, ops::Cast(s, Tensor::from_vector<int64_t>({0, 5, -1}), DataType::kBool)),
      TensorShape{3}, {false, true, true});
  check_tensor<bool>(run_one(s, ops::Cast(s, {0.0, 2.0}, DataType::kBool)), TensorShape{2},
                     {false, true});
  auto flags = ops::Const(s, Tensor::from_vector<bool>({true, false, true}));
  check_tensor<float>(run_one(s, ops::Cast(s, flags, DataType::kFloat)), TensorShape{3}, {1, 0, 1});
  check_tensor<int32_t>(run_one(s, ops::Cast(s, flags, DataType::kInt32)), TensorShape{3},
                        {1, 0, 1});
  check_tensor<int64_t>(run_one(s, ops::Cast(s, flags, DataType::kInt64)), TensorShape{3},
                        {1, 0, 1});
  check_tensor<double>(run_one(s, ops::Cast(s, flags, DataType::kDouble)), TensorShape{3},
                       {1, 0, 1});
}

BOOST_AUTO_TEST_CASE(cast_to_the_same_type_forwards_the_buffer) {
  Scope s = Scope::new_root();
  Tensor value = Tensor::from_vector<int32_t>({4, 5});
  Tensor out = run_one(s, ops::Cast(s, value, DataType::kInt32));
  check_tensor<int32_t>(out, TensorShape{2}, {4, 5});
  BOOST_TEST(out.shares_buffer_with(value));
}

BOOST_AUTO_TEST_CASE(cast_of_strings_is_rejected_when_building) {
  Scope s = Scope::new_root();
  ops::Cast(s.with_op_name("string_cast"), "7", DataType::kInt32);
  check_error(s.status(), Code::kInvalidArgument, "node 'string_cast' (Cast)");
  check_error(s.status(), Code::kInvalidArgument, "SrcT");
}

// x = [[1,5,3],[7,2,7]]: column maxima in rows [1,0,1]; row maxima at [1,0] (7 ties at 0 and 2).
BOOST_AUTO_TEST_CASE(argmax_over_each_axis) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 5.f, 3.f}, {7.f, 2.f, 7.f}});
  auto axis0 = ops::ArgMax(s, x, 0);
  BOOST_TEST(axis0.shape().to_string() == "[3]");
  check_tensor<int64_t>(run_one(s, axis0), TensorShape{3}, {1, 0, 1});
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 1)), TensorShape{2}, {1, 0});
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, -1)), TensorShape{2}, {1, 0});
  check_tensor<int32_t>(run_one(s, ops::ArgMax(s, x, int64_t{-2}, DataType::kInt32)),
                        TensorShape{3}, {1, 0, 1});
}

BOOST_AUTO_TEST_CASE(argmax_ties_pick_the_smallest_index) {
  Scope s = Scope::new_root();
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, {4, 4, 4}, 0)), TensorShape{}, {0});
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({2, 9, 9, 9, 9, 2}, {3, 2})));
  check_tensor<int32_t>(run_one(s, ops::ArgMax(s, x, 0, DataType::kInt32)), TensorShape{2}, {1, 0});
  check_tensor<int32_t>(run_one(s, ops::ArgMax(s, x, 1, DataType::kInt32)), TensorShape{3},
                        {1, 0, 0});
}

BOOST_AUTO_TEST_CASE(argmax_rank_three_middle_axis) {
  Scope s = Scope::new_root();
  // x[i,j,k] with shape [2,3,2]; the maximum over j sits at j = (i + k) % 3.
  std::vector<double> values(12, 0.0);
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 2; ++k)
      values[i * 6 + ((i + k) % 3) * 2 + k] = 1.0 + i + k;
  }
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector(values, {2, 3, 2})));
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 1)), TensorShape{2, 2}, {0, 1, 1, 2});
}

BOOST_AUTO_TEST_CASE(argmax_picks_the_first_nan) {
  Scope s = Scope::new_root();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = ops::Const(s, {{1.f, nan, 5.f, nan}, {nan, 9.f, 1.f, 2.f}});
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 1)), TensorShape{2}, {1, 0});
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 0)), TensorShape{4}, {1, 0, 0, 0});
}

BOOST_AUTO_TEST_CASE(argmax_of_a_large_matrix) {
  Scope s = Scope::new_root();
  constexpr int64_t rows = 400, cols = 300;
  std::vector<float> values(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      values[r * cols + c] = static_cast<float>((r * 7 + c) % 50);
  }
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector(values, {rows, cols})));
  // Row r first reaches 49 at c = (49 - 7r) mod 50; column c at the first r with 7r = 49 - c
  // (mod 50), i.e. r = 43 * (49 - c) mod 50, since 7 * 43 = 301 = 1 (mod 50).
  std::vector<int64_t> by_row(rows), by_col(cols);
  for (int64_t r = 0; r < rows; ++r)
    by_row[r] = ((49 - 7 * r) % 50 + 50) % 50;
  for (int64_t c = 0; c < cols; ++c)
    by_col[c] = (43 * (49 - c) % 50 + 50) % 50;
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 1)), TensorShape{rows}, by_row);
  check_tensor<int64_t>(run_one(s, ops::ArgMax(s, x, 0)), TensorShape{cols}, by_col);
}

BOOST_AUTO_TEST_CASE(argmax_errors) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  ops::ArgMax(s.with_op_name("bad_axis"), x, 2);
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_axis' (ArgMax)");
  check_error(s.status(), Code::kInvalidArgument, "axis 2 is out of range");

  Scope t = Scope::new_root();
  auto input = ops::Placeholder(t, DataType::kFloat);
  auto axis = ops::Placeholder(t, DataType::kInt32);
  auto argmax = ops::ArgMax(t.with_op_name("late_argmax"), input, axis);
  BOOST_REQUIRE(t.ok());
  const Tensor matrix = value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}));
  auto out_of_range = run_graph(t, {argmax}, {{input, matrix}, {axis, Tensor(-3)}});
  check_error(out_of_range.status(), Code::kInvalidArgument, "node 'late_argmax' (ArgMax)");
  check_error(out_of_range.status(), Code::kInvalidArgument, "axis -3 is out of range");
  auto empty = run_graph(
      t, {argmax},
      {{input, value_or_throw(Tensor::from_vector<float>({}, {0, 3}))}, {axis, Tensor(0)}});
  check_error(empty.status(), Code::kInvalidArgument, "reduction axis 0 is empty in shape [0,3]");
  auto scalar = run_graph(t, {argmax}, {{input, Tensor(1.f)}, {axis, Tensor(0)}});
  check_error(scalar.status(), Code::kInvalidArgument, "rank >= 1");
  auto vector_axis =
      run_graph(t, {argmax}, {{input, matrix}, {axis, Tensor::from_vector<int32_t>({0})}});
  check_error(vector_axis.status(), Code::kInvalidArgument, "must be a scalar");
  // An empty output is fine when the reduced axis is not empty.
  auto ok = run_graph(
      t, {argmax},
      {{input, value_or_throw(Tensor::from_vector<float>({}, {0, 3}))}, {axis, Tensor(1)}});
  BOOST_REQUIRE_MESSAGE(ok.ok(), ok.status().to_string());
  check_tensor<int64_t>(ok->at(0), TensorShape{0}, {});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
