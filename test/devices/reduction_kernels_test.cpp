// Tests for the reduction kernels (Sum, Mean, Min, Max): hand-computed values over each axis
// pattern with and without keep_dims, empty dimensions, NaN, large inputs split over threads,
// and axis errors at build and at run time.
#include <cmath>
#include <limits>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

namespace {

Tensor axes(std::vector<int32_t> values) {
  return Tensor::from_vector(values);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reduction_kernels)

// x = [[1,2,3],[4,5,6]] throughout.

BOOST_AUTO_TEST_CASE(sum_over_each_axis_pattern) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  check_tensor<float>(run_one(s, ops::Sum(s, x, 0)), TensorShape{3}, {5, 7, 9});
  check_tensor<float>(run_one(s, ops::Sum(s, x, 1)), TensorShape{2}, {6, 15});
  check_tensor<float>(run_one(s, ops::Sum(s, x, -1)), TensorShape{2}, {6, 15});
  check_tensor<float>(run_one(s, ops::Sum(s, x, {0, 1})), TensorShape{}, {21});
  check_tensor<float>(run_one(s, ops::Sum(s, x, {-1, 0})), TensorShape{}, {21});
  check_tensor<float>(run_one(s, ops::Sum(s, x, axes({}))), TensorShape{2, 3}, {1, 2, 3, 4, 5, 6});
}

BOOST_AUTO_TEST_CASE(keep_dims) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto axis0 = ops::Sum(s, x, 0, {.keep_dims = true});
  BOOST_TEST(axis0.shape().to_string() == "[1,3]");
  check_tensor<float>(run_one(s, axis0), TensorShape{1, 3}, {5, 7, 9});
  check_tensor<float>(run_one(s, ops::Sum(s, x, 1, {.keep_dims = true})), TensorShape{2, 1},
                      {6, 15});
  check_tensor<float>(run_one(s, ops::Max(s, x, {0, 1}, {.keep_dims = true})), TensorShape{1, 1},
                      {6});
  check_tensor<float>(run_one(s, ops::Min(s, x, axes({}), {.keep_dims = true})), TensorShape{2, 3},
                      {1, 2, 3, 4, 5, 6});
}

BOOST_AUTO_TEST_CASE(mean_min_max_float) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  check_tensor<float>(run_one(s, ops::Mean(s, x, 0)), TensorShape{3}, {2.5, 3.5, 4.5});
  check_tensor<float>(run_one(s, ops::Mean(s, x, 1)), TensorShape{2}, {2, 5});
  check_tensor<float>(run_one(s, ops::Mean(s, x, {0, 1})), TensorShape{}, {3.5});
  check_tensor<float>(run_one(s, ops::Min(s, x, 0)), TensorShape{3}, {1, 2, 3});
  check_tensor<float>(run_one(s, ops::Min(s, x, -1)), TensorShape{2}, {1, 4});
  check_tensor<float>(run_one(s, ops::Min(s, x, {0, 1})), TensorShape{}, {1});
  check_tensor<float>(run_one(s, ops::Max(s, x, 0)), TensorShape{3}, {4, 5, 6});
  check_tensor<float>(run_one(s, ops::Max(s, x, 1)), TensorShape{2}, {3, 6});
}

BOOST_AUTO_TEST_CASE(other_dtypes_and_int64_axes) {
  Scope s = Scope::new_root();
  auto d = ops::Const(s, {{1.5, -2.0}, {0.25, 4.0}});
  check_tensor<double>(run_one(s, ops::Sum(s, d, int64_t{0})), TensorShape{2}, {1.75, 2.0});
  auto i64 = ops::Const(s, value_or_throw(Tensor::from_vector<int64_t>({7, -3, 9, 2}, {2, 2})));
  check_tensor<int64_t>(run_one(s, ops::Max(s, i64, Tensor::from_vector<int64_t>({1}))),
                        TensorShape{2}, {7, 9});
  check_tensor<int64_t>(run_one(s, ops::Min(s, i64, 0)), TensorShape{2}, {7, -3});
  auto i32 = ops::Const(s, {{1, 2}, {3, 4}});
  check_tensor<int32_t>(run_one(s, ops::Sum(s, i32, {0, 1})), TensorShape{}, {10});
}

