// OpRegistry: registration, lookup, and the global registry's built-in ops.
#include "troupe/graph/op_registry.hpp"

#include <algorithm>
#include <mutex>

#include "troupe/graph/ops/standard_ops.hpp"

namespace troupe {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();  // never destroyed: ops may be looked up during shutdown
    register_standard_ops(*r);
    return r;
  }();
  return *registry;
}

Status OpRegistry::register_op(const OpDefBuilder& builder) {
  TROUPE_ASSIGN_OR_RETURN(OpDef def, builder.build());
  std::unique_lock lock(mutex_);
  if (ops_.count(def.name) > 0) {
    return errors::AlreadyExists("op '{}' is already registered", def.name);
  }
  std::string name = def.name;
  ops_.emplace(std::move(name), std::make_unique<OpDef>(std::move(def)));
  return Status::OK();
}

const OpDef* OpRegistry::find(std::string_view name) const {
  std::shared_lock lock(mutex_);
  auto it = ops_.find(std::string(name));
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::op_names() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, def] : ops_)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace troupe
