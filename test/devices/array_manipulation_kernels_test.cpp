// Tests for the array manipulation ops through the C++ builder API: values (numbers and
// strings), shapes at build time, the strided-slice spec's corner cases, gradients' graphs
// running, and the errors TensorFlow gives, statically and at run time.
#include "devices/run_graph.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/gradients.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;
using testing::run_graph;
using testing::run_one;

BOOST_AUTO_TEST_SUITE(array_manipulation_kernels)

BOOST_AUTO_TEST_CASE(concat_split_and_unpack_are_inverse) {
  Scope s = Scope::new_root();
  auto a = ops::Const(s, {{1, 2}, {3, 4}});
  auto b = ops::Const(s, {{5}, {6}});
  auto joined = ops::ConcatV2(s, {a, b}, 1);
  BOOST_TEST(joined.shape().to_string() == "[2,3]");
  check_tensor<int32_t>(run_one(s, joined), TensorShape{2, 3}, {1, 2, 5, 3, 4, 6});
  auto parts = ops::SplitV(s, joined, {2, -1}, 1, 2);
  BOOST_TEST(parts[1].shape().to_string() == "[2,1]");
  check_tensor<int32_t>(run_one(s, parts[1]), TensorShape{2, 1}, {5, 6});
  auto rows = ops::Unpack(s, joined, 2);
  check_tensor<int32_t>(run_one(s, rows[1]), TensorShape{3}, {3, 4, 6});
  auto halves = ops::Split(s, 0, Tensor::from_vector<std::string>({"a", "b", "c", "d"}), 2);
  check_tensor<std::string>(run_one(s, halves[1]), TensorShape{2}, {"c", "d"});
  auto offsets = ops::ConcatOffset(s, 1, {ops::Const(s, {2, 2}), ops::Const(s, {2, 1})});
  check_tensor<int32_t>(run_one(s, offsets[1]), TensorShape{2}, {0, 2});
}

