// The physical limit that transfers and round trips are measured against: a raw TCP stream
// (TCP_NODELAY, loopback) between the benchmark and a child process of its own
// (`troupe_bench tcp-peer`), moving bytes from and into buffers allocated once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/child_process.hpp"

namespace troupe::bench {

// The child's side: listens on 127.0.0.1 (a free port, printed as "tcp-peer port <n>"), serves
// one connection: reads a byte count and that many bytes, answers one byte; a count of 0 ends.
int tcp_peer_main();

class TcpBaseline {
 public:
  // Starts `self` (this benchmark's executable) as the peer and connects to it.
  explicit TcpBaseline(const std::string& self);
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
  std::vector<char> source_;
};

}  // namespace troupe::bench
