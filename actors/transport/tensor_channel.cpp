// The tensor channel: frames on plain TCP sockets, one writer thread per peer process, one
// reader thread per accepted connection.
//
// A frame (little-endian): magic "TRPT", version, dtype, rank, step id, key length, device
// length, data length (32 bytes), then the dims (int64 each), the rendezvous key, the
// destination device's name, and the tensor's bytes, except where the connection has a shared
// ring and the data has kSharedMemoryMinBytes or more: then they go through the ring.
//
// A writer may open a connection with a hello instead (magic "TRPH", version, name length,
// slot count, slot size, nonce: 32 bytes, then the name of a shared-memory ring it made); the
// reader answers one byte, 'S' if it opened the ring and will read large data from it, 'T' if
// not.
//
// Calls (actors/transport/channel_call.hpp) share the writer's connection: a call frame (magic
// "TRPC", call id, device name, a CAF-serialised message) goes from writer to reader, and the reply
// frame (magic "TRPR", the same id, the serialised reply) comes back the other way, read by a
// reply thread of the writer's side. docs/wire.md has the tables.
//
// With TLS, every byte after the handshake, in both directions, goes through a sealed stream
// (actors/transport/sealed_stream.hpp): the same frames, inside AES-GCM records. The hello is
// then always sent (with no ring name when there is none to offer), so that the writer knows
// the reader accepted its certificate before it writes a frame.
#include "actors/transport/tensor_channel.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>

#include <fmt/core.h>
#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/error_bridge.hpp"
#include "actors/messages.hpp"  // how CAF inspects a Tensor
#include "actors/transport/channel_call.hpp"
#include "actors/transport/channel_tls.hpp"
#include "actors/transport/inline_unit.hpp"
#include "actors/transport/sealed_stream.hpp"
#include "actors/transport/shared_ring.hpp"
#include "actors/transport/tcp_connect.hpp"
#include "actors/transport/throttled_log.hpp"
#include "graph/host_port.hpp"

namespace troupe {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor channel frames are little-endian");

constexpr uint32_t kMagic = 0x54505254;  // "TRPT"
constexpr uint16_t kVersion = 1;
constexpr uint8_t kMaxRank = 32;
constexpr uint32_t kMaxKeyBytes = 64 * 1024;
constexpr uint32_t kMaxDeviceBytes = 4096;
constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kRetryAfter = std::chrono::seconds(10);  // after a failed connect
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
// Accepted connections in their TLS handshake at once, at most: more are closed unread.
constexpr int kMaxHandshaking = 64;

struct FrameHead {
  uint32_t magic;
  uint16_t version;
  uint8_t dtype;
  uint8_t rank;
  int64_t step_id;
  uint32_t key_bytes;
  uint32_t device_bytes;
  uint64_t data_bytes;
};
static_assert(sizeof(FrameHead) == 32);

constexpr uint32_t kHelloMagic = 0x48505254;  // "TRPH"
constexpr char kRingTaken = 'S', kRingDeclined = 'T';
constexpr auto kHelloTimeout = std::chrono::seconds(10);

struct HelloHead {
  uint32_t magic;
  uint16_t version;
  uint16_t name_bytes;
  uint32_t slots;
  uint32_t slot_bytes;
  SharedRing::Nonce nonce;
};
static_assert(sizeof(HelloHead) == sizeof(FrameHead), "a reader tells them apart by the magic");

constexpr uint32_t kCallMagic = 0x43505254;   // "TRPC"
constexpr uint32_t kReplyMagic = 0x52505254;  // "TRPR"

struct CallHead {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  uint32_t device_bytes;  // 0 in a reply
  uint32_t reserved2;
  uint64_t call_id;
  uint64_t payload_bytes;
};
static_assert(sizeof(CallHead) == sizeof(FrameHead), "a reader tells them apart by the magic");

// `content` in CAF's binary format, as a caf::message; false if a value cannot be serialised.
bool serialize(caf::actor_system& system, const caf::type_erased_tuple& content,
               std::vector<char>& out) {
  caf::binary_serializer sink{system, out};
  return !caf::message::save(sink, content);
}

// Reads what serialize() wrote; an error naming what failed if it is not a message.
caf::expected<caf::message> deserialize(caf::actor_system& system, const std::vector<char>& bytes) {
  caf::binary_deserializer source{system, bytes};
  caf::message content;
  if (auto err = source(content)) return err;
  return content;
}

// Frames come off the socket through a small buffer, so a run of small frames costs a few
// reads rather than five each; bytes beyond what is buffered go straight to their destination.
// With TLS, the opener reads and decrypts instead.
class FrameReader {
 public:
  explicit FrameReader(int fd, Opener* opener = nullptr)
      : fd_(fd), opener_(opener), buffer_(opener == nullptr ? kBufferBytes : 0) {}

