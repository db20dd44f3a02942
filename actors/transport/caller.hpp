// The calling side of the tensor channel's calls (docs/wire.md, "Calls"): writing a request as
// a call frame, the table of calls a connection waits on, and reading their answers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/message_id.hpp>

#include "troupe/actors/transport/channel_context.hpp"

namespace troupe {

class FrameReader;
class Sealer;

// A call written on a connection, waiting for its answer.
struct PendingCall {
  caf::strong_actor_ptr requester;
  caf::message_id request_id;
  caf::strong_actor_ptr callee;  // the sender of the answer the requester sees
  std::string device;
  int fd;  // the socket it went on

  // Hands `content` to the requester as the callee's answer (running it on `here` if idle).
  void answer(caf::message content, caf::execution_unit* here);
};

// The calls of one connection that wait for answers. Not synchronised: the connection guards it.
class CallTable {
 public:
  // Adds `call`; its id (1, 2, ...).
  uint64_t add(PendingCall call);
  // Removes call `id`; whether it was still waiting.
  bool erase(uint64_t id);
  // Removes and returns call `id` if it went on socket `fd`.
  std::optional<PendingCall> take(uint64_t id, int fd);
  // Removes and returns every call that went on socket `fd`.
  std::vector<PendingCall> take_all(int fd);

 private:
  std::map<uint64_t, PendingCall> calls_;
  uint64_t next_id_ = 1;
};

enum class CallWritten { kWhole, kNotEncoded, kNotWritten };

// Writes `content` as call `id` for `device` on `fd` (sealed if `sealer`), waiting until it is
// written. kNotEncoded (nothing written) if it cannot be serialised or is over the limit.
CallWritten write_call(ChannelContext& context, int fd, Sealer* sealer, uint64_t id,
                       const std::string& device, const caf::type_erased_tuple& content);

// Why `reader`'s stream ended (FrameReader::end_reason), counted in context.counters:
// streams_closed if its writer closed it, streams_cut if a sealed stream ended otherwise (read
// failed: the end without a close record, a refused record, a socket error) while the channel
// is not stopping.
std::string stream_ended(ChannelContext& context, const FrameReader& reader);

// Reads answers from `reader` until the stream ends or breaks, handing each to the call that
// `take(id)` returns (none: answered already). Returns why the stream ended.
std::string read_answers(ChannelContext& context, FrameReader& reader,
                         const std::function<std::optional<PendingCall>(uint64_t)>& take,
                         caf::execution_unit* here);

// Answers `calls`, whose connection to `endpoint` ended (`why`), with Unavailable.
void fail_calls(std::vector<PendingCall>& calls, const std::string& endpoint,
                const std::string& why, caf::execution_unit* here);

}  // namespace troupe
