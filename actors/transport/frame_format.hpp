// The tensor channel's frame format (docs/wire.md, "Tensor channel").
//
// A channel connection carries two byte streams: from the process that connected (the writer)
// to the process that accepted it (the reader), and back. Plain (--insecure), each stream is
// the TCP stream itself; with TLS, it is the plaintext inside sealed records
// (sealed_stream.hpp), after a TLS 1.3 handshake (channel_tls.hpp).
//
// Every frame starts with a 32-byte head whose first four bytes, the magic, say its kind. All
// integers are little-endian; a head is read with one memcpy.
//
//   kind     magic             direction         then
//   tensor   "TRPT" 54505254   writer -> reader  dims, key, device name, data
//   hello    "TRPH" 48505254   writer -> reader  ring name; the reader answers one byte
//   call     "TRPC" 43505254   writer -> reader  device name, payload
//   answer   "TRPR" 52505254   reader -> writer  payload
//
// A hello, if any, is the first frame of a connection (with TLS there always is one). The
// reader answers it with kRingTaken ('S': it opened the shared-memory ring the hello names,
// and reads the data of tensors of kSharedMemoryMinBytes or more from it) or kRingDeclined
// ('T'). Nothing else goes from reader to writer but answers to calls.
//
// Limits (a frame over one closes its connection): rank kMaxRank, key kMaxKeyBytes, device
// name kMaxDeviceBytes, data and payloads the receiving process's max_message_bytes.
//
// The heads are fixed C structs rather than Cap'n Proto messages: a tensor's bytes must land in
// its own buffer (or come from the ring) with no framing around them to parse, and a head this
// small costs less to check field by field than to decode. What calls and answers carry is a
// caf::message in CAF's binary format, whose tensors are Cap'n Proto buffers (docs/wire.md).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "troupe/actors/transport/shared_ring.hpp"

namespace troupe::frame {

static_assert(std::endian::native == std::endian::little, "channel frames are little-endian");

constexpr uint32_t kTensorMagic = 0x54505254;  // "TRPT"
constexpr uint32_t kHelloMagic = 0x48505254;   // "TRPH"
constexpr uint32_t kCallMagic = 0x43505254;    // "TRPC"
constexpr uint32_t kAnswerMagic = 0x52505254;  // "TRPR"
constexpr uint16_t kVersion = 1;

constexpr uint8_t kMaxRank = 32;
constexpr uint32_t kMaxKeyBytes = 64 * 1024;
constexpr uint32_t kMaxDeviceBytes = 4096;

// Tensors whose data has this many bytes or more go through the ring, if the reader took one.
constexpr size_t kSharedMemoryMinBytes = 64 * 1024;

constexpr char kRingTaken = 'S', kRingDeclined = 'T';

// tensor: then int64 dims[rank], the rendezvous key, the device name, and data_bytes of data
// (row-major) unless they go through the ring.
struct TensorHead {
  uint32_t magic;
  uint16_t version;
  uint8_t dtype;  // troupe::DataType, not a string
  uint8_t rank;
  int64_t step_id;
  uint32_t key_bytes;
  uint32_t device_bytes;
  uint64_t data_bytes;
};

// hello: then the ring's name (name_bytes; 0: no ring offered).
struct HelloHead {
  uint32_t magic;
  uint16_t version;
  uint16_t name_bytes;
  uint32_t slots;
  uint32_t slot_bytes;
  SharedRing::Nonce nonce;
};

// call: then the device name and the payload. answer: device_bytes is 0, then the payload.
// call_id: 1, 2, ... per connection, below 2^60 (CAF's request id space).
struct CallHead {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  uint32_t device_bytes;
  uint32_t reserved2;
  uint64_t call_id;
  uint64_t payload_bytes;
};

constexpr size_t kHeadBytes = 32;
static_assert(sizeof(TensorHead) == kHeadBytes && sizeof(HelloHead) == kHeadBytes &&
                  sizeof(CallHead) == kHeadBytes,
              "a reader reads one head and tells the kinds apart by the magic");

// Why a tensor head cannot be accepted by a process whose limit is `max_bytes`, or "".
std::string check_tensor_head(const TensorHead& head, uint64_t max_bytes);

// A call or answer payload: `content` in CAF's binary format, as a caf::message. False if a
// value in it cannot be serialised.
bool encode_payload(caf::actor_system& system, const caf::type_erased_tuple& content,
                    std::vector<char>& out);
// Reads what encode_payload wrote; an error naming what failed if it is not a message.
caf::expected<caf::message> decode_payload(caf::actor_system& system,
                                           const std::vector<char>& bytes);

}  // namespace troupe::frame
