// The task actor: spawns and answers for the task's directory, devices and master service.
#include "troupe/actors/task_actor.hpp"

#include <caf/all.hpp>

#include <algorithm>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/device_actor.hpp"
#include "troupe/actors/directory.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/master_service.hpp"
#include "troupe/actors/role_registry.hpp"
#include "troupe/devices/cpu_pool.hpp"
#include "troupe/devices/device.hpp"
#include "troupe/devices/gpu/gpu_runtime.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

struct TaskState {
  std::vector<DeviceInfo> devices;
  caf::actor directory;
  caf::actor master;
  caf::actor role;  // the custom role of the task's job, if any
  static inline const char* name = "troupe.task";
};

caf::behavior task_behavior(caf::stateful_actor<TaskState>* self, TaskActorConfig config) {
  auto& st = self->state;
  const ServerDef& def = config.server_def;
  std::string job_name = def.job_name;
  st.directory = spawn_directory(self, DirectoryConfig{def, caf::actor_cast<caf::actor>(self),
                                                       config.peers, config.in_process_group});
  // CPU:0 .. CPU:k-1 (SessionConfig::cpu_devices), sharing the task's intra-op threads.
  const int cpu_devices = std::max(1, def.default_session_config.cpu_devices);
  const int threads = config.cpu_pool != nullptr ? config.cpu_pool->threads()
                                                 : def.intra_op_threads(Device::available_cores());
  DeviceActorConfig cpu{DeviceName::full(def.job_name, 0, def.task_index, "CPU", 0),
                        "CPU",
                        std::max(1, threads / cpu_devices),
                        config.cpu_pool,
                        st.directory,
                        config.faults,
                        config.plane,
                        /*gpu=*/nullptr,
                        config.simulated};
  for (int index = 0; index < cpu_devices; ++index) {
    cpu.name = DeviceName::full(def.job_name, 0, def.task_index, "CPU", index);
    st.devices.push_back(DeviceInfo{cpu.name, cpu.type, spawn_device_actor(self, cpu)});
  }
  // A GPU device per GPU the process sees (CUDA_VISIBLE_DEVICES), in a build with CUDA; its CPU
  // pool (host-memory kernels) has one thread, or is the shared pool of an in-process cluster.
  for (int ordinal = 0; ordinal < (config.simulated ? 0 : gpu_count()); ++ordinal) {
    auto gpu = open_gpu(ordinal);
    if (!gpu.ok()) {
      log_warning("/job:{}/task:{}: GPU:{} left out: {}", def.job_name, def.task_index, ordinal,
                  gpu.status().to_string());
      continue;
    }
    DeviceActorConfig config_gpu = cpu;
    config_gpu.name = DeviceName::full(def.job_name, 0, def.task_index, "GPU", ordinal);
    config_gpu.type = "GPU";
    config_gpu.intra_op_threads = 1;
    config_gpu.gpu = std::move(gpu).value();
    st.devices.push_back(
        DeviceInfo{config_gpu.name, config_gpu.type, spawn_device_actor(self, config_gpu)});
  }

  MasterServiceConfig master;
  master.directory = st.directory;
  master.default_device.job = def.job_name;
  master.default_device.replica = 0;
  master.default_device.task = def.task_index;
  master.default_session_config = def.default_session_config;
  master.plane = config.plane;
  st.master = spawn_master_service(self, std::move(master));
  if (const RoleFactory* role = RoleRegistry::global().find(def.job_name)) {
    st.role = (*role)(RoleContext{self, def, st.directory});
  }
  return {
      [=](get_devices_atom) { return self->state.devices; },
      [=](get_master_atom) { return self->state.master; },
      [=](get_directory_atom) { return self->state.directory; },
      [=](heartbeat_atom) { return caf::unit; },
      [=](get_role_atom) -> caf::result<caf::actor> {
        if (self->state.role == nullptr) {
          return to_caf_error(errors::NotFound("job '{}' has no role actor", job_name));
        }
        return self->state.role;
      },
  };
}

}  // namespace

caf::actor spawn_task_actor(caf::actor_system& system, TaskActorConfig config) {
  return system.spawn(task_behavior, std::move(config));
}

}  // namespace troupe
