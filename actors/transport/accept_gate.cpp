// The accept gate: accept() for the process, pending connections and their watchdog thread.
#include "troupe/actors/transport/accept_gate.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "troupe/actors/transport/caf_call_hooks.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"
#include "troupe/actors/transport/throttled_log.hpp"

namespace troupe {

Status AdmissionOptions::validate() const {
  if (max_pending < 1) {
    return errors::InvalidArgument("max_pending is {}: expected at least 1", max_pending);
  }
  if (max_pending_per_peer < 1) {
    return errors::InvalidArgument("max_pending_per_peer is {}: expected at least 1",
                                   max_pending_per_peer);
  }
  if (handshake_timeout.count() < 1) {
    return errors::InvalidArgument("handshake_timeout is {} ms: expected at least 1 ms",
                                   handshake_timeout.count());
  }
  return Status::OK();
}

AdmissionOptions AdmissionOptions::for_cluster(int tasks) const {
  AdmissionOptions raised = *this;
  raised.max_pending_per_peer = std::max(max_pending_per_peer, 2 * tasks);
  raised.max_pending = std::max(max_pending, 2 * tasks + max_pending_per_peer);
  return raised;
}

namespace accept_gate {
namespace {

using Clock = std::chrono::steady_clock;

// The first frame a plaintext peer sends is checked before CAF reads it whole: CAF 0.17
// allocates (and zero-fills) what a BASP header's payload length claims, up to 4 GiB. A BASP
// header is 32 bytes: operation, two bytes of padding and flags (one byte each), then the
// payload length as a big-endian uint32, then three uint64 fields.
constexpr size_t kBaspHeaderBytes = 32;
constexpr size_t kPayloadLengthOffset = 4;
// Descriptors below this number can have their first frame checked (the flags are one array).
constexpr int kMaxCheckedDescriptor = 1 << 16;
// Set for a pending plaintext connection until its first frame header has been read.
std::atomic<bool> first_frame_unchecked[kMaxCheckedDescriptor];

constexpr auto kScanInterval = std::chrono::milliseconds(100);

// The first frame header of a pending plaintext connection, as far as CAF has read it.
struct FirstFrame {
  ino_t inode = 0;
  uint8_t header[kBaspHeaderBytes] = {};
  size_t have = 0;
};

// A plaintext connection whose first frame header has not been read is proven by no count of
// bytes; one whose descriptor is too high to be checked is proven by a header's worth.
constexpr uint64_t kUnknownFrameBytes = ~uint64_t{0};

// A connection accepted on a watched port that has not proven itself yet. The gate holds a
// duplicate of its descriptor, so that shutting it down never hits a socket that took the
// same number after CAF closed this one.
struct Pending {
  int own_fd = -1;  // the gate's duplicate
  ino_t inode = 0;  // of the socket, to tell when CAF's descriptor is closed or reused
  std::string peer;
  bool tls = false;
  uint64_t proof_bytes = 0;  // plaintext: its first frame, header and payload
  Clock::time_point accepted;
};

// A watched port: whether it speaks TLS, and the size of the cluster its task belongs to.
struct WatchedPort {
  bool tls = false;
  int cluster_tasks = 0;
};

class Gate {
 public:
  static Gate& instance() {
    static auto* gate = new Gate();  // never destroyed: accept() may run until exit
    return *gate;
  }

  int accept(int listen_fd, sockaddr* addr, socklen_t* addr_len) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_len, 0);
    if (fd < 0) {
      if ((errno == EMFILE || errno == ENFILE) && watched(listen_fd)) {
        drop_one_with_spare(listen_fd);
        errno = EAGAIN;  // CAF tries again when the next connection arrives
      }
      return fd;
    }
    if (addr != nullptr && addr_len != nullptr) {
      std::memcpy(addr, &peer, std::min<socklen_t>(*addr_len, peer_len));
      *addr_len = peer_len;
    }
    bool tls = false;
    if (!watched(listen_fd, &tls)) return fd;
    return admit(fd, address_text(peer), tls);
  }

  void configure(const AdmissionOptions& options) {
    std::lock_guard lock(mutex_);
    options_ = options;
  }

  void watch(uint16_t port, bool tls, int cluster_tasks) {
    std::lock_guard lock(mutex_);
    ports_[port] = WatchedPort{tls, cluster_tasks};
    if (spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!watchdog_started_) {
      watchdog_started_ = true;
      std::thread([this] { watch_pending(); }).detach();
    }
  }

