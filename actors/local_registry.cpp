// The process-local registry of servers.
#include "troupe/actors/local_registry.hpp"

#include <map>
#include <mutex>
#include <vector>

namespace troupe {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, LocalTask> tasks;
  std::map<caf::actor, std::vector<std::string>> names_of;  // each task's names in `tasks`
  int next = 1;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: servers may stop during exit
  return *r;
}

std::string normalize(const std::string& name) {
  constexpr std::string_view kScheme = "troupe://";
  if (name.rfind(kScheme, 0) == 0) return name.substr(kScheme.size());
  return name;
}

}  // namespace

std::string register_inproc_target(LocalTask task) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::string name = "inproc://" + std::to_string(r.next++);
  r.names_of[task.task].push_back(name);
  r.tasks.emplace(name, std::move(task));
  return name;
}

bool register_local_address(const std::string& address, LocalTask task) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::string name = normalize(address);
  caf::actor actor = task.task;
  if (!r.tasks.emplace(name, std::move(task)).second) return false;
  r.names_of[actor].push_back(std::move(name));
  return true;
}

void unregister_local_task(const caf::actor& task) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto names = r.names_of.find(task);
  if (names == r.names_of.end()) return;
  for (const std::string& name : names->second)
    r.tasks.erase(name);
  r.names_of.erase(names);
}

std::string in_process_task_name(const std::string& group, const std::string& job, int index) {
  // "group:" keeps these apart from addresses and inproc:// targets.
  return "group:" + group + "/job:" + job + "/task:" + std::to_string(index);
}

bool register_in_process_task(const std::string& name, LocalTask task) {
  return register_local_address(name, std::move(task));
}

std::optional<LocalTask> find_local_task(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.tasks.find(normalize(name));
  if (it == r.tasks.end()) return std::nullopt;
  return it->second;
}

}  // namespace troupe
