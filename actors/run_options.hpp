// RunOptions and RunMetadata: per-call settings of Session::run, and what a call reports back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "troupe/devices/step_stats.hpp"
#include "troupe/graph/graph_def.hpp"

namespace troupe {

struct RunOptions {
  // Fail the step with DeadlineExceeded if it has not finished after this many milliseconds.
  // 0 uses the session's default (SessionConfig::operation_timeout_ms; 0 there means none,
  // and Session::close() is then the way to stop a step).
  int64_t timeout_ms = 0;
  // A name the client gives the step (non-zero), so that Session::cancel_step(step_tag), from
  // another thread, can cancel it alone (the Python module does on Ctrl-C). 0: none.
  int64_t step_tag = 0;
  // Above kNoTrace, every device of the step records when each of its nodes ran and what it
  // produced, and RunMetadata::step_stats brings it back (TensorFlow's RunOptions.trace_level).
  TraceLevel trace_level = TraceLevel::kNoTrace;
  // RunMetadata::partition_graphs gets the graph each device ran (TensorFlow's
  // RunOptions.output_partition_graphs).
  bool output_partition_graphs = false;
};

struct RunMetadata {
  std::vector<std::string> devices;  // the devices the step ran on, one partition each
  int64_t tensors_to_master = 0;     // tensors the master session received for the step
  int64_t bytes_to_master = 0;       // their element bytes
  // A traced step's statistics (RunOptions::trace_level), one entry per device, in the order of
  // `devices`; empty otherwise.
  std::vector<DeviceStepStats> step_stats;
  // With RunOptions::output_partition_graphs, the partition each device ran (its _Send, _Recv,
  // _Arg and _Retval nodes included), in the order of `devices`; empty otherwise.
  std::vector<GraphDef> partition_graphs;
};

}  // namespace troupe
