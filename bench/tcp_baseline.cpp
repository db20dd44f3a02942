// Raw TCP on loopback: the peer process and the measuring side.
#include "tcp_baseline.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <stdexcept>

#include "report.hpp"

namespace troupe::bench {
namespace {

constexpr size_t kBufferBytes = size_t{256} << 20;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("tcp baseline: " + what + ": " + std::strerror(errno));
}

void set_no_delay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("TCP_NODELAY");
}

void read_exactly(int fd, char* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t got = ::read(fd, data, bytes);
    if (got <= 0) fail("read");
    data += got;
    bytes -= static_cast<size_t>(got);
  }
}

void write_exactly(int fd, const char* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t put = ::write(fd, data, bytes);
    if (put <= 0) fail("write");
    data += put;
    bytes -= static_cast<size_t>(put);
  }
}

}  // namespace

int tcp_peer_main() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    fail("listen");
  }
  std::cout << "tcp-peer port " << ntohs(address.sin_port) << std::endl;
  int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) fail("accept");
  set_no_delay(fd);
  std::vector<char> sink(kBufferBytes, 1);  // touched once, reused for every message
  for (;;) {
    uint64_t bytes = 0;
    read_exactly(fd, reinterpret_cast<char*>(&bytes), sizeof bytes);
    if (bytes == 0) return 0;
    while (bytes > 0) {
      size_t part = std::min<uint64_t>(bytes, sink.size());
      read_exactly(fd, sink.data(), part);
      bytes -= part;
    }
    char ack = 1;
    write_exactly(fd, &ack, 1);
  }
}

TcpBaseline::TcpBaseline(const std::string& self) : source_(kBufferBytes, 1) {
  peer_ = std::make_unique<testing::ChildProcess>(std::vector<std::string>{self, "tcp-peer"});
  if (!peer_->wait_for("\n", 10000))
    throw std::runtime_error("tcp baseline: the peer did not start");
  int port = std::stoi(peer_->output().substr(peer_->output().find("port ") + 5));
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail("connect");
  set_no_delay(fd_);
}

TcpBaseline::~TcpBaseline() {
  if (fd_ >= 0) {
    uint64_t end = 0;
    (void)::write(fd_, &end, sizeof end);
    ::close(fd_);
  }
  peer_->stop(0, 5000);
}

double TcpBaseline::transfer(size_t bytes, int count) {
  if (bytes > source_.size()) throw std::invalid_argument("tcp baseline: message over 256 MiB");
  return seconds_of([&] {
    uint64_t total = uint64_t{bytes} * static_cast<uint64_t>(count);
    // The header and the first message leave in one segment, as a framed message would.
    iovec parts[2] = {{&total, sizeof total}, {source_.data(), bytes}};
    ssize_t put = ::writev(fd_, parts, 2);
    if (put < static_cast<ssize_t>(sizeof total)) fail("writev");
    write_exactly(fd_, source_.data() + (put - sizeof total), bytes - (put - sizeof total));
    for (int i = 1; i < count; ++i)
      write_exactly(fd_, source_.data(), bytes);
    char ack = 0;
    read_exactly(fd_, &ack, 1);
  });
}

}  // namespace troupe::bench
