// Free ports: probed by binding 127.0.0.1 once.
#include "troupe/actors/free_ports.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>

namespace troupe {

namespace {

// Whether 127.0.0.1:`port` can be bound now (0: any port; *port then says which).
bool bindable(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(*port));
  socklen_t len = sizeof(addr);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (ok) *port = ntohs(addr.sin_port);
  return ok;
}

// The first port of the kernel's ephemeral range (the local ports of outgoing connections).
int ephemeral_range_start() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0, high = 0;
  if (in >> low >> high && low > 1024) return low;
  return 32768;  // Linux's default
}

}  // namespace

StatusOr<int> pick_free_port() {
  // Below the ephemeral range: a port probed free there cannot be taken by another task's
  // outgoing connection before its own task binds it (one from the range can, and was: tests
  // starting several processes at once met "Address already in use"). Random, so that
  // processes probing at once rarely pick the same one; bound once to check it is free.
  static thread_local std::mt19937 random(std::random_device{}() ^
                                          static_cast<unsigned>(::getpid()));
  const int high = ephemeral_range_start() - 1;
  constexpr int kLow = 10000;
  if (high > kLow) {
    std::uniform_int_distribution<int> pick(kLow, high);
    for (int attempt = 0; attempt < 64; ++attempt) {
      int port = pick(random);
      if (bindable(&port)) return port;
    }
  }
  // Else one the kernel hands out.
  int port = 0;
  if (!bindable(&port)) return errors::Unavailable("cannot bind 127.0.0.1:0 to find a free port");
  return port;
}

StatusOr<ClusterSpec> free_port_cluster(const std::vector<std::pair<std::string, int>>& jobs,
                                        const std::string& host) {
  std::set<int> used;
  ClusterSpec cluster;
  for (const auto& [job, count] : jobs) {
    if (count < 0) {
      return errors::InvalidArgument("job '{}' has {} tasks: expected 0 or more", job, count);
    }
    if (count == 0) continue;
    std::vector<std::string> addresses;
    for (int i = 0; i < count; ++i) {
      int port = 0;
      for (int tries = 0; port == 0 || !used.insert(port).second; ++tries) {
        if (tries == 100) {
          return errors::Unavailable("cannot find {} distinct free ports after {} tries",
                                     used.size() + 1, tries);
        }
        TROUPE_ASSIGN_OR_RETURN(port, pick_free_port());
      }
      addresses.push_back(fmt::format("{}:{}", host, port));
    }
    TROUPE_RETURN_IF_ERROR(cluster.add_job(job, std::move(addresses)));
  }
  return cluster;
}

}  // namespace troupe
