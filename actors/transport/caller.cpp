// Calls on the tensor channel, calling side (caller.hpp).
#include "troupe/actors/transport/caller.hpp"

#include <sys/uio.h>

#include <fmt/core.h>
#include <caf/all.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/stream_io.hpp"

namespace troupe {

void PendingCall::answer(caf::message content, caf::execution_unit* here) {
  requester->enqueue(
      caf::make_mailbox_element(callee, request_id.response_id(), {}, std::move(content)), here);
}

uint64_t CallTable::add(PendingCall call) {
  uint64_t id = next_id_++;
  calls_.emplace(id, std::move(call));
  return id;
}

bool CallTable::erase(uint64_t id) {
  return calls_.erase(id) == 1;
}

std::optional<PendingCall> CallTable::take(uint64_t id, int fd) {
  auto it = calls_.find(id);
  if (it == calls_.end() || it->second.fd != fd) return std::nullopt;
  PendingCall call = std::move(it->second);
  calls_.erase(it);
  return call;
}

std::vector<PendingCall> CallTable::take_all(int fd) {
  std::vector<PendingCall> taken;
  for (auto it = calls_.begin(); it != calls_.end();) {
    if (it->second.fd == fd) {
      taken.push_back(std::move(it->second));
      it = calls_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

CallWritten write_call(ChannelContext& context, int fd, Sealer* sealer, uint64_t id,
                       const std::string& device, const caf::type_erased_tuple& content) {
  std::vector<char> payload;
  if (!frame::encode_payload(context.system, content, payload) ||
      payload.size() > context.options.max_bytes) {
    return CallWritten::kNotEncoded;
  }
  frame::CallHead head{
      frame::kCallMagic, frame::kVersion, 0, static_cast<uint32_t>(device.size()), 0, id,
      payload.size()};
  bool whole = send_all(fd, sealer,
                        {{&head, sizeof head},
                         {const_cast<char*>(device.data()), device.size()},
                         {payload.data(), payload.size()}},
                        sizeof head + device.size() + payload.size());
  return whole ? CallWritten::kWhole : CallWritten::kNotWritten;
}

std::string stream_ended(ChannelContext& context, const FrameReader& reader) {
  if (reader.ended_cleanly()) {
    ++context.counters.streams_closed;
  } else if (reader.cut() && !context.stopping) {
    ++context.counters.streams_cut;
  }
  return reader.end_reason();
}

std::string read_answers(ChannelContext& context, FrameReader& reader,
                         const std::function<std::optional<PendingCall>(uint64_t)>& take,
                         caf::execution_unit* here) {
  for (;;) {
    frame::CallHead head{};
    if (!reader.read(&head, sizeof head)) return stream_ended(context, reader);
    if (head.magic != frame::kAnswerMagic || head.version != frame::kVersion ||
        head.payload_bytes > context.options.max_bytes) {
      ++context.counters.refused;
      return head.magic != frame::kAnswerMagic
                 ? "it sent something other than an answer"
                 : fmt::format("an answer of {} bytes (version {}) was refused", head.payload_bytes,
                               head.version);
    }
    std::vector<char> payload(head.payload_bytes);
    if (!reader.read(payload.data(), payload.size())) return stream_ended(context, reader);
    std::optional<PendingCall> call = take(head.call_id);
    if (!call) continue;  // answered already: the connection ended under a writer
    auto reply = frame::decode_payload(context.system, payload);
    caf::message content = reply ? std::move(*reply)
                                 : caf::make_message(to_caf_error(errors::Internal(
                                       "the answer of {} to a call could not be read: {}",
                                       call->device, context.system.render(reply.error()))));
    ++context.counters.calls_answered;
    call->answer(std::move(content), here);
  }
}

void fail_calls(std::vector<PendingCall>& calls, const std::string& endpoint,
                const std::string& why, caf::execution_unit* here) {
  for (PendingCall& call : calls) {
    call.answer(caf::make_message(to_caf_error(errors::Unavailable(
                    "device {}: the tensor channel connection to {} ended before it answered ({})",
                    call.device, endpoint, why))),
                here);
  }
}

}  // namespace troupe
