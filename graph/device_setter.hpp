// replica_device_setter: TensorFlow's tf.train.replica_device_setter, a device function that
// puts variables on parameter-server tasks (round robin by default) and everything else on a
// worker device, for between-graph replication.
//
//   auto cluster = ClusterSpec::create({{"ps", {"ps0:2222", "ps1:2222"}},
//                                       {"worker", {"w0:2222", "w1:2222", "w2:2222"}}});
//   auto setter = replica_device_setter(*cluster, "/job:worker/task:1");
//   Scope s = root.with_device_function(*setter);
//   ops::Variable(s, ...);   // /job:ps/task:0
//   ops::Variable(s, ...);   // /job:ps/task:1
//   ops::Variable(s, ...);   // /job:ps/task:0
//   ops::MatMul(s, ...);     // /job:worker/task:1
//
// Devices of inner scopes win field by field over what the setter chooses (the setter merges
// its choice under node.device), as in TensorFlow.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {

// Picks the parameter-server task (0 .. ps_tasks-1) for a ps op. A negative task fails the node
// (the scope reports it as a device function's malformed device, naming the node).
using PsStrategy = std::function<int(const NodeDef& node)>;

// TensorFlow's _RoundRobinStrategy: successive calls return 0, 1, ..., num_tasks-1, 0, ...
// Copies of the returned function share one counter (not thread-safe, like Scope). `num_tasks`
// < 1 behaves as 1.
PsStrategy round_robin_strategy(int num_tasks);

// TensorFlow's STANDARD_PS_OPS: the ops that hold state (Variable, VariableV2, VarHandleOp,
// the mutable hash tables, ...). troupe registers only some of them (Variable); the rest are
// listed so graphs using them later place as in TensorFlow.
const std::set<std::string>& standard_ps_ops();

struct ReplicaDeviceSetterOptions {
  // Number of parameter-server tasks; ignored when `cluster` is set.
  int ps_tasks = 0;
  // If set, ps_tasks is the number of tasks of ps_device's job in it (no such job: no ps tasks).
  std::optional<ClusterSpec> cluster = std::nullopt;
  // Where ps ops go; its task is chosen by ps_strategy when its job is set and node.device
  // names no other job. "" puts ps ops on worker_device.
  std::string ps_device = "/job:ps";
  // Where every other op goes.
  std::string worker_device = "/job:worker";
  // Op names placed on ps_device.
  std::set<std::string> ps_ops = standard_ps_ops();
  // Empty: round_robin_strategy(ps_tasks).
  PsStrategy ps_strategy = nullptr;
};

// The device function of TensorFlow's _ReplicaDeviceChooser:
//   - a node whose op is in ps_ops gets ps_device, with task = ps_strategy(node) if ps_device
//     has a job and node.device has no job or the same one (the strategy advances on each such
//     call), merged so that fields set in node.device win;
//   - any other node gets worker_device merged so that fields set in node.device win.
// With no ps tasks (ps_tasks == 0 without a cluster, or a cluster without ps_device's job) the
// function returns node.device unchanged (TensorFlow returns None).
// InvalidArgument naming the option for a malformed ps_device or worker_device, or a negative
// ps_tasks.
StatusOr<DeviceFunction> replica_device_setter(const ReplicaDeviceSetterOptions& options);

// replica_device_setter({.cluster = cluster, .worker_device = worker_device}).
StatusOr<DeviceFunction> replica_device_setter(const ClusterSpec& cluster,
                                               std::string worker_device = "/job:worker");

}  // namespace troupe
