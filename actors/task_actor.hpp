// The task actor: the root of one server (one task of a cluster). It owns the task's
// directory, device actors (the worker service) and master service; stopping it stops them
// all. It is the actor a server publishes on its port.
//
// Protocol:
//   (get_devices_atom)   -> std::vector<DeviceInfo>
//   (get_master_atom)    -> caf::actor (the master service)
//   (get_directory_atom) -> caf::actor (the directory)
//   (get_role_atom)      -> caf::actor (the job's custom role actor; NotFound if it has none)
//   (heartbeat_atom)     -> caf::unit  (liveness probe of peers)
#pragma once

#include <chrono>
#include <memory>

#include <caf/fwd.hpp>

#include "troupe/actors/directory.hpp"
#include "troupe/graph/cluster/server_def.hpp"

namespace troupe {

class CpuPool;
class PartitionRunHook;
class DataPlane;

struct TaskActorConfig {
  ServerDef server_def;
  PeerOptions peers;                         // how to reach and watch the other tasks
  std::shared_ptr<PartitionRunHook> faults;  // ServerOptions::faults
  std::shared_ptr<DataPlane> plane;  // tensors and steps to and from other processes; or none
  std::shared_ptr<const CpuPool> cpu_pool;  // its CPU devices' threads; their own when null
  std::string in_process_group;             // DirectoryConfig::in_process_group
  // A task of a deterministic simulation (actors/sim/deterministic_cluster.hpp): no GPU
  // devices, whatever the machine has, and loops cut their work in slices of iterations
  // rather than of wall time (DeviceActorConfig::simulated).
  bool simulated = false;
};

caf::actor spawn_task_actor(caf::actor_system& system, TaskActorConfig config);

}  // namespace troupe
