// The tensor channel: frames on plain TCP sockets, one writer thread per peer process, one
// reader thread per accepted connection.
//
// A frame (little-endian): magic "TRPT", version, dtype, rank, step id, key length, device
// length, data length (32 bytes), then the dims (int64 each), the rendezvous key, the
// destination device's name, and the tensor's bytes.
#include "actors/tensor_channel.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>

#include <fmt/core.h>
#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/messages.hpp"  // how CAF inspects a Tensor
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

bool read_exactly(int fd, void* data, size_t bytes) {
  auto* at = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = ::read(fd, at, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

// Writes all of `parts` (modified on the way).
bool write_all(int fd, std::vector<iovec>& parts) {
  size_t first = 0;
  while (first < parts.size()) {
    int count = static_cast<int>(std::min<size_t>(parts.size() - first, IOV_MAX));
    ssize_t put = ::writev(fd, parts.data() + first, count);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    auto left = static_cast<size_t>(put);
    while (first < parts.size() && left >= parts[first].iov_len) {
      left -= parts[first].iov_len;
      ++first;
    }
    if (left > 0) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return true;
}

void set_no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A connected socket to "host:port", or -1 (after kConnectTimeout at most).
int connect_to(const std::string& endpoint) {
  auto host_port = parse_host_port(endpoint);
  if (!host_port.ok()) return -1;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string service = std::to_string(host_port->second);
  if (getaddrinfo(host_port->first.c_str(), service.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t length = sizeof error;
      rc = poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kConnectTimeout).count())) == 1 &&
                   getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
               ? 0
               : -1;
    }
    if (rc != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd >= 0) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    set_no_delay(fd);
  }
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

}  // namespace

struct TensorChannel::Outgoing {
  caf::actor peer;
  std::string device;
  int64_t step_id = 0;
  std::string key;
  Tensor value;
};

struct TensorChannel::Connection {
  std::string endpoint;
  std::atomic<int> fd{-1};
  std::chrono::steady_clock::time_point retry_at{};  // no connecting before (after a failure)
  std::deque<Outgoing> queue;                        // guarded by the channel's mutex
  std::condition_variable wake;
  std::thread writer;
};

TensorChannel::TensorChannel(caf::actor_system& system, uint64_t max_bytes)
    : system_(system), max_bytes_(max_bytes) {}

