// replica_device_setter: TensorFlow's _ReplicaDeviceChooser and _RoundRobinStrategy.
#include "troupe/graph/device_setter.hpp"

#include <fmt/format.h>

#include <memory>

#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

PsStrategy round_robin_strategy(int num_tasks) {
  auto next = std::make_shared<int>(0);
  int tasks = num_tasks < 1 ? 1 : num_tasks;
  return [next, tasks](const NodeDef&) {
    int task = *next;
    *next = (task + 1) % tasks;
    return task;
  };
}

const std::set<std::string>& standard_ps_ops() {
  static const std::set<std::string> ops = {
      "Variable",
      "VariableV2",
      "AutoReloadVariable",
      "MutableHashTable",
      "MutableHashTableV2",
      "MutableHashTableOfTensors",
      "MutableHashTableOfTensorsV2",
      "MutableDenseHashTable",
      "MutableDenseHashTableV2",
      "VarHandleOp",
      "BoostedTreesEnsembleResourceHandleOp",
      "BoostedTreesQuantileStreamResourceHandleOp",
      "ResourceConditionalAccumulator",
      "DecisionTreeResource",
  };
  return ops;
}

StatusOr<DeviceFunction> replica_device_setter(const ReplicaDeviceSetterOptions& options) {
  auto ps_device = DeviceName::parse(options.ps_device);
  if (!ps_device.ok()) {
    return ps_device.status().with_context("replica_device_setter: option ps_device");
  }
  auto worker_device = DeviceName::parse(options.worker_device);
  if (!worker_device.ok()) {
    return worker_device.status().with_context("replica_device_setter: option worker_device");
  }
  if (options.ps_tasks < 0) {
    return errors::InvalidArgument(
        "replica_device_setter: option ps_tasks is {}, expected a number of tasks >= 0",
        options.ps_tasks);
  }
  int ps_tasks = options.ps_tasks;
  if (options.cluster) {
    ps_tasks = 0;
    if (ps_device->job && options.cluster->has_job(*ps_device->job)) {
      ps_tasks = options.cluster->num_tasks(*ps_device->job).value();
    }
  }
  if (ps_tasks == 0) {
    return DeviceFunction([](const NodeDef& node) { return node.device; });
  }
  PsStrategy strategy = options.ps_strategy ? options.ps_strategy : round_robin_strategy(ps_tasks);
  bool place_ps_ops = !options.ps_device.empty();
  return DeviceFunction([ps = *ps_device, worker = *worker_device, ps_ops = options.ps_ops,
                         strategy = std::move(strategy), place_ps_ops](const NodeDef& node) {
    auto parsed = DeviceName::parse(node.device);
    // A malformed node.device is left for the scope to report.
    if (!parsed.ok()) return node.device;
    const DeviceName& current = *parsed;
    if (place_ps_ops && ps_ops.count(node.op) > 0) {
      DeviceName chosen = ps;
      if (chosen.job && (!current.job || current.job == chosen.job)) {
        chosen.task = strategy(node);
        // Not a device: the scope fails the node, naming it.
        if (*chosen.task < 0) return fmt::format("(ps_strategy returned task {})", *chosen.task);
      }
      return DeviceName::merge_overriding(chosen, current).to_string();
    }
    return DeviceName::merge_overriding(worker, current).to_string();
  });
}

StatusOr<DeviceFunction> replica_device_setter(const ClusterSpec& cluster,
                                               std::string worker_device) {
  ReplicaDeviceSetterOptions options;
  options.cluster = cluster;
  options.worker_device = std::move(worker_device);
  return replica_device_setter(options);
}

}  // namespace troupe