BOOST_AUTO_TEST_CASE(integer_mean_truncates_toward_zero) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1, 2}, {4, 6}, {-3, -4}});
  // Row means 1.5, 5, -3.5; column means 2/3, 4/3.
  check_tensor<int32_t>(run_one(s, ops::Mean(s, x, 1)), TensorShape{3}, {1, 5, -3});
  check_tensor<int32_t>(run_one(s, ops::Mean(s, x, 0)), TensorShape{2}, {0, 1});
  auto big = ops::Const(s, Tensor::from_vector<int64_t>({10, 5}));
  check_tensor<int64_t>(run_one(s, ops::Mean(s, big, 0)), TensorShape{}, {7});
}

BOOST_AUTO_TEST_CASE(scalar_input) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, 5.f);
  check_tensor<float>(run_one(s, ops::Sum(s, x, axes({}))), TensorShape{}, {5});
  check_tensor<float>(run_one(s, ops::Mean(s, x, axes({}), {.keep_dims = true})), TensorShape{},
                      {5});
  ops::Sum(s.with_op_name("scalar_sum"), x, 0);
  check_error(s.status(), Code::kInvalidArgument, "node 'scalar_sum' (Sum)");
  check_error(s.status(), Code::kInvalidArgument, "axis 0 is out of range");
}

// x[i,j,k] = 12i + 4j + k, shape [2,3,4].
BOOST_AUTO_TEST_CASE(rank_three_interleaved_axes) {
  Scope s = Scope::new_root();
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i)
    values[i] = static_cast<float>(i);
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector(values, {2, 3, 4})));
  // Sum over i and k: 60 + 32j.
  check_tensor<float>(run_one(s, ops::Sum(s, x, {0, 2})), TensorShape{3}, {60, 92, 124});
  check_tensor<float>(run_one(s, ops::Sum(s, x, {0, 2}, {.keep_dims = true})), TensorShape{1, 3, 1},
                      {60, 92, 124});
  // Sum over j: 36i + 12 + 3k.
  check_tensor<float>(run_one(s, ops::Sum(s, x, 1)), TensorShape{2, 4},
                      {12, 15, 18, 21, 48, 51, 54, 57});
  // Max over i and k: 15 + 4j; Min over j and k: 12i; Mean over everything: 11.5.
  check_tensor<float>(run_one(s, ops::Max(s, x, {2, 0})), TensorShape{3}, {15, 19, 23});
  check_tensor<float>(run_one(s, ops::Min(s, x, {1, 2})), TensorShape{2}, {0, 12});
  check_tensor<float>(run_one(s, ops::Mean(s, x, {0, 1, 2})), TensorShape{}, {11.5});
  // Sum over i and j: 36 + 24 + 6k.
  check_tensor<float>(run_one(s, ops::Sum(s, x, {0, 1})), TensorShape{4}, {60, 66, 72, 78});
}

// Every subset of axes of a [2,3,4,5] tensor, against a plain loop over every element; this
// covers each pattern of kept and reduced groups the kernel collapses the dimensions into.
BOOST_AUTO_TEST_CASE(every_axis_subset_of_rank_four_matches_a_plain_loop) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  std::vector<int32_t> values(120);
  for (int i = 0; i < 120; ++i)
    values[i] = (i * 7 + 3) % 11 - 5;
  for (int mask = 0; mask < 16; ++mask) {
    Scope s = Scope::new_root();
    auto x = ops::Const(s, value_or_throw(Tensor::from_vector(values, TensorShape(dims))));
    std::vector<int32_t> axis_list;
    TensorShape out_shape;
    for (int d = 0; d < 4; ++d) {
      if (mask & (1 << d)) {
        axis_list.push_back(d);
      } else {
        out_shape.add_dim(dims[d]);
      }
    }
    std::vector<int32_t> sum(out_shape.num_elements(), 0);
    std::vector<int32_t> max(out_shape.num_elements(), std::numeric_limits<int32_t>::lowest());
    for (int i = 0; i < 120; ++i) {
      int64_t rest = i, out = 0, stride = 1;
      for (int d = 3; d >= 0; --d) {
        const int64_t index = rest % dims[d];
        rest /= dims[d];
        if (!(mask & (1 << d))) {
          out += index * stride;
          stride *= dims[d];
        }
      }
      sum[out] += values[i];
      max[out] = std::max(max[out], values[i]);
    }
    BOOST_TEST_CONTEXT("axes mask " << mask) {
      check_tensor<int32_t>(run_one(s, ops::Sum(s, x, axes(axis_list))), out_shape, sum);
      check_tensor<int32_t>(run_one(s, ops::Max(s, x, axes(axis_list))), out_shape, max);
    }
  }
}