  // Fills `data` with the next `bytes` bytes of the stream; false once it ends or fails.
  bool read(void* data, size_t bytes) {
    if (bytes == 0) return true;  // an empty tensor has no data pointer for memcpy
    if (opener_ != nullptr) return opener_->read(data, bytes);
    auto* at = static_cast<char*>(data);
    size_t buffered = std::min(bytes, end_ - begin_);
    std::memcpy(at, buffer_.data() + begin_, buffered);
    begin_ += buffered;
    at += buffered;
    bytes -= buffered;
    if (bytes >= kBufferBytes) return read_exactly(at, bytes);  // a tensor's bulk: no copy
    while (bytes > 0) {
      if (!fill()) return false;
      size_t take = std::min(bytes, end_ - begin_);
      std::memcpy(at, buffer_.data() + begin_, take);
      begin_ += take;
      at += take;
      bytes -= take;
    }
    return true;
  }

 private:
  static constexpr size_t kBufferBytes = 64 * 1024;

  bool fill() {  // the buffer is empty here
    begin_ = end_ = 0;
    for (;;) {
      ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      end_ = static_cast<size_t>(got);
      return true;
    }
  }

  bool read_exactly(char* at, size_t bytes) {
    while (bytes > 0) {
      ssize_t got = ::read(fd_, at, bytes);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      at += got;
      bytes -= static_cast<size_t>(got);
    }
    return true;
  }