  void unwatch(uint16_t port) {
    std::lock_guard lock(mutex_);
    ports_.erase(port);
  }

  void handshake_finished(int fd) {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(fd);
    if (it == pending_.end()) return;
    struct stat info {};
    if (::fstat(fd, &info) == 0 && info.st_ino == it->second.inode) ++counters_.proven;
    forget(it);  // proven, or another socket took the number
  }

  // recv() returned `n` bytes of `fd`'s first frame into `buffer`: n, or 0 (end of file, so
  // that CAF closes the connection) for a header that claims more than kMaxFirstFrameBytes.
  ssize_t check_first_frame(int fd, const void* buffer, ssize_t n) {
    std::lock_guard lock(mutex_);
    auto it = first_frames_.find(fd);
    struct stat info {};
    if (it == first_frames_.end() || ::fstat(fd, &info) != 0 || info.st_ino != it->second.inode) {
      stop_checking(fd);  // another socket took the number
      return n;
    }
    FirstFrame& frame = it->second;
    size_t take = std::min(kBaspHeaderBytes - frame.have, static_cast<size_t>(n));
    std::memcpy(frame.header + frame.have, buffer, take);
    frame.have += take;
    if (frame.have < kBaspHeaderBytes) return n;
    const uint8_t* length = frame.header + kPayloadLengthOffset;
    uint64_t claimed = (uint64_t{length[0]} << 24) | (uint64_t{length[1]} << 16) |
                       (uint64_t{length[2]} << 8) | uint64_t{length[3]};
    stop_checking(fd);
    if (claimed <= kMaxFirstFrameBytes) {
      // Proven once the whole frame has arrived (the watchdog reads the socket's count).
      if (auto p = pending_.find(fd); p != pending_.end() && p->second.inode == frame.inode) {
        p->second.proof_bytes = kBaspHeaderBytes + claimed;
      }
      return n;
    }
    ::shutdown(fd, SHUT_RDWR);
    ++counters_.refused_frame;
    frame_log_.note(
        fmt::format("closed a connection whose first frame claims {} bytes (at most "
                    "{} before the handshake)",
                    claimed, kMaxFirstFrameBytes));
    return 0;
  }

  Counters counters() {
    std::lock_guard lock(mutex_);
    Counters c = counters_;
    c.pending = static_cast<int>(pending_.size());
    return c;
  }

 private:
  Gate() = default;

  // Whether `listen_fd` listens on a watched port; whether it speaks TLS.
  bool watched(int listen_fd, bool* tls = nullptr) {
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return false;
    uint16_t port = 0;
    if (local.ss_family == AF_INET) {
      port = ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    } else if (local.ss_family == AF_INET6) {
      port = ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port);
    } else {
      return false;
    }
    std::lock_guard lock(mutex_);
    auto it = ports_.find(port);
    if (it == ports_.end()) return false;
    if (tls != nullptr) *tls = it->second.tls;
    return true;
  }

