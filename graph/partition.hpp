// Partitioning: splits a placed run graph into one graph per device, joining the pieces with
// _Send/_Recv pairs (TensorFlow's graph partitioner).
//
// For every tensor an edge carries from device S to device D, S's partition gets a _Send and
// D's a _Recv, one pair per (tensor, destination device) however many nodes on D consume it.
// A control edge across devices becomes a _Send of a tiny constant that runs after the source
// and a _Recv the destination waits for. Each partition's _Arg and _Retval nodes are
// renumbered 0..n-1; the result says which feed and fetch each local index stands for.
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/graph.hpp"

namespace troupe {

struct Partition {
  std::string device;
  GraphDef graph;
  std::vector<int> feed_of_arg;   // partition _Arg index -> index into the run's feeds
  std::vector<int> fetch_of_ret;  // partition _Retval index -> index into the run's fetches
};

// `devices[id]` is the device of node `id` (see placement.hpp). A reference edge across
// devices is Internal (placement keeps references on their variable's device).
StatusOr<std::vector<Partition>> partition_by_device(const Graph& graph,
                                                     const std::vector<std::string>& devices);

}  // namespace troupe