  int fd_;
  Opener* opener_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
};

// Writes `parts` (adjusting them) until all is written, the socket fails, or, with
// MSG_DONTWAIT in `flags`, it would block (errno EAGAIN then). Returns the bytes written.
size_t write_all(int fd, std::vector<iovec>& parts, int flags = 0) {
  size_t first = 0, written = 0;
  while (first < parts.size()) {
    msghdr message{};
    message.msg_iov = parts.data() + first;
    message.msg_iovlen = std::min<size_t>(parts.size() - first, IOV_MAX);
    // No SIGPIPE if the reader has gone: the write fails and the frames fall back.
    ssize_t put = ::sendmsg(fd, &message, MSG_NOSIGNAL | flags);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) break;
    auto left = static_cast<size_t>(put);
    written += left;
    while (first < parts.size() && left >= parts[first].iov_len) {
      left -= parts[first].iov_len;
      ++first;
    }
    if (left > 0) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return written;
}

// Writes `parts` to `fd`, sealed if `sealer` (see Sealer::write and write_all).
Sealer::Written send_parts(int fd, Sealer* sealer, std::vector<iovec>& parts, int flags = 0) {
  if (sealer != nullptr) return sealer->write(fd, parts, flags);
  size_t wanted = 0;
  for (const iovec& part : parts)
    wanted += part.iov_len;
  size_t written = write_all(fd, parts, flags);
  return {written, written < wanted && (flags & MSG_DONTWAIT) != 0 &&
                       (errno == EAGAIN || errno == EWOULDBLOCK)};
}

// Whether all `bytes` of `parts` went to `fd` (sealed if `sealer`), waiting as long as it takes.
bool send_all(int fd, Sealer* sealer, std::vector<iovec> parts, size_t bytes) {
  return send_parts(fd, sealer, parts).bytes == bytes;
}

// Refused handshakes: a stranger knocking many times costs no more than one line per 10 s.
ThrottledLog refused_handshakes;

void set_no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A connected socket to "host:port", or -1 (after kConnectTimeout at most).
int connect_to(const std::string& endpoint) {
  auto host_port = parse_host_port(endpoint);
  if (!host_port.ok()) return -1;
  int fd = tcp_connect(host_port->first, static_cast<uint16_t>(host_port->second), kConnectTimeout);
  if (fd >= 0) set_no_delay(fd);
  return fd;
}

// Why a frame head cannot be accepted, or "" if it can.
std::string check_head(const FrameHead& head, uint64_t max_bytes) {
  if (head.magic != kMagic) return "not a tensor channel frame";
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

// Where the replies to the calls read on one accepted socket go.
struct ReplyLink {
  ReplyLink(int fd, uint64_t max_bytes) : fd(fd), max_bytes(max_bytes) {}
  std::mutex mutex;  // one writer at a time; held while `open` is cleared
  int fd;
  uint64_t max_bytes;  // what the caller reads at most (the same limit on every process)
  std::unique_ptr<Sealer> sealer;  // with TLS; set before the first frame is read
  bool open = true;
};

// Writes the reply to call `id` on `link`, on the replying thread. A reply that cannot be
// serialised is answered with Internal, one over the size limit with InvalidArgument; a failed
// write shuts the socket (the caller's calls on it end with Unavailable).
void write_reply(caf::actor_system& system, ReplyLink& link, uint64_t id,
                 const caf::type_erased_tuple& reply) {
  std::vector<char> payload;
  Status failed;
  if (!serialize(system, reply, payload)) {
    failed = errors::Internal("the reply to a call could not be serialised");
  } else if (payload.size() > link.max_bytes) {
    failed = errors::InvalidArgument(
        "the reply to a call has {} bytes, over the limit of {} (max_message_bytes)",
        payload.size(), link.max_bytes);
  }
  if (!failed.ok()) {
    payload.clear();
    caf::message error = caf::make_message(to_caf_error(failed));
    serialize(system, error.content(), payload);
  }
  CallHead head{kReplyMagic, kVersion, 0, 0, 0, id, payload.size()};
  std::vector<iovec> parts{{&head, sizeof head}, {payload.data(), payload.size()}};
  std::lock_guard lock(link.mutex);
  if (link.open && !send_all(link.fd, link.sealer.get(), parts, sizeof head + payload.size())) {
    shutdown(link.fd, SHUT_RDWR);
  }
}

// A call written on a connection, waiting for its reply.
struct PendingCall {
  caf::strong_actor_ptr requester;
  caf::message_id request_id;
  caf::strong_actor_ptr callee;  // the sender of the reply the requester sees
  std::string device;
  int fd;  // the socket it went on

  // Hands `content` to the requester as the callee's answer (running it on `here` if idle).
  void answer(caf::message content, caf::execution_unit* here) {
    requester->enqueue(
        caf::make_mailbox_element(callee, request_id.response_id(), {}, std::move(content)), here);
  }
};

}  // namespace

struct TensorChannel::UnfinishedWrite {
  std::vector<Frame> frames;
  int fd;
  size_t written;  // bytes of the batch already on the socket
};

// The socket of a connection is closed by its reply thread, once a read on it fails; other
// threads shut it down, which ends that read. So a socket number is not reused while any thread
// of the channel may still use it.
struct TensorChannel::Connection {
  std::string endpoint;
  std::atomic<int> fd{-1};
  std::chrono::steady_clock::time_point retry_at{};  // no connecting before (after a failure)
  // Guarded by the channel's mutex:
  std::deque<Frame> queue;
  bool writing = false;         // a thread writes (or connects) on the socket
  bool connect_wanted = false;  // a call found no connection: the writer thread makes one
  int closers = 0;              // reply threads waiting for `writing` to end
  std::map<uint64_t, PendingCall> calls;
  // A batch a sending thread began and the socket would not take whole without blocking: the
  // writer thread finishes it (`writing` stays set meanwhile).
  std::optional<UnfinishedWrite> unfinished;
  std::vector<std::thread> reply_threads;  // one per socket the connection had
  std::unique_ptr<SharedRing> ring;        // the writer thread's, if the peer took it
  std::unique_ptr<Sealer> sealer;          // with TLS: seals what the socket's writer writes
  std::condition_variable wake;
  std::thread writer;
};

TensorChannel::TensorChannel(caf::actor_system& system, Options options)
    : system_(system), options_(options) {}

StatusOr<std::shared_ptr<TensorChannel>> TensorChannel::start(caf::actor_system& system,
                                                              const std::string& advertised_host,
                                                              const char* bind_address,
                                                              Options options) {
  std::shared_ptr<TensorChannel> channel(new TensorChannel(system, options));
  addrinfo hints{};
  hints.ai_family = bind_address == nullptr ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(options.port);
  if (getaddrinfo(bind_address, port_text.c_str(), &hints, &found) != 0 || found == nullptr) {
    return errors::Unavailable("tensor channel: cannot resolve {}",
                               bind_address ? bind_address : "::");
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && options.port != 0) {  // a fixed port is free again right after a restart
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  }
  if (fd >= 0 && found->ai_family == AF_INET6) {
    int zero = 0;  // both IPv4 and IPv6 on "every interface"
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  bool ok = fd >= 0 && bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 64) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0;
  freeaddrinfo(found);
  if (!ok) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return errors::Unavailable("tensor channel: cannot listen on {} port {}: {}",
                               bind_address ? bind_address : "every interface",
                               options.port == 0 ? "(any free one)" : std::to_string(options.port),
                               why);
  }
  int port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  channel->listen_fd_ = fd;
  channel->endpoint_ = fmt::format("{}:{}", advertised_host, port);
  channel->acceptor_ = std::thread([raw = channel.get()] { raw->accept_loop(); });
  return channel;
}

TensorChannel::~TensorChannel() {
  stop();
}

void TensorChannel::add_device(const std::string& device, const caf::actor& actor) {
  std::lock_guard lock(mutex_);
  devices_[device] = actor.address();
}

void TensorChannel::remove_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  devices_.erase(device);
}

caf::actor TensorChannel::find_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(device);
  return it != devices_.end() ? caf::actor_cast<caf::actor>(it->second) : caf::actor();
}

bool TensorChannel::takes(const Tensor& value) {
  return value.dtype() != DataType::kString;
}

