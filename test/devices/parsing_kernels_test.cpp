// Tests for ParseExample and DecodeRaw: Examples encoded here field by field from the public
// field numbers (packed and unpacked numbers, a feature set twice), dense defaults, sparse
// components, and the errors naming the record and feature.
#include <cstring>

#include "devices/run_graph.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe {
using testing::check_error;
using testing::check_tensor;

namespace {

namespace proto = troupe::proto;

// Feature { int64_list | float_list | bytes_list }, the numbers packed or one field each.
std::string int64_feature(const std::vector<int64_t>& values, bool packed) {
  std::string list;
  if (packed) {
    proto::put_packed_ints(list, 1, values);
  } else {
    for (int64_t v : values)
      proto::put_int(list, 1, v);
  }
  std::string feature;
  proto::put_bytes(feature, 3, list);
  return feature;
}

std::string float_feature(const std::vector<float>& values) {
  std::string list;
  for (float v : values)
    proto::put_float(list, 1, v);  // unpacked: protobuf's parsers accept both
  std::string feature;
  proto::put_bytes(feature, 2, list);
  return feature;
}

std::string example(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string map;
  for (const auto& [key, feature] : features) {
    std::string entry;
    proto::put_bytes(entry, 1, key);
    proto::put_bytes(entry, 2, feature);
    proto::put_bytes(map, 1, entry);
  }
  std::string out;
  proto::put_bytes(out, 1, map);
  return out;
}

Output records(const Scope& s, const std::vector<std::string>& r) {
  return ops::Const(s, Tensor::from_vector<std::string>(r));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(parsing_kernels)

BOOST_AUTO_TEST_CASE(dense_with_defaults_and_sparse) {
  Scope root = Scope::new_root();
  auto batch = records(
      root, {example({{"ids", int64_feature({7, 8}, true)}, {"x", float_feature({0.5f, 1.5f})}}),
             example({{"x", float_feature({2.5f, 3.5f})},
                      {"ids", int64_feature({9}, false)},
                      {"x", float_feature({4.5f, 5.5f})}})});  // last wins
  auto parsed = ops::ParseExample(
      root, batch, {"ids"}, {DataType::kInt64}, {"x", "y"},
      {Input(Tensor(DataType::kFloat, TensorShape{0})), Input(Tensor::from_vector<int64_t>({-1}))},
      {PartialShape{2}, PartialShape{1}});
  auto got = testing::run_graph(
      root, {parsed.sparse_indices[0], parsed.sparse_values[0], parsed.sparse_shapes[0],
             parsed.dense_values[0], parsed.dense_values[1]});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  check_tensor<int64_t>(got->at(0), TensorShape{3, 2}, {0, 0, 0, 1, 1, 0});
  check_tensor<int64_t>(got->at(1), TensorShape{3}, {7, 8, 9});
  check_tensor<int64_t>(got->at(2), TensorShape{2}, {2, 2});
  check_tensor<float>(got->at(3), TensorShape{2, 2}, {0.5f, 1.5f, 4.5f, 5.5f});
  check_tensor<int64_t>(got->at(4), TensorShape{2, 1}, {-1, -1});
}

BOOST_AUTO_TEST_CASE(mismatches_name_the_record_and_the_feature) {
  auto parse = [](const std::vector<std::string>& r, DataType type, int64_t size) {
    Scope root = Scope::new_root();
    auto parsed = ops::ParseExample(root, records(root, r), {}, {}, {"f"},
                                    {Input(Tensor(type, TensorShape{0}))}, {PartialShape{size}});
    return testing::run_graph(root, {parsed.dense_values[0]}).status();
  };
  std::string ints = example({{"f", int64_feature({1, 2}, true)}});
  check_error(parse({ints, ints}, DataType::kFloat, 2), Code::kInvalidArgument,
              "record 0, feature 'f': data types don't match: the record has int64, the "
              "feature is declared float32");
  check_error(parse({ints, example({})}, DataType::kInt64, 2), Code::kInvalidArgument,
              "record 1: feature 'f' (data type: int64) is required but could not be found");
  check_error(parse({ints}, DataType::kInt64, 3), Code::kInvalidArgument,
              "record 0, feature 'f': 2 values, but the shape [3] needs 3");
  std::string cut = ints.substr(0, ints.size() - 2);
  check_error(parse({ints, cut}, DataType::kInt64, 2), Code::kInvalidArgument,
              "could not parse record 1 as an Example");
}

BOOST_AUTO_TEST_CASE(decode_raw_little_and_big_endian) {
  Scope root = Scope::new_root();
  int32_t values[2] = {1, 258};
  std::string little(reinterpret_cast<const char*>(values), sizeof values);
  std::string big = little;
  for (size_t i = 0; i < big.size(); i += 4)
    std::reverse(big.begin() + static_cast<long>(i), big.begin() + static_cast<long>(i) + 4);
  auto l = ops::DecodeRaw(root, records(root, {little, little}), DataType::kInt32);
  auto b = ops::DecodeRaw(root, Input(big), DataType::kInt32, /*little_endian=*/false);
  auto got = testing::run_graph(root, {l, b});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  check_tensor<int32_t>(got->at(0), TensorShape{2, 2}, {1, 258, 1, 258});
  check_tensor<int32_t>(got->at(1), TensorShape{2}, {1, 258});
  Scope bad = Scope::new_root();
  auto odd = ops::DecodeRaw(bad, Input("12345"), DataType::kFloat);
  check_error(testing::run_graph(bad, {odd}).status(), Code::kInvalidArgument,
              "length 5 that is not a multiple of 4");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