BOOST_AUTO_TEST_CASE(size_one_dimensions) {
  Scope s = Scope::new_root();
  auto x =
      ops::Const(s, value_or_throw(Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 1, 3})));
  // Reducing a size-1 dimension only drops it.
  check_tensor<int32_t>(run_one(s, ops::Sum(s, x, 1)), TensorShape{2, 3}, {1, 2, 3, 4, 5, 6});
  check_tensor<int32_t>(run_one(s, ops::Sum(s, x, {0, 1})), TensorShape{3}, {5, 7, 9});
  check_tensor<int32_t>(run_one(s, ops::Max(s, x, {1, 2}, {.keep_dims = true})),
                        TensorShape{2, 1, 1}, {3, 6});
}

BOOST_AUTO_TEST_CASE(empty_dimension_gives_the_identity) {
  Scope s = Scope::new_root();
  auto f = ops::Const(s, value_or_throw(Tensor::from_vector<float>({}, {0, 3})));
  check_tensor<float>(run_one(s, ops::Sum(s, f, 0)), TensorShape{3}, {0, 0, 0});
  check_tensor<float>(run_one(s, ops::Sum(s, f, 1)), TensorShape{0}, {});
  Tensor max = run_one(s, ops::Max(s, f, 0));
  BOOST_TEST_REQUIRE(max.num_elements() == 3);
  BOOST_TEST(max.flat<float>()[0] == -std::numeric_limits<float>::infinity());
  Tensor min = run_one(s, ops::Min(s, f, {0, 1}));
  BOOST_TEST(min.scalar<float>() == std::numeric_limits<float>::infinity());
  Tensor mean = run_one(s, ops::Mean(s, f, 0));
  BOOST_TEST_REQUIRE(mean.num_elements() == 3);
  BOOST_TEST(std::isnan(mean.flat<float>()[2]));

  auto i = ops::Const(s, value_or_throw(Tensor::from_vector<int32_t>({}, {2, 0})));
  check_tensor<int32_t>(run_one(s, ops::Min(s, i, 1)), TensorShape{2},
                        {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max()});
  check_tensor<int32_t>(
      run_one(s, ops::Max(s, i, 1)), TensorShape{2},
      {std::numeric_limits<int32_t>::lowest(), std::numeric_limits<int32_t>::lowest()});
  auto int_mean = ops::Mean(s.with_op_name("empty_mean"), i, 1);
  auto result = run_graph(s, {int_mean});
  check_error(result.status(), Code::kInvalidArgument, "node 'empty_mean' (Mean)");
  check_error(result.status(), Code::kInvalidArgument, "zero elements");
}

BOOST_AUTO_TEST_CASE(min_and_max_propagate_nan) {
  Scope s = Scope::new_root();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = ops::Const(s, {{1.f, nan, 3.f}, {nan, 1.f, 2.f}, {4.f, 5.f, 6.f}});
  Tensor max = run_one(s, ops::Max(s, x, 1));
  BOOST_TEST_REQUIRE(max.num_elements() == 3);
  BOOST_TEST(std::isnan(max.flat<float>()[0]));
  BOOST_TEST(std::isnan(max.flat<float>()[1]));
  BOOST_TEST(max.flat<float>()[2] == 6.f);
  Tensor min = run_one(s, ops::Min(s, x, 0));
  BOOST_TEST_REQUIRE(min.num_elements() == 3);
  BOOST_TEST(std::isnan(min.flat<float>()[0]));
  BOOST_TEST(std::isnan(min.flat<float>()[1]));
  BOOST_TEST(min.flat<float>()[2] == 2.f);

  // Long enough rows for the vectorised loop, with the NaN in its body and in its tail.
  std::vector<double> row(21);
  for (int i = 0; i < 21; ++i)
    row[i] = i - 10.0;
  auto clean = ops::Const(s, Tensor::from_vector(row));
  row[5] = std::numeric_limits<double>::quiet_NaN();
  auto body = ops::Const(s, Tensor::from_vector(row));
  row[5] = 0;
  row[20] = std::numeric_limits<double>::quiet_NaN();
  auto tail = ops::Const(s, Tensor::from_vector(row));
  check_tensor<double>(run_one(s, ops::Max(s, clean, 0)), TensorShape{}, {10});
  check_tensor<double>(run_one(s, ops::Min(s, clean, 0)), TensorShape{}, {-10});
  BOOST_TEST(std::isnan(run_one(s, ops::Max(s, body, 0)).scalar<double>()));
  BOOST_TEST(std::isnan(run_one(s, ops::Min(s, body, 0)).scalar<double>()));
  BOOST_TEST(std::isnan(run_one(s, ops::Max(s, tail, 0)).scalar<double>()));
  BOOST_TEST(std::isnan(run_one(s, ops::Min(s, tail, 0)).scalar<double>()));
}