void TensorChannel::send(const std::string& endpoint, const caf::actor& peer,
                         const std::string& device, int64_t step_id, const std::string& key,
                         Tensor value) {
  std::vector<Frame> frames;
  frames.push_back(Frame{peer, device, step_id, key, std::move(value)});
  send(endpoint, std::move(frames));
}

void TensorChannel::send(const std::string& endpoint, std::vector<Frame> frames) {
  if (frames.empty()) return;
  std::unique_lock lock(mutex_);
  if (stopping_) {
    lock.unlock();
    for (Frame& frame : frames)
      fall_back(frame);
    return;
  }
  Connection* c = connection_to(endpoint);
  if (!writes_here(c, frames)) {
    for (Frame& frame : frames)
      c->queue.push_back(std::move(frame));
    c->wake.notify_one();
    return;
  }
  // A small batch is written by this thread, as far as the socket takes it without blocking:
  // the writer thread would have to wake up first. Never blocking here matters: this may be a
  // channel thread running a device, and its peer's channel thread may be doing the same towards
  // it.
  c->writing = true;
  int fd = c->fd;
  lock.unlock();
  Written out = write_frames(c, fd, frames, {.wait = false});
  if (out.would_block) {
    lock.lock();
    if (!stopping_) {  // else the writer thread may have ended: the rest falls back below
      c->unfinished = UnfinishedWrite{std::move(frames), fd, out.bytes};
      c->wake.notify_all();
      return;
    }
    lock.unlock();
  }
  finish_write(c, fd, frames, out.frames);
  lock.lock();
  end_write(c);
}

void TensorChannel::end_write(Connection* c) {
  c->writing = false;
  // The writer thread, for frames queued or a connection wanted meanwhile; a reply thread
  // waiting to close the socket.
  if (!c->queue.empty() || c->connect_wanted || c->closers > 0) c->wake.notify_all();
}

bool TensorChannel::writes_here(Connection* c, const std::vector<Frame>& frames) const {
  if (c->fd < 0 || c->writing || !c->queue.empty()) return false;
  // Small batches only, where the wake-up is most of the cost. Large tensors sent one by one
  // are better batched by the writer thread (one writev for up to kMaxBatchBytes), and those
  // for the ring wait for its slots.
  size_t bytes = 0;
  for (const Frame& frame : frames)
    bytes += static_cast<size_t>(frame.value.total_bytes());
  static_assert(kMinBytes <= kSharedMemoryMinBytes);
  return bytes < kMinBytes;
}

TensorChannel::Connection* TensorChannel::connection_to(const std::string& endpoint) {
  auto& connection = connections_[endpoint];
  if (connection == nullptr) {
    connection = std::make_unique<Connection>();
    connection->endpoint = endpoint;
    connection->writer = std::thread([this, c = connection.get()] { write_loop(c); });
  }
  return connection.get();
}

bool TensorChannel::call(const std::string& endpoint, const std::string& device,
                         const caf::strong_actor_ptr& callee, caf::mailbox_element& request) {
  if (stopping_ || device.size() > kMaxDeviceBytes) return false;
  std::unique_lock lock(mutex_);
  if (stopping_) return false;
  Connection* c = connection_to(endpoint);
  int fd = c->fd;
  if (fd < 0) {
    c->connect_wanted = true;
    c->wake.notify_one();
    return false;
  }
  // Never behind a write in progress (it may be a large tensor): the actor message is sooner.
  if (c->writing || !c->queue.empty()) return false;
  c->writing = true;
  uint64_t id = next_call_id_++;
  c->calls.emplace(id, PendingCall{request.sender, request.mid, callee, device, fd});
  Sealer* sealer = c->sealer.get();  // replaced only by a writer: this thread, now
  lock.unlock();
  // Serialised only once the call has the connection: a call that falls back costs nothing here.
  std::vector<char> payload;
  bool serialized =
      serialize(system_, request.content(), payload) && payload.size() <= options_.max_bytes;
  bool written = false;
  if (serialized) {
    CallHead head{kCallMagic, kVersion,      0, static_cast<uint32_t>(device.size()), 0,
                  id,         payload.size()};
    written = send_all(fd, sealer,
                       {{&head, sizeof head},
                        {const_cast<char*>(device.data()), device.size()},
                        {payload.data(), payload.size()}},
                       sizeof head + device.size() + payload.size());
  }
  lock.lock();
  end_write(c);
  if (written) {
    ++counters_.calls_sent;
    return true;
  }
  // Not written whole, so not run there. Unless the reply thread answered it already (the
  // connection ended), the caller sends it as an actor message.
  bool waiting = c->calls.erase(id) == 1;
  if (serialized && c->fd == fd) shutdown(c->fd.exchange(-1), SHUT_RDWR);
  return !waiting;
}

