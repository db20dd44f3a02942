// Tests of checkpoint slices (graph/formats/tensor_slice.hpp): TensorFlow's shape-and-slice
// strings parsed and refused, and slices copied out of 1-, 2- and 3-dimensional tensors.
#include <numeric>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/graph/formats/tensor_slice.hpp"

namespace troupe {
using testing::check_error;

namespace {

// 0, 1, 2, ... in a float tensor of `shape`.
Tensor counting(const TensorShape& shape) {
  Tensor t(DataType::kFloat, shape);
  std::iota(t.data<float>(), t.data<float>() + t.num_elements(), 0.0f);
  return t;
}

std::vector<float> values(const Tensor& t) {
  return t.to_vector<float>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_slice)

BOOST_AUTO_TEST_CASE(an_empty_spec_is_the_whole_tensor) {
  auto spec = parse_tensor_slice_spec("");
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->whole);
  const Tensor whole = counting(TensorShape{2, 3});
  auto slice = slice_of(whole, *spec, "t");
  BOOST_REQUIRE(slice.ok());
  BOOST_TEST(slice->shares_buffer_with(whole));
}

BOOST_AUTO_TEST_CASE(rows_of_a_matrix_as_a_partitioned_variables_shard) {
  auto spec = parse_tensor_slice_spec("4 3 1,2:-");
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->full_shape == (std::vector<int64_t>{4, 3}));
  BOOST_TEST(spec->start == (std::vector<int64_t>{1, 0}));
  BOOST_TEST(spec->length == (std::vector<int64_t>{2, 3}));
  auto slice = slice_of(counting(TensorShape{4, 3}), *spec, "t");
  BOOST_REQUIRE(slice.ok());
  BOOST_TEST(slice->shape().to_string() == "[2,3]");
  BOOST_TEST(values(*slice) == (std::vector<float>{3, 4, 5, 6, 7, 8}));
}

BOOST_AUTO_TEST_CASE(a_block_of_a_three_dimensional_tensor_and_of_a_vector) {
  auto spec = parse_tensor_slice_spec("2 3 4 1,1:1,2:2,2");
  BOOST_REQUIRE(spec.ok());
  auto slice = slice_of(counting(TensorShape{2, 3, 4}), *spec, "t");
  BOOST_REQUIRE(slice.ok());
  BOOST_TEST(slice->shape().to_string() == "[1,2,2]");
  // [1][1][2..3] = 12 + 4 + 2.., [1][2][2..3] = 12 + 8 + 2..
  BOOST_TEST(values(*slice) == (std::vector<float>{18, 19, 22, 23}));

  auto column = parse_tensor_slice_spec("5 3,2");
  BOOST_REQUIRE(column.ok());
  auto tail = slice_of(counting(TensorShape{5}), *column, "t");
  BOOST_REQUIRE(tail.ok());
  BOOST_TEST(values(*tail) == (std::vector<float>{3, 4}));
}

BOOST_AUTO_TEST_CASE(malformed_specs_say_what_is_wrong) {
  check_error(parse_tensor_slice_spec("4 x -:-").status(), Code::kInvalidArgument,
              "dimension 'x' is not a count");
  check_error(parse_tensor_slice_spec("4 3 -").status(), Code::kInvalidArgument,
              "2 dimension(s) but a slice of 1");
  check_error(parse_tensor_slice_spec("4 3 1:-").status(), Code::kInvalidArgument,
              "'1' is neither 'start,length' nor '-'");
  check_error(parse_tensor_slice_spec("4 3 3,2:-").status(), Code::kInvalidArgument,
              "slice 3,2 of dimension 0 ends past its size 4");
  check_error(parse_tensor_slice_spec("4 3 -1,2:-").status(), Code::kInvalidArgument,
              "'-1,2' is neither");
  check_error(parse_tensor_slice_spec("4 3 1,0:-").status(), Code::kInvalidArgument,
              "'1,0' has no length");
  check_error(parse_tensor_slice_spec("0,2").status(), Code::kInvalidArgument,
              "no dimensions before the slice");
  // As TensorFlow's parser: empty items between separators are skipped.
  auto skipped = parse_tensor_slice_spec("4 3 1,2::-");
  BOOST_REQUIRE(skipped.ok());
  BOOST_TEST(skipped->length == (std::vector<int64_t>{2, 3}));
}

BOOST_AUTO_TEST_CASE(a_slice_of_another_shape_or_of_strings_is_refused) {
  auto spec = parse_tensor_slice_spec("4 3 0,2:-");
  BOOST_REQUIRE(spec.ok());
  check_error(slice_of(counting(TensorShape{3, 4}), *spec, "tensor 'w'").status(),
              Code::kInvalidArgument, "tensor 'w': the tensor's shape is [3,4], the slice is of");
  check_error(slice_of(Tensor(DataType::kString, TensorShape{4, 3}), *spec, "s").status(),
              Code::kInvalidArgument, "slices of string tensors are not supported");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
