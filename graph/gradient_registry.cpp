// GradientRegistry: registration, lookup, and the global registry's built-in gradients.
#include "troupe/graph/gradient_registry.hpp"

#include <algorithm>
#include <mutex>

#include "troupe/graph/core/check.hpp"
#include "troupe/graph/gradients/standard_gradients.hpp"

namespace troupe {

GradientRegistry& GradientRegistry::global() {
  static GradientRegistry* registry = [] {
    auto* r = new GradientRegistry();  // never destroyed, like OpRegistry::global()
    register_standard_gradients(*r);
    return r;
  }();
  return *registry;
}

Status GradientRegistry::register_gradient(std::string op, GradFn fn) {
  if (!fn) {
    return errors::InvalidArgument(
        "the gradient function for op '{}' is empty (use not_differentiable for an op without "
        "a gradient)",
        op);
  }
  std::unique_lock lock(mutex_);
  if (fns_.count(op) > 0) {
    return errors::AlreadyExists("op '{}' already has a gradient entry", op);
  }
  fns_.emplace(std::move(op), std::move(fn));
  return Status::OK();
}

Status GradientRegistry::not_differentiable(std::string op) {
  std::unique_lock lock(mutex_);
  if (fns_.count(op) > 0) {
    return errors::AlreadyExists("op '{}' already has a gradient entry", op);
  }
  fns_.emplace(std::move(op), GradFn());
  return Status::OK();
}

Status GradientRegistry::register_sparse_gradient(std::string op, SparseGradFn fn) {
  if (!fn) return errors::InvalidArgument("the sparse gradient function for op '{}' is empty", op);
  std::unique_lock lock(mutex_);
  auto dense = fns_.find(op);
  if (dense == fns_.end() || !dense->second) {
    return errors::NotFound("op '{}' has no gradient to add a sparse one to", op);
  }
  if (sparse_fns_.count(op) > 0) {
    return errors::AlreadyExists("op '{}' already has a sparse gradient", op);
  }
  sparse_fns_.emplace(std::move(op), std::move(fn));
  return Status::OK();
}

SparseGradFn GradientRegistry::lookup_sparse(std::string_view op) const {
  std::shared_lock lock(mutex_);
  auto it = sparse_fns_.find(std::string(op));
  return it == sparse_fns_.end() ? SparseGradFn() : it->second;
}

StatusOr<GradFn> GradientRegistry::lookup(std::string_view op) const {
  std::shared_lock lock(mutex_);
  auto it = fns_.find(std::string(op));
  if (it == fns_.end()) return errors::NotFound("no gradient is registered for op {}", op);
  return it->second;
}

std::vector<std::string> GradientRegistry::op_names() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, fn] : fns_)
    names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void must_register_gradient(GradientRegistry& registry, std::string op, GradFn fn) {
  TROUPE_CHECK_OK(registry.register_gradient(std::move(op), std::move(fn)));
}

void must_declare_not_differentiable(GradientRegistry& registry, std::string op) {
  TROUPE_CHECK_OK(registry.not_differentiable(std::move(op)));
}

void must_register_sparse_gradient(GradientRegistry& registry, std::string op, SparseGradFn fn) {
  TROUPE_CHECK_OK(registry.register_sparse_gradient(std::move(op), std::move(fn)));
}

Output op_input(const Operation& op, int i) {
  const Edge& edge = op.node()->inputs()[i];
  return Output(&op.node()->graph().node(edge.node), edge.index);
}

}  // namespace troupe