bool TensorChannel::gone(int fd) const {
  if (stopping_) return true;
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

TensorChannel::Written TensorChannel::write_frames(Connection* c, int fd,
                                                   const std::vector<Frame>& frames,
                                                   WriteMode mode) {
  std::vector<FrameHead> heads;
  std::vector<std::vector<int64_t>> dims;
  heads.reserve(frames.size());
  dims.reserve(frames.size());
  std::vector<iovec> parts;     // the batch's bytes from `begin` on, not yet written
  std::vector<size_t> ends;     // where each frame in them ends, in bytes of the batch
  size_t begin = 0, total = 0;  // bytes of the batch before `parts`, and to their end
  Written out;
  auto add = [&](const void* data, size_t bytes) {
    parts.push_back({const_cast<void*>(data), bytes});
    total += bytes;
  };
  auto write_parts = [&] {  // whether all went out
    // Leaves out the bytes an earlier write of this batch put on the socket.
    std::vector<iovec> rest;
    size_t at = begin;
    for (const iovec& part : parts) {
      size_t end = at + part.iov_len;
      if (end > mode.skip) {
        size_t cut = at < mode.skip ? mode.skip - at : 0;
        rest.push_back({static_cast<char*>(part.iov_base) + cut, part.iov_len - cut});
      }
      at = end;
    }
    size_t from = std::max(begin, mode.skip);
    size_t wanted = total > from ? total - from : 0;
    // Sealed, the batch's frames count as written once sealed: a sealer that would block keeps
    // the rest of their records, and the writer thread sends them first (see Sealer::write).
    auto sent = send_parts(fd, c->sealer.get(), rest, mode.wait ? 0 : MSG_DONTWAIT);
    size_t written = sent.bytes;
    out.would_block = sent.would_block;
    out.bytes = from + written;
    out.frames +=
        static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), out.bytes) - ends.begin());
    parts.clear();
    ends.clear();
    begin = total;
    return written == wanted && !sent.would_block;
  };
  for (const Frame& frame : frames) {
    const auto& shape = frame.value.shape();
    heads.push_back({kMagic, kVersion, static_cast<uint8_t>(frame.value.dtype()),
                     static_cast<uint8_t>(shape.rank()), frame.step_id,
                     static_cast<uint32_t>(frame.key.size()),
                     static_cast<uint32_t>(frame.device.size()),
                     static_cast<uint64_t>(frame.value.total_bytes())});
    dims.emplace_back(shape.dims().begin(), shape.dims().end());
    add(&heads.back(), sizeof(FrameHead));
    add(dims.back().data(), dims.back().size() * sizeof(int64_t));
    add(frame.key.data(), frame.key.size());
    add(frame.device.data(), frame.device.size());
    auto bytes = static_cast<size_t>(frame.value.total_bytes());
    if (c->ring != nullptr && bytes >= kSharedMemoryMinBytes) {
      // The head goes first: the reader then waits for the data in the ring. (Only the writer
      // thread writes such frames: see writes_here.)
      if (!write_parts() ||
          !c->ring->write(frame.value.raw_data(), bytes, [&] { return gone(fd); })) {
        return out;
      }
      ++out.frames;
      ++counters_.shared_memory_frames;
      continue;
    }
    add(frame.value.raw_data(), bytes);
    ends.push_back(total);
  }
  write_parts();
  return out;
}

void TensorChannel::finish_write(Connection* c, int fd, std::vector<Frame>& frames, size_t sent) {
  // A frame that did not go out whole is dropped by the receiver, and the connection with it.
  if (fd >= 0 && sent < frames.size()) close_if_current(c, fd);
  counters_.frames_sent += sent;
  for (size_t i = sent; i < frames.size(); ++i)
    fall_back(frames[i]);
}

void TensorChannel::close_if_current(Connection* c, int fd) {
  std::lock_guard lock(mutex_);
  if (c->fd == fd) shutdown(c->fd.exchange(-1), SHUT_RDWR);  // its reply thread closes it
}

void TensorChannel::fall_back(Frame& out) {
  ++counters_.fallbacks;
  caf::anon_send(out.peer, recv_tensor_atom::value, out.step_id, std::move(out.key),
                 std::move(out.value));
}

