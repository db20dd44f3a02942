// The tensor channel: listening, accepting, the connections by peer, and stopping
// (tensor_channel.hpp).
#include "troupe/actors/transport/tensor_channel.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>

#include <fmt/core.h>
#include <caf/all.hpp>

#include "troupe/actors/transport/call_proxy.hpp"
#include "troupe/actors/transport/channel_reader.hpp"
#include "troupe/actors/transport/connection.hpp"
#include "troupe/actors/transport/responder.hpp"
#include "troupe/actors/transport/stream_io.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"

namespace troupe {
namespace {}  // namespace

TensorChannel::TensorChannel(caf::actor_system& system, Options options)
    : context_(system, std::move(options)) {}

StatusOr<std::shared_ptr<TensorChannel>> TensorChannel::start(caf::actor_system& system,
                                                              const std::string& advertised_host,
                                                              const char* bind_address,
                                                              Options options) {
  uint16_t wanted_port = options.port;
  std::shared_ptr<TensorChannel> channel(new TensorChannel(system, std::move(options)));
  addrinfo hints{};
  hints.ai_family = bind_address == nullptr ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string port_text = std::to_string(wanted_port);
  if (getaddrinfo(bind_address, port_text.c_str(), &hints, &found) != 0 || found == nullptr) {
    return errors::Unavailable("tensor channel: cannot resolve {}",
                               bind_address ? bind_address : "::");
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && wanted_port != 0) {  // a fixed port is free again right after a restart
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
                               wanted_port == 0 ? "(any free one)" : std::to_string(wanted_port),
                               why);
  }
  int port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  channel->listen_fd_ = fd;
  channel->context_.endpoint = fmt::format("{}:{}", advertised_host, port);
  channel->acceptor_ = std::thread([raw = channel.get()] { raw->accept_loop(); });
  return channel;
}

TensorChannel::~TensorChannel() {
  stop();
}

void TensorChannel::attach(const std::string& device, const caf::actor& actor) {
  context_.add_device(device, actor);
}

void TensorChannel::detach(const std::string& device) {
  context_.remove_device(device);
}

std::shared_ptr<Connection> TensorChannel::connection_to(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  if (context_.stopping) return nullptr;
  auto& connection = connections_[endpoint];
  if (connection != nullptr && connection->retired()) retired_.push_back(std::move(connection));
  if (connection == nullptr) connection = std::make_shared<Connection>(context_, endpoint);
  return connection;
}

size_t TensorChannel::connections() {
  std::lock_guard lock(mutex_);
  size_t open = 0;
  for (auto& [endpoint, connection] : connections_)
    open += connection->retired() ? 0 : 1;
  return open;
}

void TensorChannel::send(const std::string& endpoint, std::vector<Frame> frames) {
  if (frames.empty()) return;
  // A connection that retired meanwhile refuses them: a second one is new.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::shared_ptr<Connection> connection = connection_to(endpoint);
    if (connection == nullptr) break;
    if (connection->send(frames)) return;
  }
  for (Frame& frame : frames)
    context_.fall_back(frame);
}

caf::actor TensorChannel::runner(const std::string& address, const std::string& device,
                                 const caf::actor& callee) {
  if (!context_.options.calls || address.empty()) return callee;
  return CallProxy::make(context_.system, shared_from_this(), address, device, callee);
}

bool TensorChannel::call(const std::string& endpoint, const std::string& device,
                         const caf::strong_actor_ptr& callee, caf::mailbox_element& request) {
  if (context_.stopping || device.size() > frame::kMaxDeviceBytes) return false;
  std::shared_ptr<Connection> connection = connection_to(endpoint);
  return connection != nullptr && connection->call(device, callee, request);
}

void TensorChannel::accept_loop() {
  pthread_setname_np(pthread_self(), "troupe-accept");
  while (!context_.stopping) {
    join_finished();
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    set_no_delay(fd);
    std::string peer = peer_address(fd);
    std::lock_guard lock(mutex_);
    if (context_.stopping) {
      ::close(fd);
      continue;
    }
    make_room_for(peer);
    Reader& reader = readers_.emplace_back();
    reader.fd = fd;
    reader.peer = std::move(peer);
    reader.accepted = std::chrono::steady_clock::now();
    ++context_.pending;
    reader.thread = std::thread([this, &reader] {
      pthread_setname_np(pthread_self(), "troupe-read");
      serve_connection(context_, reader.fd, reader.pending,
                       [this, &reader](std::shared_ptr<AnswerLink> answers) {
                         std::lock_guard lock(mutex_);
                         reader.answers = std::move(answers);
                       });
      std::lock_guard lock(mutex_);  // stop() shuts down only the sockets still open
      ::close(reader.fd);
      reader.done = true;
    });
  }
}

