// Simulated faults for a task of an in-process cluster (LocalClusterOptions::faults,
// DeterministicOptions::faults): the task dies, or the partitions its devices are asked to run
// are dropped (never answered) or delayed, from the n-th one on; or, in a deterministic
// simulation only, the whole task freezes for a while (a process stopped, or a machine
// swapping: none of its actors runs, messages to it wait), or its network is cut for a while
// (messages between it and every other task wait until it heals, as TCP would hold them). A test
// runs a job under many seeded faults and checks that each run ends with the right result or a
// typed error, and never hangs.
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

enum class FaultKind { kKill, kDrop, kDelay, kFreeze, kPartition };

struct Fault {
  std::string job;
  int task = 0;
  FaultKind kind = FaultKind::kKill;
  int at_partition = 1;  // fires at the n-th partition run the task is asked for (1-based)
  int times = 1;         // kDrop, kDelay: how many partition runs from there it affects
  std::chrono::milliseconds delay{100};  // kDelay: how long each affected run waits; kFreeze,
                                         // kPartition: how long the task stays frozen or cut off

  // InvalidArgument naming the field, or a task `cluster` does not have.
  Status validate(const ClusterSpec& cluster) const;
  std::string to_string() const;

  // A fault drawn from `seed`: any task of `cluster`, any kind (kFreeze and kPartition too if
  // `deterministic`), at a partition run in 1..`max_partition`, affecting 1..3 runs, delays of
  // 50..400 ms, freezes and partitions of 100..3000 ms. Same seed, same fault.
  static Fault random(uint64_t seed, const ClusterSpec& cluster, int max_partition,
                      bool deterministic = false);
};

// Counts the partition runs of one task (all its devices) and says what to do with each: the
// task's PartitionRunHook. Thread-safe.
class FaultInjector : public PartitionRunHook {
 public:
  // `kill` stops the task; it is called once, when a kKill fault fires, and must not block.
  // `suspend` freezes the task or cuts its network (the fault's kind says which) for the given
  // time, once, when a kFreeze or kPartition fault fires (a frozen task's run that fired it is
  // delayed as long); those faults need one, and must not block either.
  FaultInjector(Fault fault, std::function<void()> kill,
                std::function<void(FaultKind, std::chrono::milliseconds)> suspend = nullptr);

  // For each run_partition a device of the task receives; `delay` is set for kDelay.
  Action on_run_partition(std::chrono::milliseconds* delay) override;
  const Fault& fault() const { return fault_; }

 private:
  const Fault fault_;
  std::function<void()> kill_;
  std::function<void(FaultKind, std::chrono::milliseconds)> suspend_;
  std::mutex mutex_;
  int runs_ = 0;
};

}  // namespace troupe
