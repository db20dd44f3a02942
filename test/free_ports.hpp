// Test helpers for addresses: free loopback ports, clusters whose tasks listen on them, and
// addresses where nothing listens.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>

#include "troupe/actors/free_ports.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"

namespace troupe::testing {

// "127.0.0.1:<port>" for a port that was free when probed.
inline std::string free_address() {
  auto port = pick_free_port();
  BOOST_REQUIRE_MESSAGE(port.ok(), port.status().to_string());
  return fmt::format("127.0.0.1:{}", *port);
}

// A cluster of the given jobs and task counts, e.g. {{"worker", 1}, {"metrics", 1}}, each task
// on its own free loopback port (troupe::free_port_cluster).
inline ClusterSpec free_port_cluster(const std::vector<std::pair<std::string, int>>& jobs) {
  auto spec = troupe::free_port_cluster(jobs);
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.status().to_string());
  return *spec;
}

// "127.0.0.1:<port>" where nothing listens, and nothing can start listening while this lives:
// the port stays bound (not listening, without SO_REUSEADDR), so a connection there is refused.
// A port that was merely free when probed can be handed to the next bind(port 0) in the same
// test, a server's own, which then answers.
class ClosedAddress {
 public:
  ClosedAddress() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE_MESSAGE(fd_ >= 0, "cannot open a socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(addr);
    BOOST_REQUIRE_MESSAGE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                              ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size) == 0,
                          "cannot bind 127.0.0.1:0");
    address_ = fmt::format("127.0.0.1:{}", ntohs(addr.sin_port));
  }
  ~ClosedAddress() { ::close(fd_); }
  ClosedAddress(const ClosedAddress&) = delete;
  ClosedAddress& operator=(const ClosedAddress&) = delete;

  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

}  // namespace troupe::testing
