// Scope: name prefixes, unique names, the device stack and colocation, control dependencies,
// sticky errors.
#include "troupe/graph/scope.hpp"

#include <algorithm>

#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

Scope Scope::new_root() {
  return Scope(std::make_shared<State>(std::make_shared<Graph>()));
}

std::string Scope::unique(std::string name) const {
  auto taken = [&](const std::string& n) {
    return graph().find(n) != nullptr || state_->name_counts.count(n) > 0;
  };
  if (!taken(name)) {
    state_->name_counts[name] = 0;
    return name;
  }
  int& count = state_->name_counts[name];
  std::string candidate;
  do {
    candidate = name + "_" + std::to_string(++count);
  } while (taken(candidate));
  state_->name_counts[candidate] = 0;
  return candidate;
}

Scope Scope::sub_scope(std::string_view name) const {
  Scope child = *this;
  child.op_name_.clear();
  if (!name.empty()) child.prefix_ = unique(prefix_ + std::string(name)) + "/";
  return child;
}

Scope Scope::with_op_name(std::string_view name) const {
  Scope child = *this;
  child.op_name_ = std::string(name);
  return child;
}

Scope Scope::with_device(std::string_view device) const {
  Scope child = *this;
  child.device_layers_.push_back(DeviceLayer{std::string(device), nullptr});
  return child;
}

Scope Scope::with_device_function(DeviceFunction fn) const {
  Scope child = *this;
  if (fn) child.device_layers_.push_back(DeviceLayer{{}, std::move(fn)});
  return child;
}

Scope Scope::on_device_of(Operation op) const {
  Scope child = *this;
  if (!op.valid()) {
    update_status(errors::InvalidArgument(
        "Scope::on_device_of: the operation is not valid (expected a node built in this graph)"));
    return child;
  }
  child.device_layers_.clear();
  child.colocation_device_ = op.node()->requested_device();
  return child;
}

Scope Scope::colocate_with(Operation op) const {
  Scope child = *this;
  if (!op.valid()) {
    update_status(errors::InvalidArgument(
        "Scope::colocate_with: the operation is not valid (expected a node built in this graph)"));
    return child;
  }
  // TensorFlow's Operation.colocation_groups(): the op's own loc:@ entries, else its name.
  std::vector<std::string> groups;
  const AttrValue* attr = op.node()->def().find_attr(kColocationAttr);
  if (attr != nullptr && attr->holds<std::vector<std::string>>()) {
    for (const std::string& entry : attr->get<std::vector<std::string>>()) {
      if (entry.starts_with(kColocationGroupPrefix)) groups.push_back(entry);
    }
  }
  if (groups.empty()) groups.push_back(std::string(kColocationGroupPrefix) + op.name());
  for (std::string& group : groups) {
    auto it =
        std::lower_bound(child.colocation_groups_.begin(), child.colocation_groups_.end(), group);
    if (it == child.colocation_groups_.end() || *it != group) {
      child.colocation_groups_.insert(it, std::move(group));
    }
  }
  // colocate_with resets the device stack; the op's device (else an enclosing one's) is the base.
  child.device_layers_.clear();
  if (!op.node()->requested_device().empty()) {
    child.colocation_device_ = op.node()->requested_device();
  }
  return child;
}

Scope Scope::with_control_dependencies(const std::vector<Operation>& ops) const {
  Scope child = *this;
  child.control_deps_.insert(child.control_deps_.end(), ops.begin(), ops.end());
  return child;
}

Scope Scope::without_control_dependencies() const {
  Scope child = *this;
  child.control_deps_.clear();
  return child;
}

std::string Scope::device() const {
  DeviceName current;
  if (auto base = DeviceName::parse(colocation_device_); base.ok()) current = *base;
  for (auto layer = device_layers_.rbegin(); layer != device_layers_.rend(); ++layer) {
    if (layer->function) continue;
    if (auto parsed = DeviceName::parse(layer->device); parsed.ok()) {
      current = DeviceName::merge_overriding(*parsed, current);
    }
  }
  return current.to_string();
}

Status Scope::assign_device(NodeDef& node) const {
  auto base = DeviceName::parse(colocation_device_);
  if (!base.ok()) {
    return base.status().with_context(
        fmt::format("node '{}' ({}): device of the op it is colocated with", node.name, node.op));
  }
  DeviceName current = *base;
  // Innermost layer first, as TensorFlow applies its device stack.
  for (auto layer = device_layers_.rbegin(); layer != device_layers_.rend(); ++layer) {
    if (!layer->function) {
      auto parsed = DeviceName::parse(layer->device);
      if (!parsed.ok()) {
        return parsed.status().with_context(
            fmt::format("node '{}' ({}): device given to Scope::with_device", node.name, node.op));
      }
      current = DeviceName::merge_overriding(*parsed, current);
      continue;
    }
    node.device = current.to_string();
    std::string chosen = layer->function(node);
    auto parsed = DeviceName::parse(chosen);
    if (!parsed.ok()) {
      return parsed.status().with_context(
          fmt::format("node '{}' ({}): device returned by a device function", node.name, node.op));
    }
    current = *parsed;
  }
  node.device = current.to_string();
  return Status::OK();
}

void Scope::update_status(const Status& status) const {
  if (state_->status.ok() && !status.ok()) state_->status = status;
}

Scope Scope::with_name_prefix(std::string prefix) const {
  Scope result = *this;
  result.prefix_ = std::move(prefix);
  result.op_name_.clear();
  return result;
}

Status Scope::take_status() const {
  Status status = std::move(state_->status);
  state_->status = Status::OK();
  return status;
}

std::string Scope::make_node_name(std::string_view default_name) const {
  return unique(prefix_ + (op_name_.empty() ? std::string(default_name) : op_name_));
}

}  // namespace troupe