  static int soft_descriptor_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
    return static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 30));
  }

  // Out of descriptors with a connection on the backlog: frees the spare descriptor, takes the
  // connection off the backlog and closes it, and takes the spare again.
  void drop_one_with_spare(int listen_fd) {
    std::lock_guard lock(mutex_);
    ++counters_.refused_descriptors;
    descriptors_log_.note(
        fmt::format("out of file descriptors (limit {}): refusing new connections until some "
                    "close",
                    soft_descriptor_limit()));
    if (spare_fd_ < 0) return;
    ::close(spare_fd_);
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  int refuse(int fd, uint64_t& counter, ThrottledLog& log, const std::string& why) {
    ::close(fd);
    ++counter;
    log.note(why);
    errno = EAGAIN;
    return -1;
  }

  // The caps in force: the configured ones, raised for the largest cluster served here.
  int peer_cap() const { return options_.for_cluster(largest_cluster()).max_pending_per_peer; }
  int process_cap() const { return options_.for_cluster(largest_cluster()).max_pending; }
  int largest_cluster() const {
    int tasks = 0;
    for (const auto& [port, watched] : ports_)
      tasks = std::max(tasks, watched.cluster_tasks);
    return tasks;
  }

  // Whether a pending plaintext connection's first frame has all arrived (the watchdog would
  // forget it at its next scan).
  static bool proven_plaintext(const Pending& p) {
    tcp_info info{};
    socklen_t len = sizeof(info);
    return !p.tls && ::getsockopt(p.own_fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
           info.tcpi_bytes_received >= p.proof_bytes;
  }

  // Forgets the pending plaintext connections that have proven themselves since the last scan:
  // room is never made by shutting down a connection that is no longer pending.
  void forget_proven() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (proven_plaintext(it->second)) {
        ++counters_.proven;
        auto done = it++;
        forget(done);
      } else {
        ++it;
      }
    }
  }

  // The oldest pending connection from an address `chosen` accepts, or end().
  template <class Chosen>
  std::map<int, Pending>::iterator oldest_from(Chosen chosen) {
    auto oldest = pending_.end();
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (chosen(it->second.peer) &&
          (oldest == pending_.end() || it->second.accepted < oldest->second.accepted)) {
        oldest = it;
      }
    }
    return oldest;
  }

  // Shuts down a pending connection (CAF then closes it).
  void drop(std::map<int, Pending>::iterator it) {
    ::shutdown(it->second.own_fd, SHUT_RDWR);
    stop_checking(it->first);
    forget(it);
  }

  int admit(int fd, const std::string& peer, bool tls) {
    std::lock_guard lock(mutex_);
    // The gate's duplicate takes a descriptor too.
    if (int limit = soft_descriptor_limit(); fd + 1 >= limit - kReservedDescriptors) {
      return refuse(fd, counters_.refused_descriptors, descriptors_log_,
                    fmt::format("out of file descriptors (limit {}, {} kept for the node's own "
                                "use): refusing a connection from {}",
                                limit, kReservedDescriptors, peer));
    }
    forget_closed();
    forget_proven();
    auto count_of = [&](const std::string& address) {
      auto it = per_peer_.find(address);
      return it == per_peer_.end() ? 0 : it->second;
    };
    if (int cap = peer_cap(); count_of(peer) >= cap) {
      ++counters_.dropped_peer;
      peer_log_.note(
          fmt::format("shut down the oldest of {} connections from {} that have not finished their "
                      "handshake, to admit a newer one (max_pending_connections_per_peer is {})",
                      count_of(peer), peer, cap));
      auto oldest = oldest_from([&](const std::string& from) { return from == peer; });
      if (oldest != pending_.end()) drop(oldest);
    } else if (cap = process_cap(); static_cast<int>(pending_.size()) >= cap) {
      // The oldest connection of the addresses with the most pending: on a tie (an attacker
      // with as many addresses as connections) the oldest, never the newest member's.
      int most = 0;
      for (const auto& [address, count] : per_peer_)
        most = std::max(most, count);
      auto oldest = oldest_from([&](const std::string& from) { return count_of(from) == most; });
      if (oldest != pending_.end()) {
        ++counters_.dropped_pending;
        pending_log_.note(fmt::format(
            "shut down the oldest of {} connections from {} that have not finished their "
            "handshake, to admit one from {}: {} are pending (max_pending_connections is {})",
            most, oldest->second.peer, peer, pending_.size(), cap));
        drop(oldest);
      }
    }
    struct stat info {};
    int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0 || ::fstat(fd, &info) != 0) {
      if (own >= 0) ::close(own);
      return refuse(
          fd, counters_.refused_descriptors, descriptors_log_,
          fmt::format("cannot watch a connection from {}: {}", peer, std::strerror(errno)));
    }
    bool checked = !tls && fd < kMaxCheckedDescriptor;
    uint64_t proof = tls ? 0 : checked ? kUnknownFrameBytes : kBaspHeaderBytes;
    pending_[fd] = Pending{own, info.st_ino, peer, tls, proof, Clock::now()};
    if (checked) {
      first_frames_[fd] = FirstFrame{info.st_ino, {}, 0};
      first_frame_unchecked[fd].store(true, std::memory_order_release);
    }
    ++per_peer_[peer];
    ++counters_.admitted;
    return fd;
  }

  void stop_checking(int fd) {
    if (fd < kMaxCheckedDescriptor)
      first_frame_unchecked[fd].store(false, std::memory_order_release);
    first_frames_.erase(fd);
  }

  // Stops counting a connection as pending (its first frame, if unread, is still checked).
  void forget(std::map<int, Pending>::iterator it) {
    ::close(it->second.own_fd);
    if (--per_peer_[it->second.peer] <= 0) per_peer_.erase(it->second.peer);
    pending_.erase(it);
  }

  // Forgets pending connections whose descriptor CAF has closed (or that now names another
  // file).
  void forget_closed() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      struct stat info {};
      if (::fstat(it->first, &info) != 0 || info.st_ino != it->second.inode) {
        auto gone = it++;
        forget(gone);
      } else {
        ++it;
      }
    }
  }

  void watch_pending() {
    ::pthread_setname_np(::pthread_self(), "troupe-gate");
    for (;;) {
      std::this_thread::sleep_for(kScanInterval);
      std::lock_guard lock(mutex_);
      forget_closed();
      for (auto it = first_frames_.begin(); it != first_frames_.end();) {
        struct stat info {};
        int fd = (it++)->first;
        if (::fstat(fd, &info) != 0 || info.st_ino != first_frames_[fd].inode) stop_checking(fd);
      }
      auto now = Clock::now();
      for (auto it = pending_.begin(); it != pending_.end();) {
        // A TLS connection is proven by its handshake (handshake_finished), nothing else.
        tcp_info info{};
        socklen_t len = sizeof(info);
        bool proven = !it->second.tls &&
                      ::getsockopt(it->second.own_fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
                      info.tcpi_bytes_received >= it->second.proof_bytes;
        if (proven) {
          ++counters_.proven;
          auto done = it++;
          forget(done);
          continue;
        }
        if (now - it->second.accepted >= options_.handshake_timeout) {
          // CAF sees the connection end and closes its descriptor.
          ::shutdown(it->second.own_fd, SHUT_RDWR);
          ++counters_.timed_out;
          timeout_log_.note(fmt::format(
              "closed a connection from {} that did not finish its handshake within {} ms",
              it->second.peer, options_.handshake_timeout.count()));
          auto done = it++;
          forget(done);
          continue;
        }
        ++it;
      }
    }
  }

  std::mutex mutex_;
  AdmissionOptions options_;
  std::map<uint16_t, WatchedPort> ports_;
  std::map<int, Pending> pending_;  // by CAF's descriptor
  std::map<std::string, int> per_peer_;
  std::map<int, FirstFrame> first_frames_;  // by CAF's descriptor
  Counters counters_;
  ThrottledLog descriptors_log_, pending_log_, peer_log_, timeout_log_, frame_log_;
  int spare_fd_ = -1;
  bool watchdog_started_ = false;
};

}  // namespace

