// StepContext: what one execution of a partition reads and writes besides its kernels'
// inputs and outputs: the fed tensors (_Arg), the fetched ones (_Retval), the variable
// container of the session that runs it, the rendezvous for cross-device edges, cancellation,
// and how deferred work gets back onto the device's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "troupe/devices/cancellation.hpp"
#include "troupe/devices/rendezvous.hpp"
#include "troupe/devices/resource.hpp"
#include "troupe/devices/step_stats.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

struct StepContext {
  int64_t step_id = 0;
  std::string container;     // resource container ("" = shared by all sessions)
  std::vector<Tensor> args;  // read by _Arg nodes, by index
  std::vector<Tensor> rets;  // written by _Retval nodes, by index
  // Written by _RetvalRef nodes (a function body returning a dataset), by the same index.
  std::vector<std::shared_ptr<Resource>> ret_refs;
  Rendezvous* rendezvous = nullptr;  // not owned; required by _Send/_Recv
  CancellationManager cancellation;
  // Runs `work` later on the device's thread, outside any kernel. Async kernels complete
  // through it, so a completion never runs a step from inside another step's kernel.
  std::function<void(std::function<void()>)> schedule;
  // When set (a traced step: RunOptions::trace_level), the executor appends a NodeExecStats
  // for each node it runs, in the order they finish (step_stats.hpp). Not owned.
  std::vector<NodeExecStats>* stats = nullptr;
  // Long-running kernels (a While loop) give the device back between slices of their work, so
  // that other messages (a cancellation) get in: slices of about 2 ms of wall time when 0, of
  // this many iterations otherwise (a deterministic simulation, whose runs must not depend on
  // how fast the machine is).
  int64_t slice_iterations = 0;
};

}  // namespace troupe
