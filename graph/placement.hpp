// Placement: which device runs each node of a run's graph (a simplified TensorFlow placer, with
// its colocation rules).
//
// Nodes first form colocation groups; the nodes of a group run on one device:
//   - a node and the producer of each of its reference inputs (Assign and its Variable);
//   - a node whose "_class" attribute (list(string)) holds "loc:@<name>" and node <name>
//     (Scope::colocate_with writes it); an unknown <name> is InvalidArgument naming both nodes,
//     unless PlacementOptions::allow_missing_colocation_targets;
//   - the runtime's nodes follow: a _Retval joins the group of its input's producer, an _Arg that
//     of its first data consumer (in node id order). A following node's own requested device is
//     ignored; an _Arg without consumers is placed by its own request.
// A group's request is the DeviceName::merge of its members' requested devices (possibly
// partial: "/job:ps/task:0", "/device:CPU:0", "" for none); two members asking for different
// values of a field is InvalidArgument ("node 'a' wants /job:ps/task:1 but is colocated with
// node 'v' which wants /job:ps/task:0"). If the request names no job, its job, replica and task
// come from `default_device` (the task of the master session). The group then goes to the first
// device of `devices` — GPUs before the rest, otherwise in the given order — that matches the
// request and has a kernel for every member's op.
// A request that no device matches is InvalidArgument naming a node of the group, the request
// and the devices that exist; matching devices without a kernel is InvalidArgument naming the
// op.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/graph.hpp"

namespace troupe {

struct PlacementOptions {
  // Full device names of the cluster ("/job:w/replica:0/task:0/device:CPU:0"); a partial one is
  // InvalidArgument.
  std::vector<std::string> devices;
  DeviceName default_device;  // usually the master's task: "/job:w/replica:0/task:0"
  // Whether `device_type` has a kernel for `op`; unset means every device has every kernel.
  std::function<bool(const std::string& op, const std::string& device_type)> has_kernel;
  // "loc:@<name>" naming a node not in the graph (say, pruned from a run's graph): false, it is
  // InvalidArgument; true, the entry only colocates the nodes that name <name>, as TensorFlow's
  // placer treats colocation groups.
  bool allow_missing_colocation_targets = false;
  // TensorFlow's allow_soft_placement. In a colocation group, the requests of the nodes that
  // own state (Variable, queues: ops with reference outputs) are merged first; a member's
  // request that then conflicts is ignored instead of being InvalidArgument (an update built
  // under a worker's device scope runs where its variable is). A group whose request matches
  // no device is placed as if it named no device type or index (a "/device:GPU:0" request
  // runs on the task's CPU).
  bool allow_soft_placement = false;
};

// The full device name (as given in options.devices) of every node, indexed by node id.
StatusOr<std::vector<std::string>> place(const Graph& graph, const PlacementOptions& options);

}  // namespace troupe
