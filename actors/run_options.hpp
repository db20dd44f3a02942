// RunOptions and RunMetadata: per-call settings of Session::run, and what a call reports back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

struct RunOptions {
  // Fail the step with DeadlineExceeded if it has not finished after this many milliseconds.
  // 0 uses the session's default (SessionConfig::operation_timeout_ms; 0 there means none,
  // and Session::close() is then the way to stop a step).
  int64_t timeout_ms = 0;
  // A name the client gives the step (non-zero), so that Session::cancel_step(step_tag), from
  // another thread, can cancel it alone (the Python module does on Ctrl-C). 0: none.
  int64_t step_tag = 0;
};

struct RunMetadata {
  std::vector<std::string> devices;  // the devices the step ran on, one partition each
  int64_t tensors_to_master = 0;     // tensors the master session received for the step
  int64_t bytes_to_master = 0;       // their element bytes
};

}  // namespace troupe
