// OpRegistry: the ops a graph may use, by name.
//
// The global registry holds every built-in op (graph/ops/) and takes users' own ops; it is
// safe to use from several threads.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "troupe/graph/op_def.hpp"

namespace troupe {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry with all built-in ops registered.
  static OpRegistry& global();

  // AlreadyExists if an op of that name is registered; InvalidArgument for a malformed spec
  // (naming the op and the spec); Internal if the definition is inconsistent.
  Status register_op(const OpDefBuilder& builder);

  // The op named `name`, or nullptr. Definitions live as long as the registry.
  const OpDef* find(std::string_view name) const;

  std::vector<std::string> op_names() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<OpDef>> ops_;
};

}  // namespace troupe