void TensorChannel::write_loop(Connection* c) {
  for (;;) {
    std::vector<Frame> frames;
    WriteMode mode;
    int fd = -1;
    bool resumed = false;  // finishing a batch a sending thread began
    {
      std::unique_lock lock(mutex_);
      c->wake.wait(lock, [&] {
        return stopping_ || c->unfinished ||
               (!c->writing && (!c->queue.empty() || c->connect_wanted));
      });
      if (stopping_) break;
      if (c->unfinished) {  // `writing` is set for this thread already
        frames = std::move(c->unfinished->frames);
        fd = c->unfinished->fd;
        mode.skip = c->unfinished->written;
        c->unfinished.reset();
        resumed = true;
      } else {
        c->connect_wanted = false;
        c->writing = true;  // calls wait for the connection, and for these frames
        // Whatever queued up goes in one writev: small tensors of a step share the syscalls.
        size_t bytes = 0;
        while (
            !c->queue.empty() && frames.size() < kMaxBatchFrames &&
            (frames.empty() ||
             bytes + static_cast<size_t>(c->queue.front().value.total_bytes()) <= kMaxBatchBytes)) {
          bytes += static_cast<size_t>(c->queue.front().value.total_bytes());
          frames.push_back(std::move(c->queue.front()));
          c->queue.pop_front();
        }
      }
    }
    if (!resumed) {
      if (c->fd < 0 && std::chrono::steady_clock::now() >= c->retry_at && !connect(c)) {
        std::cerr << "troupe: tensor channel: cannot connect to " + c->endpoint +
                         "; tensors and calls for it go as actor messages for now\n";
        c->retry_at = std::chrono::steady_clock::now() + kRetryAfter;
      }
      fd = c->fd;
    }
    if (!frames.empty()) {
      finish_write(c, fd, frames, fd < 0 ? 0 : write_frames(c, fd, frames, mode).frames);
    }
    std::lock_guard lock(mutex_);
    end_write(c);
  }
  std::lock_guard lock(mutex_);
  c->queue.clear();  // dropped, as on a connection that ends
  if (c->unfinished) {
    c->unfinished.reset();
    end_write(c);
  }
}

bool TensorChannel::connect(Connection* c) {
  c->ring = nullptr;
  c->sealer = nullptr;
  int fd = connect_to(c->endpoint);
  if (fd < 0) return false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) shutdown(fd, SHUT_RDWR);  // stop() may have looked already
    c->fd = fd;                              // where stop() finds it during the hello
  }
  std::unique_ptr<Opener> opener;
  bool ready = true;
  if (options_.tls != nullptr) {
    auto keys =
        options_.tls->handshake(fd, ChannelTls::Role::kConnector, kHandshakeTimeout, c->endpoint);
    if (keys.ok()) {
      c->sealer = std::make_unique<Sealer>(keys->send);
      opener = std::make_unique<Opener>(fd, keys->receive);
      ++counters_.sealed_connections;
    } else {
      ++counters_.handshakes_refused;
      refused_handshakes.note(keys.status().message());
      ready = false;
    }
  }
  // With TLS the hello is always said: its answer shows the peer accepted this certificate.
  if (ready && (options_.shared_memory || opener != nullptr)) {
    ready = say_hello(c, fd, options_.shared_memory, opener.get());
  }
  std::lock_guard lock(mutex_);
  if (!ready || stopping_) {  // stopping: stop() may have collected the threads to join
    c->fd = -1;
    c->sealer = nullptr;
    ::close(fd);
    return false;
  }
  // From here on the socket is closed by its reply thread only.
  c->reply_threads.emplace_back([this, c, fd, opener = std::move(opener)]() mutable {
    reply_loop(c, fd, std::move(opener));
  });
  return true;
}

