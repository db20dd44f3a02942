// Serving an accepted tensor channel connection (channel_reader.hpp).
#include "troupe/actors/transport/channel_reader.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include <fmt/core.h>
#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"  // how CAF inspects a Tensor
#include "troupe/actors/transport/caller.hpp"
#include "troupe/actors/transport/channel_tls.hpp"
#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/inline_unit.hpp"
#include "troupe/actors/transport/responder.hpp"
#include "troupe/actors/transport/stream_io.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

// Reserved as the bytes arrive, at most this much ahead of them.
constexpr size_t kGrowBytes = size_t{1} << 20;

// Reads `bytes` bytes into `out`, growing it as they arrive: a head that claims more than its
// sender sends costs no more memory than what was sent.
bool read_growing(FrameReader& reader, uint64_t bytes, std::vector<char>& out) {
  out.clear();
  while (out.size() < bytes) {
    size_t at = out.size();
    size_t piece = static_cast<size_t>(std::min<uint64_t>(bytes - at, kGrowBytes));
    out.resize(at + piece);
    if (!reader.read(out.data() + at, piece)) return false;
  }
  return true;
}

// SO_RCVTIMEO: a read waits at most `timeout` (0: for ever).
void set_receive_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval limit{static_cast<time_t>(timeout.count() / 1000),
                static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

}  // namespace

