// The device actor: owns one Device (its kernels' thread pool and its resources) and the graph
// partitions registered on it, runs them, and exchanges tensors with peer device actors.
//
// Protocol (requests answer a value or a troupe error, see error_bridge.hpp):
//   (register_partition_atom, PartitionSpec)       -> int64_t handle
//       Checks the graph and instantiates its kernels (InvalidArgument / Unimplemented naming
//       the node on failure).
//   (run_partition_atom, RunPartitionRequest)      -> RunPartitionResponse
//       Runs the partition once for the step with the given _Arg values; many steps may be in
//       flight (a step waiting on a Recv or a queue does not block the others).
//   (recv_tensor_atom, int64_t step, std::string key, Tensor)   (no reply)
//       A peer's _Send: the tensor for this device's _Recv of that key.
//   (abort_step_atom, int64_t step, caf::error reason)          (no reply)
//       Cancels the step here; it fails with `reason`, now or when it arrives.
//   (deregister_partition_atom, int64_t handle)    -> caf::unit
//   (clear_container_atom, std::string container)  -> caf::unit   drops its resources
//   (task_lost_atom, job, index, reason)           from the directory: forget that task's peers
//   (channel_endpoint_atom)                        -> std::string: "host:port" of the tensor
//       channel of this device's process ("" if none)
// A running step whose master session goes away (its task died) is aborted with Aborted.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>

namespace troupe {

class CpuPool;
class PartitionRunHook;
class DataPlane;

class GpuContext;

struct DeviceActorConfig {
  std::string name;  // full device name
  std::string type;  // "CPU" or "GPU"
  int intra_op_threads = 0;
  // The thread pool of its CPU kernels, shared with other tasks' devices (LocalCluster); when
  // null the device makes its own of intra_op_threads threads.
  std::shared_ptr<const CpuPool> cpu_pool;
  caf::actor directory;                      // resolves peer devices by name
  std::shared_ptr<PartitionRunHook> faults;  // ServerOptions::faults; none when null
  // The process's data plane (actors/transport/data_plane.hpp): receives tensors and steps for
  // this device from other processes and sends tensors to them. Actor messages only when null.
  std::shared_ptr<DataPlane> plane;
  // A GPU device's GPU (devices/gpu/gpu_runtime.hpp: open_gpu); null for a CPU.
  std::shared_ptr<GpuContext> gpu;
  // A device of a deterministic simulation: its steps slice long work by count, not by time
  // (StepContext::slice_iterations).
  bool simulated = false;
};

// Spawns a device actor linked to `parent` (the task actor): it stops when the task does.
caf::actor spawn_device_actor(caf::local_actor* parent, DeviceActorConfig config);

}  // namespace troupe