bool TensorChannel::say_hello(Connection* c, int fd, bool offer_ring, Opener* opener) {
  std::unique_ptr<SharedRing> ring;
  if (offer_ring) {
    auto made = SharedRing::create();
    if (made.ok()) {
      ring = std::move(*made);
    } else {
      std::cerr << "troupe: tensor channel: " + made.status().message() + "; tensors for " +
                       c->endpoint + " go on the socket\n";
      if (opener == nullptr) return true;  // plain: no hello to say
    }
  }
  std::string name = ring != nullptr ? ring->name() : "";
  HelloHead hello{kHelloMagic,
                  kVersion,
                  static_cast<uint16_t>(name.size()),
                  SharedRing::kSlots,
                  SharedRing::kSlotBytes,
                  ring != nullptr ? ring->nonce() : SharedRing::Nonce{}};
  char answer = 0;
  bool answered = false;
  if (send_all(fd, c->sealer.get(),
               {{&hello, sizeof hello}, {const_cast<char*>(name.data()), name.size()}},
               sizeof hello + name.size())) {
    // The answer within kHelloTimeout (a receive timeout: a sealed record may come in pieces).
    timeval limit{std::chrono::seconds(kHelloTimeout).count(), 0}, none{0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    answered = opener != nullptr ? opener->read(&answer, 1) : recv(fd, &answer, 1, 0) == 1;
    answered = answered && (answer == kRingTaken || answer == kRingDeclined);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
  }
  if (ring != nullptr) ring->unlink();  // opened by the peer by now, or never
  if (answered && answer == kRingTaken && ring != nullptr) c->ring = std::move(ring);
  return answered;
}

void TensorChannel::reply_loop(Connection* c, int fd, std::unique_ptr<Opener> opener) {
  FrameReader reader(fd, opener.get());
  InlineUnit::Scope scope;  // a requester that was idle runs on this thread
  InlineUnit* here = InlineUnit::of(system_);
  std::string why = "it closed";
  for (;;) {
    CallHead head{};
    if (!reader.read(&head, sizeof head)) break;
    if (head.magic != kReplyMagic || head.version != kVersion ||
        head.payload_bytes > options_.max_bytes) {
      why = head.magic != kReplyMagic ? "it sent something other than a reply"
                                      : fmt::format("a reply of {} bytes (version {}) was refused",
                                                    head.payload_bytes, head.version);
      ++counters_.refused;
      break;
    }
    std::vector<char> payload(head.payload_bytes);
    if (!reader.read(payload.data(), payload.size())) break;
    std::optional<PendingCall> call;
    {
      std::lock_guard lock(mutex_);
      if (auto it = c->calls.find(head.call_id); it != c->calls.end() && it->second.fd == fd) {
        call = std::move(it->second);
        c->calls.erase(it);
      }
    }
    if (!call) continue;  // answered already: the connection ended under a writer
    auto reply = deserialize(system_, payload);
    caf::message content = reply ? std::move(*reply)
                                 : caf::make_message(to_caf_error(errors::Internal(
                                       "the reply of {} to a call could not be read: {}",
                                       call->device, system_.render(reply.error()))));
    ++counters_.calls_answered;
    call->answer(std::move(content), here);
  }
  std::vector<PendingCall> orphans;
  {
    std::unique_lock lock(mutex_);
    for (auto it = c->calls.begin(); it != c->calls.end();) {  // none of them is answered now
      if (it->second.fd == fd) {
        orphans.push_back(std::move(it->second));
        it = c->calls.erase(it);
      } else {
        ++it;
      }
    }
    if (c->fd == fd) c->fd = -1;
    ++c->closers;
    c->wake.wait(lock, [&] { return !c->writing; });  // a writer may hold the socket still
    --c->closers;
    ::close(fd);
  }
  for (PendingCall& call : orphans) {
    call.answer(caf::make_message(to_caf_error(errors::Unavailable(
                    "device {}: the tensor channel connection to {} ended before it answered ({})",
                    call.device, c->endpoint, why))),
                here);
  }
}

void TensorChannel::accept_loop() {
  while (!stopping_) {
    join_finished_readers();
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    set_no_delay(fd);
    std::lock_guard lock(mutex_);
    if (stopping_ || (options_.tls != nullptr && handshaking_ >= kMaxHandshaking)) {
      // Too many strangers at once: this one is closed unread (members retry).
      if (!stopping_) ++counters_.handshakes_refused;
      ::close(fd);
      continue;
    }
    reader_fds_.push_back(fd);
    Reader& reader = readers_.emplace_back();
    if (options_.tls != nullptr) ++handshaking_;
    reader.thread = std::thread([this, fd, done = &reader.done] { read_loop(fd, done); });
  }
}

void TensorChannel::join_finished_readers() {
  std::list<Reader> finished;
  {
    std::lock_guard lock(mutex_);
    for (auto it = readers_.begin(); it != readers_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), readers_, it);
      it = next;
    }
  }
  for (Reader& reader : finished)
    reader.thread.join();
}

