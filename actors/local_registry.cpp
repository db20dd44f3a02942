// The process-local registry of servers.
#include "troupe/actors/local_registry.hpp"

#include <map>
#include <mutex>

namespace troupe {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, LocalTask> tasks;
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
  r.tasks.emplace(name, std::move(task));
  return name;
}

bool register_local_address(const std::string& address, LocalTask task) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.tasks.emplace(normalize(address), std::move(task)).second;
}

void unregister_local_task(const caf::actor& task) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.tasks, [&](const auto& entry) { return entry.second.task == task; });
}

std::optional<LocalTask> find_local_task(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.tasks.find(normalize(name));
  if (it == r.tasks.end()) return std::nullopt;
  return it->second;
}

}  // namespace troupe
