// The directory actor of a server: who is who in the cluster, and who is still alive. It turns
// a task name into the task's actor — a server in this process (local registry: by address, or
// by name for a task of the same in-process group) or, lazily, a connection to the task's
// address from the ClusterSpec — and a device name into the device's actor.
//
// Protocol:
//   (resolve_task_atom, std::string job, int32_t index) -> caf::actor   the task actor
//   (resolve_device_atom, std::string device)           -> caf::actor   the device actor
//   (list_devices_atom, std::vector<std::string> filters) -> std::vector<DeviceInfo>
//       every device of the cluster that matches one of the filters (all if there are none);
//       only the tasks that could match are asked
//   (resolve_role_atom, std::string job, int32_t index) -> caf::actor   the task's role actor
//   (pending_lookups_atom)                               -> std::vector<std::string>
//       the tasks it is still trying to reach: "/job:ps/replica:0/task:0 at host:port"
//   (watch_tasks_atom)                                   the sender (an actor of this process)
//       is told of every task that is lost from now on:
//       (task_lost_atom, std::string job, int32_t index, caf::error reason)
// A task in another process is handed out once it has answered a first heartbeat on its new
// connection: when two tasks connect to each other at the same moment, CAF 0.17 closes both
// connections just after both connects succeeded, and the directory then connects again (the
// task that sorts first at once, the other after a pause) within the connect deadline.
// A task that cannot be reached before the connect deadline is Unavailable, naming the task
// and its address; from then on it gets one connection attempt per lookup, as a task that
// died does, so later lookups fail fast until it comes up. An unknown job, index or device is
// InvalidArgument.
//
// Failure detection: a connected task in another process is lost when its connection closes
// (it died) or when it does not answer a heartbeat within `heartbeat_timeout` (it froze, or
// the network between us did). A lost task is reported to the watchers at once, and while it
// is lost resolving it fails fast: a dead task gets one connection attempt per lookup, a frozen
// one none. Heartbeats go on to a frozen task, so it is found again when it answers.
#pragma once

#include <chrono>

#include <caf/actor.hpp>

#include "troupe/graph/cluster/server_def.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

// How a task reaches and watches the other tasks of its cluster.
struct PeerOptions {
  // How long to keep trying to reach a task that has not come up yet.
  std::chrono::milliseconds connect_timeout{60000};
  // How often a connected task in another process is asked whether it is alive, and how long
  // it has to answer before it is lost. A zero timeout turns heartbeats off (then only a
  // closed connection makes a task lost).
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds heartbeat_timeout{4000};

  // InvalidArgument naming the field for negative values or an interval of 0 with heartbeats.
  Status validate() const;
};

struct DirectoryConfig {
  ServerDef server_def;  // the cluster and this task
  caf::actor self_task;  // this task's actor
  PeerOptions peers;
  // The in-process group of this task (actors/local_registry.hpp; LocalCluster sets it): peers
  // of the group are found by name in the process's registry, not by their addresses. Empty:
  // every peer by its address.
  std::string in_process_group;
};

caf::actor spawn_directory(caf::local_actor* parent, DirectoryConfig config);

}  // namespace troupe
