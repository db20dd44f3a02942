// Simulated faults for a task of an in-process cluster (LocalClusterOptions::faults): the task
// dies, or the partitions its devices are asked to run are dropped (never answered) or
// delayed, from the n-th one on. A test runs a job under many seeded faults and checks that
// each run ends with the right result or a typed error, and never hangs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "troupe/actors/partition_run_hook.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

enum class FaultKind { kKill, kDrop, kDelay };

struct Fault {
  std::string job;
  int task = 0;
  FaultKind kind = FaultKind::kKill;
  int at_partition = 1;  // fires at the n-th partition run the task is asked for (1-based)
  int times = 1;         // kDrop, kDelay: how many partition runs from there it affects
  std::chrono::milliseconds delay{100};  // kDelay: how long each affected run waits

  // InvalidArgument naming the field, or a task `cluster` does not have.
  Status validate(const ClusterSpec& cluster) const;
  std::string to_string() const;

  // A fault drawn from `seed`: any task of `cluster`, any kind, at a partition run in
  // 1..`max_partition`, affecting 1..3 runs, delays of 50..400 ms. Same seed, same fault.
  static Fault random(uint64_t seed, const ClusterSpec& cluster, int max_partition);
};

// Counts the partition runs of one task (all its devices) and says what to do with each: the
// task's PartitionRunHook. Thread-safe.
class FaultInjector : public PartitionRunHook {
 public:
  // `kill` stops the task; it is called once, when a kKill fault fires, and must not block.
  FaultInjector(Fault fault, std::function<void()> kill);

  // For each run_partition a device of the task receives; `delay` is set for kDelay.
  Action on_run_partition(std::chrono::milliseconds* delay) override;
  const Fault& fault() const { return fault_; }

 private:
  const Fault fault_;
  std::function<void()> kill_;
  std::mutex mutex_;
  int runs_ = 0;
};

}  // namespace troupe
