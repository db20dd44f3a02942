// Tests for Tensor, TensorBuffer and the Cap'n Proto codec.
#include <boost/test/unit_test.hpp>

#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/core/tensor_codec.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {

BOOST_AUTO_TEST_SUITE(tensor)

BOOST_AUTO_TEST_CASE(copies_share_the_buffer) {
  Tensor a = value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, TensorShape{2, 2}));
  Tensor b = a;
  BOOST_TEST(a.shares_buffer_with(b));
  BOOST_TEST(b.data<float>() == a.data<float>());
  BOOST_TEST(reinterpret_cast<uintptr_t>(a.raw_data()) % TensorBuffer::kAlignment == 0);
}

BOOST_AUTO_TEST_CASE(deep_copy_does_not_share) {
  Tensor a = Tensor::from_vector<int32_t>({1, 2, 3});
  Tensor b = a.deep_copy();
  BOOST_TEST(!a.shares_buffer_with(b));
  BOOST_TEST(a.equals(b));
}

BOOST_AUTO_TEST_CASE(from_vector_rejects_wrong_count) {
  BOOST_CHECK_THROW(value_or_throw(Tensor::from_vector<float>({1, 2, 3}, TensorShape{2, 2})),
                    StatusError);
}

BOOST_AUTO_TEST_CASE(prints_nested_values) {
  Tensor a = value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, TensorShape{2, 2}));
  BOOST_TEST(a.debug_string() == "float32 [2,2] [[1, 2], [3, 4]]");
  BOOST_TEST(Tensor("hi").debug_string() == "string [] \"hi\"");
}

BOOST_AUTO_TEST_CASE(cast_converts_elements) {
  Tensor a = Tensor::from_vector<float>({1.5f, -2.5f, 0.f});
  auto ints = a.cast_to(DataType::kInt32);
  BOOST_REQUIRE(ints.ok());
  BOOST_TEST(ints->to_vector<int32_t>() == (std::vector<int32_t>{1, -2, 0}));
  BOOST_TEST(!Tensor("x").cast_to(DataType::kFloat).ok());
  auto bytes = Tensor::from_vector<float>({0.f, 255.f, 3.9f}).cast_to(DataType::kUint8);
  BOOST_REQUIRE(bytes.ok());
  BOOST_TEST(bytes->to_vector<uint8_t>() == (std::vector<uint8_t>{0, 255, 3}));
  BOOST_TEST(bytes->debug_string() == "uint8 [3] [0, 255, 3]");
}

BOOST_AUTO_TEST_CASE(uint8_is_named_sized_and_parsed_as_tensorflow_names_it) {
  BOOST_TEST(dtype_name(DataType::kUint8) == "uint8");
  BOOST_TEST(dtype_size(DataType::kUint8) == 1u);
  BOOST_TEST(dtype_is_integer(DataType::kUint8));
  BOOST_TEST(!dtype_is_floating(DataType::kUint8));
  auto parsed = parse_dtype("uint8");
  BOOST_REQUIRE(parsed.ok());
  BOOST_TEST((*parsed == DataType::kUint8));
  BOOST_TEST(parse_dtype("uint16").status().message().find("uint8") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(wire_round_trip_reads_in_place) {
  Tensor a = value_or_throw(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, TensorShape{2, 3}));
  auto flat = std::make_shared<const kj::Array<capnp::word>>(serialize_tensor(a));
  auto back = parse_tensor(flat);
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(back->equals(a));
  auto* begin = reinterpret_cast<const char*>(flat->begin());
  auto* data = static_cast<const char*>(back->raw_data());
  BOOST_TEST((data >= begin && data < begin + flat->size() * sizeof(capnp::word)));
}

BOOST_AUTO_TEST_CASE(wire_round_trip_strings_and_scalars) {
  for (const Tensor& t : {Tensor("hello"), Tensor(3.5f), Tensor(int64_t{-7}), Tensor(true),
                          Tensor::from_vector<std::string>({"a", "", "ccc"}),
                          Tensor::from_vector<uint8_t>({0, 255, 9})}) {
    auto back = parse_tensor(std::make_shared<const kj::Array<capnp::word>>(serialize_tensor(t)));
    BOOST_REQUIRE(back.ok());
    BOOST_TEST(back->equals(t), t.debug_string());
  }
}

BOOST_AUTO_TEST_CASE(wire_rejects_truncated_data) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<wire::Tensor>();
  root.setDtype(wire::DataType::FLOAT32);
  root.initShape(1).set(0, 4);
  root.initChunks(1).set(0, capnp::Data::Reader(reinterpret_cast<const kj::byte*>("abcd"), 4));
  auto decoded = tensor_from_wire(root.asReader(), nullptr);
  BOOST_TEST(decoded.status().code() == Code::kInvalidArgument);
  BOOST_TEST(decoded.status().message().find("expected 16") != std::string::npos);
}

// A dead value crossing devices (devices/executor.hpp) is an uninitialised Tensor; a dtype of
// 0 with data is still refused.
BOOST_AUTO_TEST_CASE(an_uninitialised_tensor_round_trips_as_itself) {
  auto back =
      parse_tensor(std::make_shared<const kj::Array<capnp::word>>(serialize_tensor(Tensor())));
  BOOST_REQUIRE(back.ok());
  BOOST_TEST(!back->is_initialized());
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<wire::Tensor>();
  root.setDtype(wire::DataType::INVALID);
  root.initShape(1).set(0, 1);
  BOOST_TEST(tensor_from_wire(root.asReader(), nullptr).status().code() == Code::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(wire_rejects_garbage) {
  auto garbage = std::make_shared<kj::Array<capnp::word>>(kj::heapArray<capnp::word>(4));
  std::memset(reinterpret_cast<char*>(garbage->begin()), 0xff, 4 * sizeof(capnp::word));
  auto decoded = parse_tensor(garbage);
  BOOST_TEST(decoded.status().code() == Code::kInvalidArgument);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe

namespace troupe {

BOOST_AUTO_TEST_SUITE(tensor_wire_sizes)

// The traversal limit is the message's own size: reading the data must not count it twice.
BOOST_AUTO_TEST_CASE(large_tensors_round_trip_within_the_traversal_limit) {
  for (int64_t n : {int64_t{1000}, int64_t{2000}, int64_t{1} << 20}) {
    Tensor t(DataType::kFloat, TensorShape{n});
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = static_cast<float>(i);
    auto back = parse_tensor(std::make_shared<const kj::Array<capnp::word>>(serialize_tensor(t)));
    BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
    BOOST_TEST(back->equals(t));
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
