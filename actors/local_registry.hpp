// The process-local registry: servers living in this process, by in-process target
// ("inproc://<n>"), by cluster address ("host:port") and, for the tasks of an in-process
// cluster, by their group and task name, so sessions and peers in the same process reach them
// without the network.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>

namespace troupe {

class Runtime;

struct LocalTask {
  // Keeps the task's actor system alive for sessions that connect through the registry; null
  // for a task whose actor system its owner keeps (peers find it by task->home_system()).
  std::shared_ptr<Runtime> runtime;
  caf::actor task;  // the task actor
};

// Registers a server under a new "inproc://<n>" target and returns it.
std::string register_inproc_target(LocalTask task);
// Registers a server under its cluster address ("host:port"); AlreadyExists-style clashes
// replace nothing and return false.
bool register_local_address(const std::string& address, LocalTask task);
// The registry's name of task (job, index) of the in-process group `group` (LocalCluster's
// tasks are one group): its peers find it by this name, whatever its address (a port it has
// not bound yet, or a name that resolves nowhere).
std::string in_process_task_name(const std::string& group, const std::string& job, int index);
// Registers a server under its in-process name; false if the name is taken.
bool register_in_process_task(const std::string& name, LocalTask task);
// Removes every name registered for `task`.
void unregister_local_task(const caf::actor& task);

// The server registered as `name` ("inproc://<n>", "troupe://host:port" or "host:port").
std::optional<LocalTask> find_local_task(const std::string& name);

}  // namespace troupe