void configure(const AdmissionOptions& options) {
  Gate::instance().configure(options);
}

void watch_port(uint16_t port, bool tls, int cluster_tasks) {
  Gate::instance().watch(port, tls, cluster_tasks);
}

void handshake_finished(int fd) {
  Gate::instance().handshake_finished(fd);
}

void unwatch_port(uint16_t port) {
  Gate::instance().unwatch(port);
}

Counters counters() {
  return Gate::instance().counters();
}

}  // namespace accept_gate
}  // namespace troupe

namespace troupe::caf_call_hooks {

int accept(int fd, sockaddr* addr, socklen_t* addr_len) {
  return accept_gate::Gate::instance().accept(fd, addr, addr_len);
}

// CAF reads its connections with recv(): one flag to test unless the descriptor is a pending
// plaintext connection whose first frame is being read.
ssize_t recv(int fd, void* buffer, size_t size, int flags) {
  using namespace accept_gate;
  ssize_t n = ::recvfrom(fd, buffer, size, flags, nullptr, nullptr);
  if (n <= 0 || fd < 0 || fd >= kMaxCheckedDescriptor || (flags & MSG_PEEK) != 0 ||
      !first_frame_unchecked[fd].load(std::memory_order_acquire)) {
    return n;
  }
  return Gate::instance().check_first_frame(fd, buffer, n);
}

}  // namespace troupe::caf_call_hooks

// The process's accept() and recv(), which CAF's doormen and connections call in a program
// (actors/CMakeLists.txt exports them; actors/transport/caf_call_hooks.hpp).
extern "C" int accept(int fd, sockaddr* addr, socklen_t* addr_len) {
  return troupe::caf_call_hooks::accept(fd, addr, addr_len);
}

extern "C" ssize_t recv(int fd, void* buffer, size_t size, int flags) {
  return troupe::caf_call_hooks::recv(fd, buffer, size, flags);
}