void serve_connection(ChannelContext& context, int fd, std::atomic<bool>& pending_flag,
                      const std::function<void(std::shared_ptr<AnswerLink>)>& publish) {
  // Junk is logged once per connection, however many frames it sends.
  bool logged = false;
  auto refuse = [&](const std::string& why) {
    ++context.counters.refused;
    if (context.stopping || logged) return;
    logged = true;
    log_warning(
        "tensor channel: refused a frame: {} (later refusals on this connection are not "
        "logged)",
        why);
  };
  auto answers = std::make_shared<AnswerLink>(fd, context.options.max_bytes);
  // Pending until the hello: a deadline for the handshake and the hello together, counted in
  // context.pending until then.
  bool pending = true;
  auto admitted = [&] {
    if (!pending) return;
    pending = false;
    pending_flag.store(false);  // a connection being dropped meanwhile ends at its next read
    --context.pending;
  };
  struct Admitted {
    std::function<void()> done;
    ~Admitted() { done(); }
  } admitted_at_exit{admitted};
  const auto deadline = std::chrono::steady_clock::now() + context.options.handshake_timeout;
  set_receive_timeout(fd, context.options.handshake_timeout);
  std::unique_ptr<Opener> opener;
  if (context.options.tls != nullptr) {
    auto keys = context.options.tls->handshake(fd, ChannelTls::Role::kAcceptor,
                                               context.options.handshake_timeout, peer_text(fd));
    if (!keys.ok()) {
      ++context.counters.handshakes_refused;
      if (!context.stopping) context.refused_handshakes.note(keys.status().message());
      return;
    }
    answers->sealer = std::make_unique<Sealer>(keys->send);
    opener = std::make_unique<Opener>(fd, keys->receive);
    if (publish) publish(answers);
    ++context.counters.sealed_connections;
    // What is left of the deadline is the hello's.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    set_receive_timeout(fd, std::max(left, std::chrono::milliseconds(1)));
  }
  FrameReader reader(fd, opener.get());
  std::unique_ptr<SharedRing> ring;  // the writer's, if it offered one and it opened here
  InlineUnit::Scope scope;  // a device that was idle runs the call or tensor on this thread
  InlineUnit* here = InlineUnit::of(context.system);
  caf::strong_actor_ptr responder;  // the sender of the calls read here, made at the first
  auto gone = [&] { return context.stopping || peer_hung_up(fd); };
  for (bool first = true;; first = false) {
    frame::TensorHead head{};
    if (!reader.read(&head, sizeof head)) {
      if (pending && !context.stopping && std::chrono::steady_clock::now() >= deadline) {
        ++context.counters.pending_timed_out;
        context.timed_out_pending.note(fmt::format(
            "tensor channel: closed a connection from {} that said no hello within {} ms "
            "(handshake_timeout)",
            peer_text(fd), context.options.handshake_timeout.count()));
      }
      break;
    }
    if (first && head.magic != frame::kHelloMagic) {
      refuse("the first frame of a connection is not a hello; closing the connection");
      break;
    }
    if (head.magic == frame::kCallMagic) {
      frame::CallHead call;
      std::memcpy(&call, &head, sizeof call);
      uint64_t id = call.call_id & caf::message_id::request_id_mask;
      if (call.version != frame::kVersion || call.device_bytes > frame::kMaxDeviceBytes ||
          call.payload_bytes > context.options.max_bytes || id == 0) {
        refuse(
            fmt::format("a call (version {}, {} bytes of device name, {} of payload, id {}); "
                        "closing the connection",
                        call.version, call.device_bytes, call.payload_bytes, call.call_id));
        break;
      }
      std::string device(call.device_bytes, '\0');
      std::vector<char> payload;
      if (!reader.read(device.data(), device.size()) ||
          !read_growing(reader, call.payload_bytes, payload)) {
        break;
      }
      if (responder == nullptr) responder = CallResponder::make(context.system, answers);
      serve_call(context, id, device, payload, responder, here);
      continue;
    }
    if (first && head.magic == frame::kHelloMagic) {
      frame::HelloHead hello;
      std::memcpy(&hello, &head, sizeof hello);
      std::string name(hello.name_bytes, '\0');
      if (!reader.read(name.data(), name.size())) break;
      if (context.options.shared_memory && hello.version == frame::kVersion && !name.empty()) {
        // Not there (another host or container): the data comes on the socket.
        if (auto opened = SharedRing::open(name, hello.nonce, hello.slots, hello.slot_bytes);
            opened.ok()) {
          ring = std::move(*opened);
        }
      }
      char answer = ring != nullptr ? frame::kRingTaken : frame::kRingDeclined;
      {
        std::lock_guard lock(answers->mutex);  // no call can be answered before it anyway
        if (!send_all(fd, answers->sealer.get(), {{&answer, 1}}, 1)) break;
      }
      // Admitted: a member may leave its connection idle for as long as it likes.
      set_receive_timeout(fd, std::chrono::milliseconds(0));
      admitted();
      continue;
    }
    if (std::string why = frame::check_tensor_head(head, context.options.max_bytes); !why.empty()) {
      refuse(why + "; closing the connection");
      break;
    }
    std::vector<int64_t> dims(head.rank);
    std::string key(head.key_bytes, '\0'), device(head.device_bytes, '\0');
    if (!reader.read(dims.data(), dims.size() * sizeof(int64_t)) ||
        !reader.read(key.data(), key.size()) || !reader.read(device.data(), device.size())) {
      break;
    }
    auto dtype = static_cast<DataType>(head.dtype);
    auto shape = TensorShape::from_dims(dims);
    if (!shape.ok() ||
        static_cast<uint64_t>(shape->num_elements()) * dtype_size(dtype) != head.data_bytes) {
      refuse(fmt::format("shape {} does not hold {} bytes of {}; closing the connection",
                         shape.ok() ? shape->to_string() : shape.status().message(),
                         head.data_bytes, dtype_name(dtype)));
      break;
    }
    caf::actor receiver = context.find_device(device);
    Tensor value(dtype, *shape);
    bool read = ring != nullptr && head.data_bytes >= frame::kSharedMemoryMinBytes
                    ? ring->read(value.raw_data(), head.data_bytes, gone)
                    : reader.read(value.raw_data(), head.data_bytes);
    if (!read) break;
    if (receiver == nullptr) {
      refuse(fmt::format("no device {} here (tensor '{}')", device, key));
      continue;
    }
    ++context.counters.frames_received;
    caf::actor_cast<caf::abstract_actor*>(receiver)->enqueue(
        caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, recv_tensor_atom::value,
                                  head.step_id, std::move(key), std::move(value)),
        here);
  }
  stream_ended(context, reader);
  if (reader.ended_cleanly()) {  // the writer said goodbye: so do the answers
    std::lock_guard lock(answers->mutex);
    if (answers->open && answers->sealer != nullptr) answers->sealer->close(fd);
  }
  // Without a responder nothing else writes on `answers`: only calls are answered there.
  if (responder != nullptr) CallResponder::of(responder).close();
}

}  // namespace troupe
