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

#include <openssl/ssl.h>

#include "report.hpp"
#include "troupe/graph/core/throwing.hpp"

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

// Through `ssl` when there is one, else on `fd`.
void read_exactly(int fd, SSL* ssl, char* data, size_t bytes) {
  while (bytes > 0) {
    int most = static_cast<int>(std::min<size_t>(bytes, 1 << 30));
    ssize_t got = ssl != nullptr ? SSL_read(ssl, data, most) : ::read(fd, data, bytes);
    if (got <= 0) fail("read");
    data += got;
    bytes -= static_cast<size_t>(got);
  }
}

void write_exactly(int fd, SSL* ssl, const char* data, size_t bytes) {
  while (bytes > 0) {
    int most = static_cast<int>(std::min<size_t>(bytes, 1 << 30));
    ssize_t put = ssl != nullptr ? SSL_write(ssl, data, most) : ::write(fd, data, bytes);
    if (put <= 0) fail("write");
    data += put;
    bytes -= static_cast<size_t>(put);
  }
}

// A TLS 1.3 context with `tls`'s credentials, both ends verified against its CA.
std::shared_ptr<SSL_CTX> tls_context(const TlsOptions& tls) {
  auto context = value_or_throw(tls.load());
  SSL_CTX_set_min_proto_version(context.get(), TLS1_3_VERSION);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return context;
}

// `fd` under TLS, as the connecting (`client`) or the accepting side.
SSL* secure(SSL_CTX* context, int fd, bool client) {
  SSL* ssl = SSL_new(context);
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1 ||
      (client ? SSL_connect(ssl) : SSL_accept(ssl)) != 1) {
    fail("TLS handshake");
  }
  return ssl;
}

}  // namespace

int tcp_peer_main(int argc, char** argv) {
  std::shared_ptr<SSL_CTX> context;
  if (argc == 3) {
    TlsOptions tls;
    tls.certificate_file = argv[0];
    tls.key_file = argv[1];
    tls.ca_file = argv[2];
    context = tls_context(tls);
  }
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
  SSL* ssl = context != nullptr ? secure(context.get(), fd, false) : nullptr;
  std::vector<char> sink(kBufferBytes, 1);  // touched once, reused for every message
  for (;;) {
    uint64_t bytes = 0;
    read_exactly(fd, ssl, reinterpret_cast<char*>(&bytes), sizeof bytes);
    if (bytes == 0) return 0;
    while (bytes > 0) {
      size_t part = std::min<uint64_t>(bytes, sink.size());
      read_exactly(fd, ssl, sink.data(), part);
      bytes -= part;
    }
    char ack = 1;
    write_exactly(fd, ssl, &ack, 1);
  }
}

TcpBaseline::TcpBaseline(const std::string& self, const TlsOptions& tls)
    : source_(kBufferBytes, 1) {
  std::vector<std::string> argv{self, "tcp-peer"};
  if (tls.enabled()) {
    context_ = tls_context(tls);
    argv.insert(argv.end(), {tls.certificate_file, tls.key_file, tls.ca_file});
  }
  peer_ = std::make_unique<testing::ChildProcess>(argv);
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
  if (context_ != nullptr) ssl_ = secure(context_.get(), fd_, true);
}

TcpBaseline::~TcpBaseline() {
  if (fd_ >= 0) {
    uint64_t end = 0;
    if (ssl_ != nullptr) {
      (void)SSL_write(ssl_, &end, sizeof end);
      SSL_free(ssl_);
    } else {
      (void)::write(fd_, &end, sizeof end);
    }
    ::close(fd_);
  }
  peer_->stop(0, 5000);
}

double TcpBaseline::transfer(size_t bytes, int count) {
  if (bytes > source_.size()) throw std::invalid_argument("tcp baseline: message over 256 MiB");
  return seconds_of([&] {
    uint64_t total = uint64_t{bytes} * static_cast<uint64_t>(count);
    size_t first = 0;  // of the first message, gone with the header
    if (ssl_ != nullptr) {
      write_exactly(fd_, ssl_, reinterpret_cast<const char*>(&total), sizeof total);
    } else {
      // The header and the first message leave in one segment, as a framed message would.
      iovec parts[2] = {{&total, sizeof total}, {source_.data(), bytes}};
      ssize_t put = ::writev(fd_, parts, 2);
      if (put < static_cast<ssize_t>(sizeof total)) fail("writev");
      first = static_cast<size_t>(put) - sizeof total;
    }
    write_exactly(fd_, ssl_, source_.data() + first, bytes - first);
    for (int i = 1; i < count; ++i)
      write_exactly(fd_, ssl_, source_.data(), bytes);
    char ack = 0;
    read_exactly(fd_, ssl_, &ack, 1);
  });
}

}  // namespace troupe::bench
