// Device: one place where kernels run (a CPU, or a GPU where CUDA is built), with the state
// it keeps between steps and the thread pool its kernels use for intra-op parallelism.
//
// A Device is owned by its device actor (actors/device_actor.hpp) and used from that actor's
// thread; only the thread pool (devices/cpu_pool.hpp), which devices may share, runs work on
// other threads.
#pragma once

#include <memory>
#include <string>

#include "troupe/devices/resource_manager.hpp"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace troupe {

class CpuPool;     // devices/cpu_pool.hpp
class GpuContext;  // devices/gpu/gpu_context.hpp

class Device {
 public:
  // `name` is the full device name ("/job:localhost/replica:0/task:0/device:CPU:0"), `type` its
  // type ("CPU"). intra_op_threads <= 0 means one thread per available core.
  Device(std::string name, std::string type, int intra_op_threads);
  // A device whose CPU kernels run on `pool`, shared with other devices (not null).
  Device(std::string name, std::string type, std::shared_ptr<const CpuPool> pool);
  // A GPU device ("GPU"): its kernels run on `gpu`'s stream; the CPU pool of intra_op_threads
  // threads runs its host-memory kernels.
  Device(std::string name, std::shared_ptr<GpuContext> gpu, int intra_op_threads);
  // A GPU device whose host-memory kernels run on `pool`, shared with other devices (not null).
  Device(std::string name, std::shared_ptr<GpuContext> gpu, std::shared_ptr<const CpuPool> pool);

  // The cores this process may run on: its CPU affinity (`taskset`, cpusets), and no more than
  // its cgroup's CPU quota rounded up (Kubernetes' CPU limits, `podman run --cpus`; cgroup v1
  // or v2); at least 1.
  static int available_cores();
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  // The threads of its pool (shared or not).
  int intra_op_threads() const;
  ResourceManager& resources() { return resources_; }

  // Where CPU kernels evaluate Eigen expressions.
  const Eigen::ThreadPoolDevice& eigen_cpu() const;
  // The GPU this device drives, or null for a CPU.
  GpuContext* gpu() const { return gpu_.get(); }

 private:
  std::string name_;
  std::string type_;
  ResourceManager resources_;
  std::shared_ptr<const CpuPool> cpu_;
  std::shared_ptr<GpuContext> gpu_;
};

}  // namespace troupe
