// ResourceManager: the resources a device keeps between steps (variables, queues), by
// container and name.
//
// A container is a namespace: sessions that share state use the same one (""), a session with
// isolated state uses its own, and clearing a container drops its resources. Used from the
// owning device's thread and from threads its kernels start (a parallel map's calls, a
// prefetch's producer): every access holds one lock, so two threads making the same resource
// get one (a random op's generator: one stream); a cleared container's resources are destroyed
// outside it (an iterator's destructor joins threads that look resources up).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "troupe/devices/resource.hpp"
#include "troupe/devices/variable.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

class ResourceManager {
 public:
  // The resource `name` in `container`, made by `create` on first use. `check` vets an
  // existing one (e.g. same dtype and shape); a resource of another kind under the name is
  // InvalidArgument.
  template <class T, class Create, class Check>
  StatusOr<std::shared_ptr<T>> lookup_or_create(const std::string& container,
                                                const std::string& name, const Create& create,
                                                const Check& check) {
    // Found without copying either name: variable reads look up every step. `create` runs
    // under the lock (recursive: it may look other resources up).
    std::lock_guard lock(mutex_);
    auto& resources = containers_[container];
    auto it = resources.find(name);
    if (it == resources.end()) {
      TROUPE_ASSIGN_OR_RETURN(std::shared_ptr<T> made, create());
      resources.emplace(name, made);
      return made;
    }
    auto existing = std::dynamic_pointer_cast<T>(it->second);
    if (existing == nullptr) {
      return errors::InvalidArgument("'{}' already names {}, of another kind", name,
                                     it->second->debug_name());
    }
    TROUPE_RETURN_IF_ERROR(check(*existing));
    return existing;
  }

  // The variable `name` in `container`, created on first use. InvalidArgument if it exists
  // with another dtype or an incompatible shape (naming the variable and both declarations).
  StatusOr<std::shared_ptr<Variable>> lookup_or_create_variable(const std::string& container,
                                                                const std::string& name,
                                                                DataType dtype,
                                                                const PartialShape& shape);
  // nullptr if there is no such resource.
  std::shared_ptr<Resource> find(const std::string& container, const std::string& name) const;

  // Drops every resource of `container`.
  void clear(const std::string& container);
  size_t size() const;

 private:
  using Resources = std::map<std::string, std::shared_ptr<Resource>, std::less<>>;
  mutable std::recursive_mutex mutex_;
  std::map<std::string, Resources, std::less<>> containers_;
};

}  // namespace troupe
