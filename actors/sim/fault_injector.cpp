// FaultInjector: which partition runs of a task a simulated fault hits.
#include "troupe/actors/sim/fault_injector.hpp"

#include <random>

#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

Status Fault::validate(const ClusterSpec& cluster) const {
  if (!cluster.task_address(job, task).ok()) {
    return errors::InvalidArgument("fault for {}: the cluster has no such task ({})",
                                   DeviceName::task_name(job, task), cluster.to_string());
  }
  if (at_partition < 1 || times < 1 || delay.count() < 0) {
    return errors::InvalidArgument(
        "fault {}: expected at_partition >= 1, times >= 1 and delay >= 0", to_string());
  }
  if ((kind == FaultKind::kFreeze || kind == FaultKind::kPartition) && delay.count() <= 0) {
    return errors::InvalidArgument("fault {}: a {} needs a delay > 0 (how long)", to_string(),
                                   kind == FaultKind::kFreeze ? "freeze" : "partition");
  }
  return Status::OK();
}

std::string Fault::to_string() const {
  std::string task_name = DeviceName::task_name(job, task);
  switch (kind) {
    case FaultKind::kKill:
      return fmt::format("kill {} at partition run {}", task_name, at_partition);
    case FaultKind::kDrop:
      return fmt::format("drop {} partition run(s) of {} from run {}", times, task_name,
                         at_partition);
    case FaultKind::kDelay:
      return fmt::format("delay {} partition run(s) of {} by {} ms from run {}", times, task_name,
                         delay.count(), at_partition);
    case FaultKind::kFreeze:
      return fmt::format("freeze {} for {} ms at partition run {}", task_name, delay.count(),
                         at_partition);
    case FaultKind::kPartition:
      return fmt::format("cut {} off the network for {} ms at partition run {}", task_name,
                         delay.count(), at_partition);
  }
  return "unknown fault";
}

Fault Fault::random(uint64_t seed, const ClusterSpec& cluster, int max_partition,
                    bool deterministic) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, int>> tasks;
  for (const std::string& job : cluster.jobs()) {
    for (int index : cluster.task_indices(job).value())
      tasks.emplace_back(job, index);
  }
  Fault fault;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::tie(fault.job, fault.task) = tasks[pick(static_cast<int>(tasks.size()))];
  fault.kind = static_cast<FaultKind>(pick(3));
  fault.at_partition = 1 + pick(std::max(max_partition, 1));
  fault.times = 1 + pick(3);
  fault.delay = std::chrono::milliseconds(50 + pick(351));
  // Drawn after the others, so that a seed gives a LocalCluster the same faults as before.
  if (deterministic && pick(3) == 0) {
    fault.kind = pick(2) == 0 ? FaultKind::kFreeze : FaultKind::kPartition;
    fault.times = 1;
    fault.delay = std::chrono::milliseconds(100 + pick(2901));
  }
  return fault;
}

FaultInjector::FaultInjector(Fault fault, std::function<void()> kill,
                             std::function<void(FaultKind, std::chrono::milliseconds)> suspend)
    : fault_(std::move(fault)), kill_(std::move(kill)), suspend_(std::move(suspend)) {}

FaultInjector::Action FaultInjector::on_run_partition(std::chrono::milliseconds* delay) {
  std::lock_guard lock(mutex_);
  int run = ++runs_;
  if (run < fault_.at_partition) return Action::kRun;
  switch (fault_.kind) {
    case FaultKind::kKill:
      if (run == fault_.at_partition) kill_();
      return Action::kKill;  // a dead task answers nothing
    case FaultKind::kDrop:
      return run < fault_.at_partition + fault_.times ? Action::kDrop : Action::kRun;
    case FaultKind::kDelay:
      if (run >= fault_.at_partition + fault_.times) return Action::kRun;
      *delay = fault_.delay;
      return Action::kDelay;
    case FaultKind::kFreeze:
      if (run != fault_.at_partition || suspend_ == nullptr) return Action::kRun;
      suspend_(FaultKind::kFreeze, fault_.delay);
      *delay = fault_.delay;
      return Action::kDelay;
    case FaultKind::kPartition:
      // The run goes on; what it sends to other tasks waits for the network to heal.
      if (run == fault_.at_partition && suspend_ != nullptr)
        suspend_(FaultKind::kPartition, fault_.delay);
      return Action::kRun;
  }
  return Action::kRun;
}

}  // namespace troupe
