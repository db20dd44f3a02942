// Tests that Status crosses actor messages unchanged, and that message payloads survive CAF's
// binary serialisation (the path they take between processes).
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

template <class T>
T round_trip(const T& value) {
  auto runtime = value_or_throw(Runtime::shared_default());
  caf::actor_system& system = runtime->system();
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  T copy = value;
  BOOST_REQUIRE(!sink(copy));
  T result;
  caf::binary_deserializer source{system, bytes};
  BOOST_REQUIRE(!source(result));
  return result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(error_bridge)

BOOST_AUTO_TEST_CASE(every_code_and_message_survives) {
  for (uint8_t c = 1; c <= kMaxCode; ++c) {
    Status original(static_cast<Code>(c), "node 'x' on /job:ps/replica:0/task:1: it broke");
    BOOST_TEST(from_caf_error(to_caf_error(original)) == original, original.to_string());
  }
}

BOOST_AUTO_TEST_CASE(caf_errors_map_to_tensorflow_codes) {
  BOOST_TEST(from_caf_error(caf::make_error(caf::sec::request_timeout), "a call").code() ==
             Code::kDeadlineExceeded);
  BOOST_TEST(from_caf_error(caf::make_error(caf::sec::request_receiver_down)).code() ==
             Code::kUnavailable);
  Status with_context = from_caf_error(caf::make_error(caf::sec::request_receiver_down), "hop");
  BOOST_TEST(with_context.message().find("hop") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(run_step_request_serialises) {
  RunStepRequest request;
  request.signature.feeds = {"x:0"};
  request.signature.fetches = {"y:0", "z:1"};
  request.signature.targets = {"init"};
  request.feeds = {value_or_throw(Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}))};
  request.options.timeout_ms = 250;
  RunStepRequest back = round_trip(request);
  BOOST_TEST((back.signature == request.signature));
  BOOST_TEST(back.options.timeout_ms == 250);
  BOOST_REQUIRE(back.feeds.size() == 1u);
  BOOST_TEST(back.feeds[0].equals(request.feeds[0]));
}

BOOST_AUTO_TEST_CASE(partition_spec_serialises) {
  PartitionSpec spec;
  spec.container = "session_7";
  spec.graph.nodes.push_back(NodeDef{
      "c", "Const", {}, "/job:ps/task:0", {{"dtype", DataType::kString}, {"value", Tensor("hi")}}});
  PartitionSpec back = round_trip(spec);
  BOOST_TEST(back.container == "session_7");
  BOOST_REQUIRE(back.graph.nodes.size() == 1u);
  BOOST_TEST(back.graph.nodes[0].device == "/job:ps/task:0");
  BOOST_TEST(back.graph.nodes[0].find_attr("value")->get<Tensor>().scalar<std::string>() == "hi");
}

BOOST_AUTO_TEST_CASE(a_corrupt_tensor_is_refused) {
  auto runtime = value_or_throw(Runtime::shared_default());
  caf::actor_system& system = runtime->system();
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  Tensor t = Tensor::from_vector<double>({1, 2});
  BOOST_REQUIRE(!sink(t));
  bytes.resize(bytes.size() - 8);  // truncate the Cap'n Proto message
  Tensor back;
  caf::binary_deserializer source{system, bytes};
  BOOST_TEST(static_cast<bool>(source(back)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