// Inputs big enough for the thread pool; values are small integers, so float sums are exact.
BOOST_AUTO_TEST_CASE(large_reductions) {
  Scope s = Scope::new_root();
  constexpr int64_t rows = 1000, cols = 300;
  std::vector<float> values(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      values[r * cols + c] = static_cast<float>((r + 2 * c) % 7);
  }
  auto x = ops::Const(s, value_or_throw(Tensor::from_vector(values, {rows, cols})));
  std::vector<float> row_sums(rows, 0.f), col_sums(cols, 0.f), col_max(cols, 0.f);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = values[r * cols + c];
      row_sums[r] += v;
      col_sums[c] += v;
      col_max[c] = std::max(col_max[c], v);
      total += v;
    }
  }
  check_tensor<float>(run_one(s, ops::Sum(s, x, 1)), TensorShape{rows}, row_sums);
  check_tensor<float>(run_one(s, ops::Sum(s, x, 0)), TensorShape{cols}, col_sums);
  check_tensor<float>(run_one(s, ops::Max(s, x, 0)), TensorShape{cols}, col_max);
  check_tensor<float>(run_one(s, ops::Sum(s, x, {0, 1})), TensorShape{},
                      {static_cast<float>(total)});
  check_tensor<float>(run_one(s, ops::Mean(s, x, {0, 1})), TensorShape{},
                      {static_cast<float>(total / (rows * cols))});

  // A long vector reduced to one value takes several fixed blocks.
  constexpr int64_t n = 100003;
  std::vector<int64_t> ramp(n);
  for (int64_t i = 0; i < n; ++i)
    ramp[i] = i;
  auto v = ops::Const(s, Tensor::from_vector(ramp));
  check_tensor<int64_t>(run_one(s, ops::Sum(s, v, 0)), TensorShape{}, {n * (n - 1) / 2});
  check_tensor<int64_t>(run_one(s, ops::Max(s, v, 0)), TensorShape{}, {n - 1});
  check_tensor<int64_t>(run_one(s, ops::Min(s, v, 0)), TensorShape{}, {0});
}

BOOST_AUTO_TEST_CASE(out_of_range_axis_when_building) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  ops::Sum(s.with_op_name("bad_sum"), x, 2);
  check_error(s.status(), Code::kInvalidArgument, "node 'bad_sum' (Sum)");
  check_error(s.status(), Code::kInvalidArgument, "axis 2 is out of range for a tensor of rank 2");
  Scope t = Scope::new_root();
  ops::Max(t.with_op_name("bad_max"), ops::Const(t, {1.f, 2.f}), -2);
  check_error(t.status(), Code::kInvalidArgument, "node 'bad_max' (Max)");
}

