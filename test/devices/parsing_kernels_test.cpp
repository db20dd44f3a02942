// Tests for ParseExample, DecodeCSV and DecodeRaw: Examples encoded here field by field from the
// public field numbers (packed and unpacked numbers, a feature set twice), dense defaults, sparse
// components, and the errors naming the record and feature; CSV columns of every type, quotes,
// defaults, select_cols and TensorFlow's messages.
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

// A dense shape (-1, 2): each record holds blocks of 2 values (FixedLenSequenceFeature), padded
// to the most blocks of the batch with the scalar default.
BOOST_AUTO_TEST_CASE(variable_length_dense_features_are_padded) {
  Scope root = Scope::new_root();
  std::vector<std::string> batch = {example({{"f", int64_feature({1, 2, 3, 4}, true)}}),
                                    example({}), example({{"f", int64_feature({5, 6}, false)}})};
  auto parsed = ops::ParseExample(root, records(root, batch), {}, {}, {"f"},
                                  {Input(Tensor(int64_t{-1}))}, {PartialShape{-1, 2}});
  auto got = testing::run_graph(root, {parsed.dense_values[0]});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  check_tensor<int64_t>(got->at(0), TensorShape{3, 2, 2},
                        {1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1});

  Scope odd = Scope::new_root();
  auto three =
      ops::ParseExample(odd, records(odd, {example({{"f", int64_feature({1, 2, 3}, true)}})}), {},
                        {}, {"f"}, {Input(Tensor(int64_t{0}))}, {PartialShape{-1, 2}});
  check_error(testing::run_graph(odd, {three.dense_values[0]}).status(), Code::kInvalidArgument,
              "record 0, feature 'f': 3 values are not a whole number of blocks of 2");
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

BOOST_AUTO_TEST_CASE(decode_csv_columns_quotes_and_defaults) {
  Scope root = Scope::new_root();
  auto columns =
      ops::DecodeCSV(root, records(root, {"1.5,\"a,\"\"b\"\"\",7,", " 2 ,,-3,9", "NA,c,4,10"}),
                     {Input(Tensor(0.25f)), Input(Tensor(std::string("none"))),
                      Input(Tensor(DataType::kInt32, TensorShape{0})), Input(Tensor(int64_t{42}))},
                     {.na_value = "NA"});
  BOOST_REQUIRE_EQUAL(columns.size(), 4u);
  auto got = testing::run_graph(root, columns);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  check_tensor<float>(got->at(0), TensorShape{3}, {1.5f, 2.0f, 0.25f});
  BOOST_TEST(got->at(1).flat<std::string>()[0] == "a,\"b\"");
  BOOST_TEST(got->at(1).flat<std::string>()[1] == "none");
  BOOST_TEST(got->at(1).flat<std::string>()[2] == "c");
  check_tensor<int32_t>(got->at(2), TensorShape{3}, {7, -3, 4});
  check_tensor<int64_t>(got->at(3), TensorShape{3}, {42, 9, 10});

  // Only columns 1 and 3, nothing after them parsed (a bad quote there is no error); the 2-D
  // shape of the records is kept.
  Scope selected = Scope::new_root();
  auto picked = ops::DecodeCSV(
      selected,
      ops::Const(selected, value_or_throw(Tensor::from_vector<std::string>(
                               {"x,1,y,2.5", "x,2,y,3.5,\"bad", "x,3,y,", "x,4,y,8"}, {2, 2}))),
      {Input(Tensor(int64_t{0})), Input(Tensor(-1.0))}, {.select_cols = {1, 3}});
  auto values = testing::run_graph(selected, picked);
  BOOST_REQUIRE_MESSAGE(values.ok(), values.status().to_string());
  check_tensor<int64_t>(values->at(0), TensorShape{2, 2}, {1, 2, 3, 4});
  BOOST_TEST(values->at(1).flat<double>()[0] == 2.5);
  BOOST_TEST(values->at(1).flat<double>()[1] == 3.5);
  BOOST_TEST(values->at(1).flat<double>()[2] == -1.0);
  BOOST_TEST(values->at(1).flat<double>()[3] == 8.0);
}

BOOST_AUTO_TEST_CASE(decode_csv_errors_name_the_field_and_record) {
  auto fails = [](const std::vector<std::string>& lines, std::vector<Input> defaults,
                  const std::string& needle, ops::DecodeCSVAttrs attrs = {}) {
    Scope root = Scope::new_root();
    auto columns = ops::DecodeCSV(root, records(root, lines), defaults, attrs);
    Status status = root.status();
    if (status.ok()) status = testing::run_graph(root, columns).status();
    check_error(status, Code::kInvalidArgument, needle);
  };
  Tensor required(DataType::kInt32, TensorShape{0});
  fails({",1", "0.2,3", "3.0,"}, {Input(Tensor(1.0f)), Input(required)},
        "Field 1 is required but missing in record 2!");
  fails({",1", "0.2,234a"}, {Input(Tensor(1.0f)), Input(required)},
        "Field 1 in record 1 is not a valid int32: 234a");
  fails({"1", "9999999999999999999999999"}, {Input(Tensor(int32_t{1}))},
        "Field 0 in record 1 is not a valid int32: 9999999999999999999999999");
  fails({"3.0adf,3"}, {Input(Tensor(1.0f)), Input(required)},
        "Field 0 in record 0 is not a valid float: 3.0adf");
  fails({"a\"bc"}, {Input(Tensor(std::string("a")))},
        "Unquoted fields cannot have quotes/CRLFs inside");
  fails({"\""}, {Input(Tensor(std::string("a")))},
        "Quoted field has to end with quote followed by delim or end");
  fails({"0.2,2"}, {Input(Tensor(1.0f))}, "Expect 1 fields but have 2 in record 0");
  fails({"1,2,3"}, {Input(Tensor(0)), Input(Tensor(0))}, "Expect 2 fields but have 1 in record 0",
        {.select_cols = {0, 3}});
  fails({"1"}, {Input(Tensor(0))}, "field_delim should be only 1 char", {.field_delim = "::"});
  fails({"1"}, {Input(Tensor(0)), Input(Tensor(0))}, "select_cols should be strictly increasing",
        {.select_cols = {1, 0}});
  fails({"1"}, {Input(Tensor::from_vector<int32_t>({1, 2}))},
        "Shape of a default must be a length-0 or length-1 vector, or a scalar");
}

BOOST_AUTO_TEST_CASE(string_split_into_sparse_components) {
  Scope root = Scope::new_root();
  auto kept = ops::StringSplit(root, records(root, {"#a", "b#", "#c#", ""}), Input("#"),
                               /*skip_empty=*/false);
  auto skipped = ops::StringSplit(root, records(root, {"pigs on,the", "", "x"}), Input(" ,"));
  auto bytes = ops::StringSplit(root, records(root, {"ab", "c"}), Input(""));
  auto got = testing::run_graph(root, {kept.indices, kept.values, kept.shape, skipped.indices,
                                       skipped.shape, bytes.values, bytes.shape});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  check_tensor<int64_t>(got->at(0), TensorShape{8, 2},
                        {0, 0, 0, 1, 1, 0, 1, 1, 2, 0, 2, 1, 2, 2, 3, 0});
  std::vector<std::string> values(got->at(1).flat<std::string>().begin(),
                                  got->at(1).flat<std::string>().end());
  BOOST_TEST(values == (std::vector<std::string>{"", "a", "b", "", "", "c", "", ""}));
  check_tensor<int64_t>(got->at(2), TensorShape{2}, {4, 3});
  check_tensor<int64_t>(got->at(3), TensorShape{4, 2}, {0, 0, 0, 1, 0, 2, 2, 0});
  check_tensor<int64_t>(got->at(4), TensorShape{2}, {3, 3});
  BOOST_TEST(got->at(5).flat<std::string>()[2] == "c");
  check_tensor<int64_t>(got->at(6), TensorShape{2}, {2, 2});

  Scope bad = Scope::new_root();
  auto delimiter = ops::Placeholder(bad, DataType::kString);
  auto split = ops::StringSplit(bad, records(bad, {"a"}), delimiter);
  check_error(testing::run_graph(bad, {split.values},
                                 {{delimiter, Tensor::from_vector<std::string>({"a", "b"})}})
                  .status(),
              Code::kInvalidArgument, "delimiter must be a scalar, got shape: [2]");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