void TensorChannel::make_room_for(const std::string& peer) {
  std::map<std::string, int> per_peer;
  int pending = 0;
  for (const Reader& reader : readers_) {
    if (reader.done || reader.dropped || !reader.pending.load()) continue;
    ++per_peer[reader.peer];
    ++pending;
  }
  // The oldest pending connection of the newcomer's address when that is full, else, when
  // the channel is full, of the addresses with the most (on a tie: the oldest of them).
  int most = 0;
  for (const auto& [address, count] : per_peer)
    most = std::max(most, count);
  std::function<bool(const std::string&)> chosen;
  if (per_peer[peer] >= context_.options.max_pending_per_peer) {
    chosen = [&](const std::string& address) { return address == peer; };
  } else if (pending >= context_.options.max_pending) {
    chosen = [&](const std::string& address) { return per_peer[address] == most; };
  } else {
    return;
  }
  for (;;) {
    Reader* oldest = nullptr;
    for (Reader& reader : readers_) {
      if (reader.done || reader.dropped || !reader.pending.load() || !chosen(reader.peer)) {
        continue;
      }
      if (oldest == nullptr || reader.accepted < oldest->accepted) oldest = &reader;
    }
    if (oldest == nullptr) return;
    // Claimed from its reader, unless its hello has just been read (then it stays).
    bool was_pending = true;
    if (!oldest->pending.compare_exchange_strong(was_pending, false)) continue;
    oldest->dropped = true;
    ::shutdown(oldest->fd, SHUT_RDWR);  // its reader ends, and the acceptor joins it
    ++context_.counters.pending_dropped;
    context_.dropped_pending.note(fmt::format(
        "tensor channel: shut down the oldest of {} connections from {} without a hello, to "
        "admit one from {} ({} pending; max_pending_connections is {}, "
        "max_pending_connections_per_peer {})",
        per_peer[oldest->peer], oldest->peer, peer, pending, context_.options.max_pending,
        context_.options.max_pending_per_peer));
    return;
  }
}

void TensorChannel::join_finished() {
  std::list<Reader> finished;
  std::vector<std::shared_ptr<Connection>> ended;
  {
    std::lock_guard lock(mutex_);
    for (auto it = readers_.begin(); it != readers_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), readers_, it);
      it = next;
    }
    ended = std::move(retired_);
    retired_.clear();
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->second->retired()) {
        ended.push_back(std::move(it->second));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Reader& reader : finished)
    reader.thread.join();
  for (auto& connection : ended)
    connection->join();
}

void TensorChannel::stop() {
  {
    std::lock_guard lock(mutex_);
    if (context_.stopping.exchange(true)) return;
    for (auto& [endpoint, connection] : connections_)
      connection->stop();
    for (Reader& reader : readers_) {
      if (reader.done) continue;
      // A sealed answer stream says goodbye first, unless an answer is being written (its
      // lock is taken): then the peer sees it cut, as when this process dies.
      if (reader.answers != nullptr) {
        std::unique_lock link(reader.answers->mutex, std::try_to_lock);
        if (link && reader.answers->open && reader.answers->sealer != nullptr) {
          reader.answers->sealer->close(reader.fd);
        }
      }
      shutdown(reader.fd, SHUT_RDWR);
    }
    shutdown(listen_fd_, SHUT_RDWR);  // the acceptor's poll returns now
  }
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  std::map<std::string, std::shared_ptr<Connection>> connections;
  std::vector<std::shared_ptr<Connection>> retired;
  std::list<Reader> readers;
  {
    std::lock_guard lock(mutex_);
    connections = std::move(connections_);
    retired = std::move(retired_);
    readers.splice(readers.end(), readers_);
  }
  for (auto& [endpoint, connection] : connections)
    connection->join();
  for (auto& connection : retired)
    connection->join();
  for (Reader& reader : readers)
    reader.thread.join();
}

}  // namespace troupe