StatusOr<std::shared_ptr<TensorChannel>> TensorChannel::start(caf::actor_system& system,
                                                              const std::string& advertised_host,
                                                              const char* bind_address,
                                                              uint64_t max_bytes) {
  std::shared_ptr<TensorChannel> channel(new TensorChannel(system, max_bytes));
  addrinfo hints{};
  hints.ai_family = bind_address == nullptr ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(bind_address, "0", &hints, &found) != 0 || found == nullptr) {
    return errors::Unavailable("tensor channel: cannot resolve {}",
                               bind_address ? bind_address : "::");
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
    return errors::Unavailable("tensor channel: cannot listen on {}: {}",
                               bind_address ? bind_address : "every interface", why);
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

bool TensorChannel::takes(const Tensor& value) {
  return value.dtype() != DataType::kString && value.total_bytes() >= kMinBytes;
}

void TensorChannel::send(const std::string& endpoint, const caf::actor& peer,
                         const std::string& device, int64_t step_id, const std::string& key,
                         Tensor value) {
  Outgoing out{peer, device, step_id, key, std::move(value)};
  std::lock_guard lock(mutex_);
  if (stopping_) {
    fall_back(out);
    return;
  }
  auto& connection = connections_[endpoint];
  if (connection == nullptr) {
    connection = std::make_unique<Connection>();
    connection->endpoint = endpoint;
    connection->writer = std::thread([this, c = connection.get()] { write_loop(c); });
  }
  connection->queue.push_back(std::move(out));
  connection->wake.notify_one();
}

void TensorChannel::fall_back(Outgoing& out) {
  ++counters_.fallbacks;
  caf::anon_send(out.peer, recv_tensor_atom::value, out.step_id, std::move(out.key),
                 std::move(out.value));
}

void TensorChannel::write_loop(Connection* c) {
  for (;;) {
    Outgoing out;
    {
      std::unique_lock lock(mutex_);
      c->wake.wait(lock, [&] { return stopping_ || !c->queue.empty(); });
      if (stopping_) break;
      out = std::move(c->queue.front());
      c->queue.pop_front();
    }
    if (c->fd < 0 && std::chrono::steady_clock::now() >= c->retry_at) {
      int fd = connect_to(c->endpoint);
      {
        std::lock_guard lock(mutex_);
        if (stopping_ && fd >= 0) shutdown(fd, SHUT_RDWR);  // stop() may have looked already
        c->fd = fd;
      }
      if (fd < 0) {
        std::cerr << "troupe: tensor channel: cannot connect to " + c->endpoint +
                         "; tensors for it go as actor messages for now\n";
        c->retry_at = std::chrono::steady_clock::now() + kRetryAfter;
      }
    }
    if (c->fd < 0) {
      fall_back(out);
      continue;
    }
    const auto& shape = out.value.shape();
    FrameHead head{kMagic,
                   kVersion,
                   static_cast<uint8_t>(out.value.dtype()),
                   static_cast<uint8_t>(shape.rank()),
                   out.step_id,
                   static_cast<uint32_t>(out.key.size()),
                   static_cast<uint32_t>(out.device.size()),
                   static_cast<uint64_t>(out.value.total_bytes())};
    std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
    std::vector<iovec> parts = {
        {&head, sizeof head},
        {dims.data(), dims.size() * sizeof(int64_t)},
        {out.key.data(), out.key.size()},
        {out.device.data(), out.device.size()},
        {out.value.raw_data(), static_cast<size_t>(out.value.total_bytes())}};
    if (write_all(c->fd, parts)) {
      ++counters_.frames_sent;
      continue;
    }
    // The frame did not go out whole: the receiver drops the partial one; send it the old way.
    {
      std::lock_guard lock(mutex_);  // stop() shuts down the socket it sees under the lock
      ::close(c->fd.exchange(-1));
    }
    fall_back(out);
  }
  std::lock_guard lock(mutex_);
  c->queue.clear();
}

void TensorChannel::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    set_no_delay(fd);
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      break;
    }
    reader_fds_.push_back(fd);
    readers_.emplace_back([this, fd] { read_loop(fd); });
  }
}

void TensorChannel::read_loop(int fd) {
  auto refuse = [&](const std::string& why) {
    ++counters_.refused;
    if (!stopping_) std::cerr << "troupe: tensor channel: refused a frame: " + why + "\n";
  };
  for (;;) {
    FrameHead head{};
    if (!read_exactly(fd, &head, sizeof head)) break;
    if (std::string why = check_head(head, max_bytes_); !why.empty()) {
      refuse(why + "; closing the connection");
      break;
    }
    std::vector<int64_t> dims(head.rank);
    std::string key(head.key_bytes, '\0'), device(head.device_bytes, '\0');
    if (!read_exactly(fd, dims.data(), dims.size() * sizeof(int64_t)) ||
        !read_exactly(fd, key.data(), key.size()) ||
        !read_exactly(fd, device.data(), device.size())) {
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
    caf::actor receiver;
    {
      std::lock_guard lock(mutex_);
      if (auto it = devices_.find(device); it != devices_.end()) {
        receiver = caf::actor_cast<caf::actor>(it->second);
      }
    }
    Tensor value(dtype, *shape);
    if (!read_exactly(fd, value.raw_data(), head.data_bytes)) break;
    if (receiver == nullptr) {
      refuse(fmt::format("no device {} here (tensor '{}')", device, key));
      continue;
    }
    ++counters_.frames_received;
    caf::anon_send(receiver, recv_tensor_atom::value, head.step_id, std::move(key),
                   std::move(value));
  }
  std::lock_guard lock(mutex_);
  std::erase(reader_fds_, fd);
  ::close(fd);
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
    for (auto& [endpoint, c] : connections_)
      threads.push_back(std::move(c->writer));
    for (auto& reader : readers_)
      threads.push_back(std::move(reader));
    readers_.clear();
  }
  for (auto& t : threads)
    t.join();
  std::lock_guard lock(mutex_);
  for (auto& [endpoint, c] : connections_) {
    if (int fd = c->fd.exchange(-1); fd >= 0) ::close(fd);
  }
}

}  // namespace troupe
