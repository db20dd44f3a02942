// Cap'n Proto bytes inside CAF's binary serialisation: a word count, then the flat message.
#include "troupe/actors/messages.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/execution_unit.hpp>
#include <caf/sec.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/core/tensor_codec.hpp"
#include "troupe/graph/graph_def_codec.hpp"

namespace troupe {

uint64_t max_message_bytes(caf::actor_system& system) {
  // CAF keeps integers in its config as int64_t.
  return static_cast<uint64_t>(caf::get_or(system.config(), kMaxMessageBytesKey,
                                           static_cast<int64_t>(kDefaultMaxMessageBytes)));
}

ClientHeartbeats client_heartbeats(caf::actor_system& system) {
  ClientHeartbeats defaults;
  return {std::chrono::milliseconds(caf::get_or(system.config(), kClientHeartbeatIntervalKey,
                                                int64_t{defaults.interval.count()})),
          std::chrono::milliseconds(caf::get_or(system.config(), kClientHeartbeatTimeoutKey,
                                                int64_t{defaults.timeout.count()}))};
}

void drop_oversized_trace(caf::actor_system& system, const caf::node_id& destination,
                          std::vector<DeviceStepStats>& stats, std::vector<GraphDef>& graphs) {
  if (destination == system.node()) return;
  const uint64_t limit = max_message_bytes(system);
  for (DeviceStepStats& device : stats) {
    uint64_t bytes = approximate_message_bytes(device);
    if (bytes + 1024 <= limit) continue;
    log_warning(
        "the statistics of a traced step on {} ({} nodes, about {} bytes) are over the limit of "
        "{} bytes for one message between processes (--max_message_bytes): left out",
        device.device, device.node_stats.size(), bytes, limit);
    device.node_stats.clear();
  }
  for (size_t g = 0; g < graphs.size(); ++g) {
    if (graphs[g].nodes.empty()) continue;
    uint64_t bytes = serialize_graph_def(graphs[g]).size() * sizeof(capnp::word);
    if (bytes + 1024 <= limit) continue;
    log_warning(
        "partition graph {} of a step ({} nodes, {} bytes) is over the limit of {} bytes for "
        "one message between processes (--max_message_bytes): left out",
        g, graphs[g].nodes.size(), bytes, limit);
    graphs[g] = GraphDef();
  }
}

Status too_large_for_message(caf::actor_system& system, const Tensor& tensor,
                             std::string_view what) {
  return errors::InvalidArgument(
      "{} ({}, {} bytes) is over the limit of {} bytes for one message between processes "
      "(RuntimeOptions::max_message_bytes, --max_message_bytes)",
      what, tensor.shape().to_string(), tensor.total_bytes(), max_message_bytes(system));
}

}  // namespace troupe

namespace troupe::detail {
namespace {

caf::error save_flat(caf::serializer& sink, kj::Array<capnp::word> flat) {
  uint64_t words = flat.size();
  if (auto err = sink(words)) return err;
  return sink.apply_raw(words * sizeof(capnp::word), flat.begin());
}

// The same bytes as save_flat(messageToFlatArray(message)) — Cap'n Proto's segment table, then
// the segments — written piece by piece, so segments that reference a tensor's buffer go from
// there into CAF's buffer without a flat copy in between.
caf::error save_segments(caf::serializer& sink, capnp::MessageBuilder& message) {
  auto segments = message.getSegmentsForOutput();
  // uint32 segment count - 1, a uint32 size per segment, padded to whole words.
  std::vector<uint32_t> table((segments.size() + 2) / 2 * 2, 0);
  table[0] = static_cast<uint32_t>(segments.size() - 1);
  uint64_t words = table.size() / 2;
  for (size_t i = 0; i < segments.size(); ++i) {
    table[i + 1] = static_cast<uint32_t>(segments[i].size());
    words += segments[i].size();
  }
  if (auto err = sink(words)) return err;
  if (auto err = sink.apply_raw(table.size() * sizeof(uint32_t), table.data())) return err;
  for (auto segment : segments) {
    // A serializer only reads what apply_raw is given (the parameter is shared with loading).
    auto* bytes = const_cast<capnp::word*>(segment.begin());
    if (auto err = sink.apply_raw(segment.size() * sizeof(capnp::word), bytes)) {
      return err;
    }
  }
  return caf::none;
}

// A message that fails to decode is dropped by CAF without a word; say why, once, where it
// happens (not for decoding outside a message, e.g. in fuzz targets: no execution context).
caf::error refuse(caf::deserializer& source, const Status& status) {
  if (source.context() != nullptr) {
    log_warning("dropped an incoming message: {}", status.to_string());
  }
  return to_caf_error(status);
}

caf::error load_flat(caf::deserializer& source, std::shared_ptr<kj::Array<capnp::word>>& flat) {
  uint64_t words = 0;
  if (auto err = source(words)) return err;
  uint64_t limit = source.context() != nullptr ? max_message_bytes(source.context()->system())
                                               : kDefaultMaxMessageBytes;
  if (words > limit / sizeof(capnp::word)) {
    return refuse(source, errors::InvalidArgument(
                              "a tensor or graph of {} bytes is over this process's limit of {} "
                              "bytes (RuntimeOptions::max_message_bytes, --max_message_bytes)",
                              words * sizeof(capnp::word), limit));
  }
  // Claims larger than what arrived are refused before anything is allocated for them.
  if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&source);
      binary != nullptr && words > binary->remaining() / sizeof(capnp::word)) {
    return refuse(source, errors::InvalidArgument(
                              "a tensor or graph claims {} bytes but its message has {} left",
                              words * sizeof(capnp::word), binary->remaining()));
  }
  flat = std::make_shared<kj::Array<capnp::word>>(kj::heapArray<capnp::word>(words));
  return source.apply_raw(words * sizeof(capnp::word), flat->begin());
}

}  // namespace

caf::error save_tensor(caf::serializer& sink, const Tensor& tensor) {
  capnp::MallocMessageBuilder message;
  build_tensor_message(tensor, message);
  return save_segments(sink, message);
}

caf::error load_tensor(caf::deserializer& source, Tensor& tensor) {
  std::shared_ptr<kj::Array<capnp::word>> flat;
  if (auto err = load_flat(source, flat)) return err;
  auto parsed = parse_tensor(flat);
  if (!parsed.ok()) return refuse(source, parsed.status());
  tensor = std::move(parsed).value();
  return caf::none;
}

caf::error save_graph(caf::serializer& sink, const GraphDef& graph) {
  return save_flat(sink, serialize_graph_def(graph));
}

caf::error load_graph(caf::deserializer& source, GraphDef& graph) {
  std::shared_ptr<kj::Array<capnp::word>> flat;
  if (auto err = load_flat(source, flat)) return err;
  auto parsed = parse_graph_def(flat->asPtr());
  if (!parsed.ok()) return refuse(source, parsed.status());
  graph = std::move(parsed).value();
  return caf::none;
}

}  // namespace troupe::detail
