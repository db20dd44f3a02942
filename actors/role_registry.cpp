// RoleRegistry: job name -> role actor factory.
#include "troupe/actors/role_registry.hpp"

#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

RoleRegistry& RoleRegistry::global() {
  static RoleRegistry* registry = new RoleRegistry();  // never destroyed: used until exit
  return *registry;
}

Status RoleRegistry::register_role(const std::string& job_name, RoleFactory factory) {
  if (!is_valid_job_name(job_name)) {
    return errors::InvalidArgument("role job name '{}' is not a job name ([A-Za-z][A-Za-z0-9_]*)",
                                   job_name);
  }
  std::lock_guard lock(mutex_);
  if (!roles_.emplace(job_name, std::move(factory)).second) {
    return errors::AlreadyExists("job '{}' already has a role", job_name);
  }
  return Status::OK();
}

const RoleFactory* RoleRegistry::find(const std::string& job_name) const {
  std::lock_guard lock(mutex_);
  auto it = roles_.find(job_name);
  return it == roles_.end() ? nullptr : &it->second;
}

}  // namespace troupe