void TensorChannel::read_loop(int fd, std::atomic<bool>* done) {
  // Junk is logged once per connection, however many frames it sends.
  bool logged = false;
  auto refuse = [&](const std::string& why) {
    ++counters_.refused;
    if (stopping_ || logged) return;
    logged = true;
    std::cerr << "troupe: tensor channel: refused a frame: " + why +
                     " (later refusals on this connection are not logged)\n";
  };
  auto replies = std::make_shared<ReplyLink>(fd, options_.max_bytes);
  std::unique_ptr<Opener> opener;
  bool admitted = true;
  if (options_.tls != nullptr) {
    auto keys =
        options_.tls->handshake(fd, ChannelTls::Role::kAcceptor, kHandshakeTimeout, peer_text(fd));
    {
      std::lock_guard lock(mutex_);
      --handshaking_;
    }
    if (keys.ok()) {
      replies->sealer = std::make_unique<Sealer>(keys->send);
      opener = std::make_unique<Opener>(fd, keys->receive);
      ++counters_.sealed_connections;
    } else {
      admitted = false;
      ++counters_.handshakes_refused;
      if (!stopping_) refused_handshakes.note(keys.status().message());
    }
  }
  FrameReader reader(fd, opener.get());
  std::unique_ptr<SharedRing> ring;  // the writer's, if it offered one and it opened here
  InlineUnit::Scope scope;  // a device that was idle runs the call or tensor on this thread
  InlineUnit* here = InlineUnit::of(system_);
  caf::strong_actor_ptr responder;  // the sender of the calls read here, made at the first
  for (bool first = true; admitted; first = false) {
    FrameHead head{};
    if (!reader.read(&head, sizeof head)) break;
    if (head.magic == kCallMagic) {
      CallHead call;
      std::memcpy(&call, &head, sizeof call);
      uint64_t id = call.call_id & caf::message_id::request_id_mask;
      if (call.version != kVersion || call.device_bytes > kMaxDeviceBytes ||
          call.payload_bytes > options_.max_bytes || id == 0) {
        refuse(
            fmt::format("a call (version {}, {} bytes of device name, {} of payload, id {}); "
                        "closing the connection",
                        call.version, call.device_bytes, call.payload_bytes, call.call_id));
        break;
      }
      std::string device(call.device_bytes, '\0');
      std::vector<char> payload(call.payload_bytes);
      if (!reader.read(device.data(), device.size()) ||
          !reader.read(payload.data(), payload.size())) {
        break;
      }
      if (responder == nullptr) {
        responder = CallResponder::make(
            system_,
            [system = &system_, replies](uint64_t id, const caf::type_erased_tuple& reply) {
              write_reply(*system, *replies, id, reply);
            });
      }
      serve_call(id, device, payload, responder, here);
      continue;
    }
    if (first && head.magic == kHelloMagic) {
      HelloHead hello;
      std::memcpy(&hello, &head, sizeof hello);
      std::string name(hello.name_bytes, '\0');
      if (!reader.read(name.data(), name.size())) break;
      if (options_.shared_memory && hello.version == kVersion && !name.empty()) {
        // Not there (another host or container): the data comes on the socket.
        if (auto opened = SharedRing::open(name, hello.nonce, hello.slots, hello.slot_bytes);
            opened.ok()) {
          ring = std::move(*opened);
        }
      }
      char answer = ring != nullptr ? kRingTaken : kRingDeclined;
      std::lock_guard lock(replies->mutex);  // no reply can be written before it anyway
      if (!send_all(fd, replies->sealer.get(), {{&answer, 1}}, 1)) break;
      continue;
    }
    if (std::string why = check_head(head, options_.max_bytes); !why.empty()) {
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
    caf::actor receiver = find_device(device);
    Tensor value(dtype, *shape);
    bool read = ring != nullptr && head.data_bytes >= kSharedMemoryMinBytes
                    ? ring->read(value.raw_data(), head.data_bytes, [&] { return gone(fd); })
                    : reader.read(value.raw_data(), head.data_bytes);
    if (!read) break;
    if (receiver == nullptr) {
      refuse(fmt::format("no device {} here (tensor '{}')", device, key));
      continue;
    }
    ++counters_.frames_received;
    caf::actor_cast<caf::abstract_actor*>(receiver)->enqueue(
        caf::make_mailbox_element(nullptr, caf::make_message_id(), {}, recv_tensor_atom::value,
                                  head.step_id, std::move(key), std::move(value)),
        here);
  }
  {
    std::lock_guard lock(replies->mutex);  // no reply is being written after this
    replies->open = false;
  }
  if (responder != nullptr) CallResponder::of(responder).close();
  std::lock_guard lock(mutex_);
  std::erase(reader_fds_, fd);
  ::close(fd);
  *done = true;
}

void TensorChannel::serve_call(uint64_t id, const std::string& device,
                               const std::vector<char>& payload,
                               const caf::strong_actor_ptr& responder, caf::execution_unit* here) {
  auto refuse = [&](const Status& why) {
    caf::message error = caf::make_message(to_caf_error(why));
    CallResponder::of(responder).reply(id, error.content());
  };
  caf::actor receiver = find_device(device);
  if (receiver == nullptr) {
    return refuse(
        errors::NotFound("no device {} in the process of tensor channel {}", device, endpoint_));
  }
  auto content = deserialize(system_, payload);
  if (!content) {
    return refuse(errors::InvalidArgument("a call for {} could not be read: {}", device,
                                          system_.render(content.error())));
  }
  ++counters_.calls_served;
  caf::actor_cast<caf::abstract_actor*>(receiver)->enqueue(
      caf::make_mailbox_element(responder, caf::make_message_id(id), {}, std::move(*content)),
      here);
}

void TensorChannel::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    if (stopping_.exchange(true)) return;
    for (auto& [endpoint, c] : connections_) {
      c->wake.notify_all();
      if (int fd = c->fd; fd >= 0) shutdown(fd, SHUT_RDWR);  // unblocks a write in progress
    }
    for (int fd : reader_fds_)
      shutdown(fd, SHUT_RDWR);
  }
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  {
    std::lock_guard lock(mutex_);
    for (auto& [endpoint, c] : connections_) {
      threads.push_back(std::move(c->writer));
      for (auto& reply_thread : c->reply_threads)
        threads.push_back(std::move(reply_thread));  // each closes its socket
      c->reply_threads.clear();
    }
    for (Reader& reader : readers_)
      threads.push_back(std::move(reader.thread));
    readers_.clear();
  }
  for (auto& t : threads)
    t.join();
}

}  // namespace troupe
