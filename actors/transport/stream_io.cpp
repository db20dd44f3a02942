// Reading and writing a tensor channel connection's stream (stream_io.hpp).
#include "troupe/actors/transport/stream_io.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "troupe/actors/transport/tcp_connect.hpp"
#include "troupe/graph/cluster/host_port.hpp"

namespace troupe {
namespace {

constexpr size_t kBufferBytes = 64 * 1024;

// Writes `parts` (adjusting them) until all is written, the socket fails, or, with
// MSG_DONTWAIT in `flags`, it would block (errno EAGAIN then). Returns the bytes written.
size_t write_all(int fd, std::vector<iovec>& parts, int flags) {
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

}  // namespace

FrameReader::FrameReader(int fd, Opener* opener)
    : fd_(fd), opener_(opener), buffer_(opener == nullptr ? kBufferBytes : 0) {}

std::string FrameReader::end_reason() const {
  if (opener_ == nullptr || opener_->ended_cleanly()) return "it closed";
  return opener_->failure().empty() ? std::string("it closed") : opener_->failure();
}

bool FrameReader::read(void* data, size_t bytes) {
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

bool FrameReader::fill() {  // the buffer is empty here
  begin_ = end_ = 0;
  for (;;) {
    ssize_t got = ::read(fd_, buffer_.data(), buffer_.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    end_ = static_cast<size_t>(got);
    return true;
  }
}

bool FrameReader::read_exactly(char* at, size_t bytes) {
  while (bytes > 0) {
    ssize_t got = ::read(fd_, at, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

Sealer::Written send_parts(int fd, Sealer* sealer, std::vector<iovec>& parts, int flags) {
  if (sealer != nullptr) return sealer->write(fd, parts, flags);
  size_t wanted = 0;
  for (const iovec& part : parts)
    wanted += part.iov_len;
  size_t written = write_all(fd, parts, flags);
  return {written, written < wanted && (flags & MSG_DONTWAIT) != 0 &&
                       (errno == EAGAIN || errno == EWOULDBLOCK)};
}

bool send_all(int fd, Sealer* sealer, std::vector<iovec> parts, size_t bytes) {
  return send_parts(fd, sealer, parts).bytes == bytes;
}

void set_no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int connect_to(const std::string& endpoint, std::chrono::milliseconds timeout) {
  auto host_port = parse_host_port(endpoint);
  if (!host_port.ok()) return -1;
  int fd = tcp_connect(host_port->first, static_cast<uint16_t>(host_port->second), timeout);
  if (fd >= 0) set_no_delay(fd);
  return fd;
}

bool peer_hung_up(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace troupe
