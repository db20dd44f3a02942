// Tests for how tensors are written into CAF messages (actors/messages.cpp): the bytes are
// Cap'n Proto's flat framing whichever way they are produced, and they read back unchanged.
#include <boost/test/unit_test.hpp>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "troupe/actors/messages.hpp"
#include "troupe/graph/core/tensor_codec.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

std::vector<Tensor> sample_tensors() {
  std::vector<float> floats(1000);
  for (size_t i = 0; i < floats.size(); ++i)
    floats[i] = static_cast<float>(i) * 0.5f;
  return {Tensor(3.5f), value_or_throw(Tensor::from_vector<float>(floats, TensorShape{10, 100})),
          Tensor::from_vector<bool>(std::vector<bool>(13, true)),  // 13 bytes: not whole words
          Tensor(DataType::kFloat, TensorShape{0, 4}),
          Tensor::from_vector<std::string>({"a", "bc", ""})};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_messages)

// The segments are written one by one from the tensor's buffer; a receiver of any version
// reads them as one flat message, so the bytes must be exactly messageToFlatArray's.
BOOST_AUTO_TEST_CASE(segments_written_in_place_equal_the_flat_message) {
  for (const Tensor& tensor : sample_tensors()) {
    BOOST_TEST_CONTEXT(tensor.debug_string()) {
      std::vector<char> written;
      caf::binary_serializer sink(nullptr, written);
      BOOST_REQUIRE(!detail::save_tensor(sink, tensor));
      kj::Array<capnp::word> flat = serialize_tensor(tensor);
      uint64_t words = flat.size();
      std::vector<char> expected;
      caf::binary_serializer count(nullptr, expected);
      BOOST_REQUIRE(!count(words));
      expected.insert(expected.end(), reinterpret_cast<const char*>(flat.begin()),
                      reinterpret_cast<const char*>(flat.end()));
      BOOST_TEST(written == expected);

      caf::binary_deserializer source(nullptr, written);
      Tensor back;
      BOOST_REQUIRE(!detail::load_tensor(source, back));
      BOOST_TEST(back.equals(tensor));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
