// Custom roles: a job whose tasks run an actor of the user's own besides the standard server
// (an evaluator, a data feeder, a custom aggregator). Register a factory for the job name
// before starting servers; every server of that job — from `troupe node` or a LocalCluster —
// spawns the role actor, and any task reaches it by task name (Server::find_role, or the
// directory's resolve_role from inside the cluster).
//
//   RoleRegistry::global().register_role("metrics", [](const RoleContext& ctx) {
//     return ctx.parent->spawn<caf::linked>(metrics_behavior, ctx.server_def.task_name());
//   });
//
// Message types a role sends between processes must be registered on every node with
// add_message_types() before the first actor system starts (CAF drops unknown types).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/graph/cluster/server_def.hpp"

namespace troupe {

struct RoleContext {
  caf::local_actor* parent = nullptr;  // the task actor: spawn the role linked to it
  ServerDef server_def;                // the cluster and this task
  caf::actor directory;                // finds other tasks, devices and roles
};

// Returns the role actor; an invalid actor means the role could not start.
using RoleFactory = std::function<caf::actor(const RoleContext& context)>;

class RoleRegistry {
 public:
  static RoleRegistry& global();

  // InvalidArgument for a bad job name, AlreadyExists if the job has a role.
  Status register_role(const std::string& job_name, RoleFactory factory);
  // The factory for `job_name`, or nullptr.
  const RoleFactory* find(const std::string& job_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, RoleFactory> roles_;
};

}  // namespace troupe
