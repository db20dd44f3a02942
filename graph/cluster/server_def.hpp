// ServerDef: what one server of a cluster needs to start — the cluster, which task it is, the
// protocol, and the defaults its sessions inherit — as TensorFlow's ServerDef.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/core/status.hpp"
#include "troupe/schema/cluster.capnp.h"

namespace troupe {

// Settings a session inherits from its server unless it overrides them.
struct SessionConfig {
  static constexpr int kMaxCpuDevices = 256;
  bool isolate_session_state = false;
  int64_t operation_timeout_ms = 0;  // 0: no default deadline
  // Threads each kernel of the server's devices may use. 0: the host's cores shared among the
  // cluster's tasks on this task's host (ServerDef::intra_op_threads).
  int intra_op_threads = 0;
  // TensorFlow's ConfigProto.device_filters: the session sees only the devices that match one
  // of these partial names ("/job:ps", "/job:worker/task:1"), and needs only their tasks to be
  // up. Empty: every device of the cluster.
  std::vector<std::string> device_filters;
  // TensorFlow's ConfigProto.allow_soft_placement: a node whose requested device exists in no
  // task's devices, or conflicts with the variable or queue it updates, is placed on a device
  // that can run it instead of being an error (graph/placement.hpp).
  bool allow_soft_placement = false;
  // The CPU devices of each task, CPU:0 .. CPU:k-1 (TensorFlow's ConfigProto.device_count
  // {"CPU": k}); 0 means one. The task's intra-op threads are shared among them (each has
  // intra_op_threads / k, at least 1). Used where a server starts, as intra_op_threads.
  int cpu_devices = 0;

  // InvalidArgument naming the field: a negative timeout or thread count, a CPU device count
  // outside 0..kMaxCpuDevices, a filter that is not a device name.
  Status validate() const;

  bool operator==(const SessionConfig& other) const = default;
};

struct ServerDef {
  ClusterSpec cluster;
  std::string job_name;
  int task_index = 0;
  std::string protocol = "troupe";
  SessionConfig default_session_config;

  // Checks that `job_name` is a job of `cluster` defining `task_index` (InvalidArgument naming
  // them and listing the jobs, or the job's indices, that exist). As in TensorFlow, an empty
  // `job_name` stands for the cluster's only job when it has exactly one. Also InvalidArgument
  // for a protocol troupe does not speak (is_known_protocol), or a negative timeout or thread
  // count.
  static StatusOr<ServerDef> create(ClusterSpec cluster, std::string job_name, int task_index,
                                    std::string protocol = "troupe",
                                    SessionConfig default_session_config = {});

  // "troupe", and "grpc" (TensorFlow's default, so that TensorFlow programs and TF_CONFIG's
  // rpc_layer work unchanged), which means the same transport.
  static bool is_known_protocol(const std::string& protocol);

  // A one-task cluster for in-process use (Server::create_local_server): job "localhost" with
  // task 0 at "localhost:0", port 0 meaning a free port is picked when the server starts.
  static ServerDef local();

  // This task's "host:port"; InvalidArgument if the cluster does not define it.
  StatusOr<std::string> address() const;
  // "/job:<job_name>/replica:0/task:<task_index>".
  std::string task_name() const;

  // The tasks of the cluster on this task's host, this one included: those whose address has
  // the same host, every loopback name ("localhost", 127.x.x.x, "::1") counting as one host.
  int tasks_on_this_host() const;
  // The intra-op threads of this task's devices: default_session_config.intra_op_threads when
  // set, else `cores` / tasks_on_this_host(), at least 1, so that the tasks of a machine
  // (troupe launch's, or an in-process cluster's) do not oversubscribe its cores.
  int intra_op_threads(int cores) const;

  // The Cap'n Proto ServerDef (schema/cluster.capnp).
  void to_wire(wire::ServerDef::Builder out) const;
  // Decodes and validates as create does; malformed messages are InvalidArgument.
  static StatusOr<ServerDef> from_wire(wire::ServerDef::Reader in);

  bool operator==(const ServerDef& other) const = default;
};

}  // namespace troupe
