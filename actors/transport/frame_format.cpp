// Checks of frame heads and the encoding of call payloads (frame_format.hpp).
#include "troupe/actors/transport/frame_format.hpp"

#include <fmt/core.h>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>

#include "troupe/actors/messages.hpp"  // how CAF inspects a Tensor
#include "troupe/graph/core/tensor.hpp"

namespace troupe::frame {

std::string check_tensor_head(const TensorHead& head, uint64_t max_bytes) {
  if (head.magic != kTensorMagic) return "not a tensor channel frame";
  if (head.version != kVersion)
    return fmt::format("frame version {} (expected {})", head.version, kVersion);
  auto dtype = static_cast<DataType>(head.dtype);
  if (head.dtype == 0 || head.dtype >= kNumDataTypes || dtype == DataType::kString) {
    return fmt::format("dtype {} cannot travel on the channel", head.dtype);
  }
  if (head.rank > kMaxRank) return fmt::format("rank {} (at most {})", head.rank, kMaxRank);
  if (head.key_bytes > kMaxKeyBytes || head.device_bytes > kMaxDeviceBytes) {
    return "key or device name too long";
  }
  if (head.data_bytes > max_bytes) {
    return fmt::format("{} bytes of data, over this process's limit of {}", head.data_bytes,
                       max_bytes);
  }
  return "";
}

bool encode_payload(caf::actor_system& system, const caf::type_erased_tuple& content,
                    std::vector<char>& out) {
  caf::binary_serializer sink{system, out};
  return !caf::message::save(sink, content);
}

caf::expected<caf::message> decode_payload(caf::actor_system& system,
                                           const std::vector<char>& bytes) {
  caf::binary_deserializer source{system, bytes};
  caf::message content;
  if (auto err = source(content)) return err;
  return content;
}

}  // namespace troupe::frame