BOOST_AUTO_TEST_CASE(out_of_range_axis_when_running) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto axis = ops::Placeholder(s, DataType::kInt32);
  auto sum = ops::Sum(s.with_op_name("late_sum"), x, axis);
  BOOST_REQUIRE(s.ok());
  check_tensor<float>(run_one(s, sum, {{axis, Tensor(1)}}), TensorShape{2}, {6, 15});
  auto too_big = run_graph(s, {sum}, {{axis, Tensor(2)}});
  check_error(too_big.status(), Code::kInvalidArgument, "node 'late_sum' (Sum)");
  check_error(too_big.status(), Code::kInvalidArgument, "axis 2 is out of range");
  auto too_small = run_graph(s, {sum}, {{axis, Tensor::from_vector<int32_t>({0, -3})}});
  check_error(too_small.status(), Code::kInvalidArgument, "axis -3 is out of range");
  auto matrix =
      run_graph(s, {sum}, {{axis, value_or_throw(Tensor::from_vector<int32_t>({0, 1}, {1, 2}))}});
  check_error(matrix.status(), Code::kInvalidArgument, "scalar or vector");
}

// As TensorFlow: an axis named twice (also as a negative and a positive index) is an error,
// when building if the axes are constant, when running otherwise; it used to reduce once.
BOOST_AUTO_TEST_CASE(duplicate_axes_are_refused) {
  const char* ops_named[] = {"Sum", "Mean", "Min", "Max"};
  for (const char* op : ops_named) {
    Scope s = Scope::new_root();
    auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Scope named = s.with_op_name("twice");
    std::string which = op;
    auto reduce = which == "Sum"    ? ops::Sum(named, x, {0, 0})
                  : which == "Mean" ? ops::Mean(named, x, {1, -1})
                  : which == "Min"  ? ops::Min(named, x, {0, 0})
                                    : ops::Max(named, x, {-2, 0});
    (void)reduce;
    check_error(s.status(), Code::kInvalidArgument, fmt::format("node 'twice' ({})", op));
    check_error(s.status(), Code::kInvalidArgument, "axes contain a duplicate");
  }
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto axes = ops::Placeholder(s, DataType::kInt32);
  auto sum = ops::Sum(s.with_op_name("late_sum"), x, axes);
  BOOST_REQUIRE(s.ok());
  auto twice = run_graph(s, {sum}, {{axes, Tensor::from_vector<int32_t>({1, -1})}});
  check_error(twice.status(), Code::kInvalidArgument, "node 'late_sum' (Sum)");
  check_error(twice.status(), Code::kInvalidArgument,
              "axes contain a duplicate: axis 1 is named twice");
  check_tensor<float>(run_one(s, sum, {{axes, Tensor::from_vector<int32_t>({1, 0})}}),
                      TensorShape{}, {21});
}

BOOST_AUTO_TEST_CASE(input_of_unknown_shape) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kInt64);
  auto max = ops::Max(s, x, -1, {.keep_dims = true});
  BOOST_TEST(max.shape().to_string() == "<unknown>");
  check_tensor<int64_t>(
      run_one(s, max,
              {{x, value_or_throw(Tensor::from_vector<int64_t>({3, 1, 2, 9, 8, 7}, {3, 2}))}}),
      TensorShape{3, 1}, {3, 9, 8});
}

BOOST_AUTO_TEST_CASE(cumulative_sums_and_products_and_top_k) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1, 2, 3}, {4, 5, 6}});
  check_tensor<int32_t>(run_one(s, ops::Cumsum(s, x, 1)), TensorShape{2, 3}, {1, 3, 6, 4, 9, 15});
  check_tensor<int32_t>(run_one(s, ops::Cumsum(s, x, 0, /*exclusive=*/true)), TensorShape{2, 3},
                        {0, 0, 0, 1, 2, 3});
  check_tensor<int32_t>(run_one(s, ops::Cumprod(s, x, -1, false, /*reverse=*/true)),
                        TensorShape{2, 3}, {6, 6, 3, 120, 30, 6});
  auto top = ops::TopKV2(s, ops::Const(s, {{3.f, 9.f, 1.f, 9.f}}), 3);
  BOOST_TEST(top.values.shape().to_string() == "[1,3]");
  check_tensor<float>(run_one(s, top.values), TensorShape{1, 3}, {9, 9, 3});
  check_tensor<int32_t>(run_one(s, top.indices), TensorShape{1, 3}, {1, 3, 0});
  ops::TopKV2(s.with_op_name("too_many"), ops::Const(s, {1.f, 2.f}), 3);
  check_error(s.status(), Code::kInvalidArgument,
              "node 'too_many' (TopKV2): input must have at least k=3 columns, got 2");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
