// PartitionRunHook: what a device does with each partition run it is asked for. The runtime
// asks a task's hook, when it has one (ServerOptions::faults), before each run: run it, drop it
// (never answered), delay it (it starts later, on a timer of the actor system's clock, while the
// device goes on with other messages), or stop answering as if the task had died. The simulation
// library's fault injector is one (actors/sim/fault_injector.hpp); nodes have none.
#pragma once

#include <chrono>

namespace troupe {

class PartitionRunHook {
 public:
  enum class Action { kRun, kDrop, kDelay, kKill };

  virtual ~PartitionRunHook() = default;

  // For each run_partition a device of the task receives; sets `delay` for kDelay. Called from
  // the devices' actors, possibly at once: thread-safe.
  virtual Action on_run_partition(std::chrono::milliseconds* delay) = 0;
};

}  // namespace troupe