BOOST_AUTO_TEST_CASE(strided_slice_spec_follows_tensorflows_rules) {
  // x[1:, ..., ::-1, None] of a [4, 5, 6] tensor: the ellipsis covers dimension 1.
  StridedSliceMasks masks{
      .begin_mask = 0b100, .end_mask = 0b101, .ellipsis_mask = 0b010, .new_axis_mask = 0b1000};
  auto spec = value_or_throw(
      make_strided_slice_spec({4, 5, 6}, {1, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, -1, 1}, masks));
  BOOST_TEST(spec.output_dims == (std::vector<int64_t>{3, 5, 6, 1}),
             boost::test_tools::per_element());
  BOOST_TEST(spec.begin == (std::vector<int64_t>{1, 0, 5}), boost::test_tools::per_element());
  // Out-of-range ends clamp; an index (shrink) out of range is an error.
  auto clamped = value_or_throw(make_strided_slice_spec({3}, {-10}, {10}, {1}, {}));
  BOOST_TEST(clamped.sizes[0] == 3);
  check_error(make_strided_slice_spec({3}, {3}, {4}, {1}, {.shrink_axis_mask = 1}).status(),
              Code::kInvalidArgument, "slice index 3 of dimension 0 out of bounds");
  check_error(make_strided_slice_spec({3}, {0}, {1}, {0}, {}).status(), Code::kInvalidArgument,
              "strides[0] must be non-zero");
  check_error(make_strided_slice_spec({3}, {0, 0}, {1, 1}, {1, 1}, {.ellipsis_mask = 3}).status(),
              Code::kInvalidArgument, "multiple ellipses");
  // Unknown dimensions stay unknown unless an index removes them.
  auto partial = value_or_throw(
      make_strided_slice_spec({-1, -1}, {0, 1}, {0, 2}, {1, 1}, {.shrink_axis_mask = 2}));
  BOOST_TEST(partial.output_dims == std::vector<int64_t>{-1}, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slice_pad_transpose_reverse_and_tile) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  check_tensor<float>(run_one(s, ops::Slice(s, x, {0, 1}, {-1, 2})), TensorShape{2, 2},
                      {2, 3, 5, 6});
  check_tensor<float>(
      run_one(s, ops::StridedSlice(s, x, {1, 2}, {2, 0}, {1, -1}, {.shrink_axis_mask = 1})),
      TensorShape{2}, {6, 5});
  check_tensor<float>(run_one(s, ops::Pad(s, x, {{0, 1}, {1, 0}})), TensorShape{3, 4},
                      {0, 1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0});
  check_tensor<float>(run_one(s, ops::PadV2(s, ops::Const(s, {1.f}), {{1, 1}}, 9.f)),
                      TensorShape{3}, {9, 1, 9});
  check_tensor<float>(run_one(s, ops::Transpose(s, x, {1, 0})), TensorShape{3, 2},
                      {1, 4, 2, 5, 3, 6});
  check_tensor<float>(run_one(s, ops::ReverseV2(s, x, {1})), TensorShape{2, 3}, {3, 2, 1, 6, 5, 4});
  check_tensor<float>(run_one(s, ops::Tile(s, ops::Const(s, {1.f, 2.f}), {2})), TensorShape{4},
                      {1, 2, 1, 2});
  check_tensor<float>(run_one(s, ops::ExpandDims(s, x, -1)), TensorShape{2, 3, 1},
                      {1, 2, 3, 4, 5, 6});
  check_tensor<float>(
      run_one(s, ops::Squeeze(
                     s, value_or_throw(Tensor::from_vector<float>({1.f}, TensorShape{1, 1, 1})),
                     {0, 2})),
      TensorShape{1}, {1});
  check_tensor<int32_t>(run_one(s, ops::Rank(s, x)), TensorShape{}, {2});
  check_tensor<int64_t>(run_one(s, ops::Range(s, int64_t{3}, int64_t{0}, int64_t{-1})),
                        TensorShape{3}, {3, 2, 1});
  check_tensor<float>(run_one(s, ops::OneHot(s, Tensor::from_vector<int64_t>({1, 0}), 2, 1.f, 0.f)),
                      TensorShape{2, 2}, {0, 1, 1, 0});
}

BOOST_AUTO_TEST_CASE(gradients_of_the_new_ops_build_and_run) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto y = ops::Sum(
      s,
      ops::Mul(s, ops::Tile(s, ops::Transpose(s, x, {1, 0}), {1, 2}),
               ops::Const(s, {{1.f, 0.f, 1.f, 0.f}, {0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 2.f}})),
      {0, 1});
  auto grads = value_or_throw(add_gradients(s, {y}, {x}));
  // y = x[0,0] + x[0,0] + 2 * x[1,2].
  check_tensor<float>(run_one(s, grads[0]), TensorShape{2, 3}, {2, 0, 0, 0, 0, 2});
}

BOOST_AUTO_TEST_CASE(bad_input_fails_statically_or_at_run_time_naming_the_node) {
  Scope s = Scope::new_root();
  auto x = ops::Const(s, {{1.f, 2.f}, {3.f, 4.f}});
  ops::Transpose(s.with_op_name("perm"), x, {0, 0});
  check_error(s.status(), Code::kInvalidArgument,
              "node 'perm' (Transpose): [0,0] is not a permutation of 0..1");
  Scope late = Scope::new_root();
  auto fed = ops::Placeholder(late, DataType::kInt32);
  auto tiled = ops::Tile(late.with_op_name("tiled"), ops::Const(late, {1.f}), fed);
  check_error(run_graph(late, {tiled}, {{fed, Tensor::from_vector<int32_t>({-1})}}).status(),
              Code::kInvalidArgument, "node 'tiled' (Tile): multiples[0] = -1 must be >= 0");
  Scope pad = Scope::new_root();
  ops::Pad(pad.with_op_name("padded"), ops::Const(pad, {1.f}), {{0, 1}, {0, 0}});
  check_error(pad.status(), Code::kInvalidArgument, "has rank 1 but paddings has 2 rows");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
