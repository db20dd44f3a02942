// Test helpers for addresses: free loopback ports, and clusters whose tasks listen on them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>

#include "troupe/actors/local_cluster.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"

namespace troupe::testing {

// "127.0.0.1:<port>" for a port that was free when probed.
inline std::string free_address() {
  auto port = pick_free_port();
  BOOST_REQUIRE_MESSAGE(port.ok(), port.status().to_string());
  return fmt::format("127.0.0.1:{}", *port);
}

// A cluster of the given jobs and task counts, e.g. {{"worker", 1}, {"metrics", 1}}, each task
// at a free_address().
inline ClusterSpec free_port_cluster(const std::vector<std::pair<std::string, int>>& jobs) {
  std::map<std::string, std::vector<std::string>> addresses;
  for (const auto& [job, tasks] : jobs) {
    for (int i = 0; i < tasks; ++i)
      addresses[job].push_back(free_address());
  }
  auto spec = ClusterSpec::create(addresses);
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.status().to_string());
  return *spec;
}

}  // namespace troupe::testing
