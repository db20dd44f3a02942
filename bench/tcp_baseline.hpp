// The physical limit that transfers and round trips are measured against: a raw TCP stream
// (TCP_NODELAY, loopback) between the benchmark and a child process of its own
// (`troupe_bench tcp-peer`), moving bytes from and into buffers allocated once. With TLS
// credentials, the same bytes go through one TLS 1.3 connection made with OpenSSL (SSL_write,
// SSL_read; AES-256-GCM, the cipher the tensor channel seals with): what encrypting costs on
// this machine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <openssl/types.h>

#include "apps/child_process.hpp"
#include "troupe/actors/transport/tls.hpp"

namespace troupe::bench {

// The child's side: listens on 127.0.0.1 (a free port, printed as "tcp-peer port <n>"), serves
// one connection: reads a byte count and that many bytes, answers one byte; a count of 0 ends.
// argv: [cert key ca] for TLS.
int tcp_peer_main(int argc, char** argv);

class TcpBaseline {
 public:
  // Starts `self` (this benchmark's executable) as the peer and connects to it, with TLS if
  // `tls` is enabled (both ends use those credentials).
  explicit TcpBaseline(const std::string& self, const TlsOptions& tls = {});
  ~TcpBaseline();
  TcpBaseline(const TcpBaseline&) = delete;
  TcpBaseline& operator=(const TcpBaseline&) = delete;

  // Seconds to write `count` messages of `bytes` each and read the peer's acknowledgement.
  double transfer(size_t bytes, int count);
  // Seconds for one byte there and one back.
  double round_trip() { return transfer(1, 1); }

 private:
  std::unique_ptr<testing::ChildProcess> peer_;
  int fd_ = -1;
  std::shared_ptr<SSL_CTX> context_;
  SSL* ssl_ = nullptr;
  std::vector<char> source_;
};

}  // namespace troupe::bench
