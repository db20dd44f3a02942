// Ports for clusters of processes on one host (troupe launch, tests): pick_free_port and
// free_port_cluster probe 127.0.0.1 for ports that are free now. A port probed free may still
// be taken before its task binds it (by another process probing at the same moment); a task
// that can bind port 0 and report its port (LocalCluster's) needs none of this.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

// A cluster of `jobs` (name, number of tasks; jobs with 0 tasks are left out), every task at
// `host` on its own port, each free on 127.0.0.1 when probed and no two alike. InvalidArgument
// naming the job for a negative count; Unavailable when no such ports can be found.
StatusOr<ClusterSpec> free_port_cluster(const std::vector<std::pair<std::string, int>>& jobs,
                                        const std::string& host = "127.0.0.1");

// A TCP port on 127.0.0.1 that was free when probed: a random one below the kernel's
// ephemeral port range where it can (so no outgoing connection takes it meanwhile), else one
// the kernel hands out.
StatusOr<int> pick_free_port();

}  // namespace troupe
