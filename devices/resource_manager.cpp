// ResourceManager: variables and containers.
#include "troupe/devices/resource_manager.hpp"

namespace troupe {

StatusOr<std::shared_ptr<Variable>> ResourceManager::lookup_or_create_variable(
    const std::string& container, const std::string& name, DataType dtype,
    const PartialShape& shape) {
  return lookup_or_create<Variable>(
      container, name,
      [&]() -> StatusOr<std::shared_ptr<Variable>> {
        return std::make_shared<Variable>(name, dtype, shape);
      },
      [&](const Variable& existing) -> Status {
        if (existing.dtype() == dtype && existing.declared_shape().compatible_with(shape)) {
          return Status::OK();
        }
        return errors::InvalidArgument(
            "variable '{}' already exists as {} {}, cannot use it as {} {}", name,
            dtype_name(existing.dtype()), existing.declared_shape().to_string(), dtype_name(dtype),
            shape.to_string());
      });
}

std::shared_ptr<Resource> ResourceManager::find(const std::string& container,
                                                const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto resources = containers_.find(container);
  if (resources == containers_.end()) return nullptr;
  auto it = resources->second.find(name);
  return it == resources->second.end() ? nullptr : it->second;
}

void ResourceManager::clear(const std::string& container) {
  Resources dropped;
  {
    std::lock_guard lock(mutex_);
    auto it = containers_.find(container);
    if (it == containers_.end()) return;
    dropped = std::move(it->second);
    containers_.erase(it);
  }
  // `dropped` goes here, unlocked: a resource's destructor may wait for threads that look up.
}

size_t ResourceManager::size() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [container, resources] : containers_)
    n += resources.size();
  return n;
}

}  // namespace troupe
