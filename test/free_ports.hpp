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
// on its own free loopback port (troupe::free_port_cluster).
inline ClusterSpec free_port_cluster(const std::vector<std::pair<std::string, int>>& jobs) {
  auto spec = troupe::free_port_cluster(jobs);
  BOOST_REQUIRE_MESSAGE(spec.ok(), spec.status().to_string());
  return *spec;
}

}  // namespace troupe::testing
