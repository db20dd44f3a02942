// Test helpers: run a program as a child process with a deadline and capture its output, or
// keep one running (a node of a test cluster) and read its output as it comes. Children are
// killed by PID when they outlive their deadline or their owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace troupe::testing {

struct ProcessResult {
  int exit_code = -1;      // -1 if killed by a signal
  bool timed_out = false;  // killed because it outlived the deadline
  std::string out;         // stdout and stderr, interleaved
};

// How many times `needle` occurs in `text`.
size_t count_of(const std::string& text, const std::string& needle);

// Runs to the end (or kills at the deadline).
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_ms,
                          const std::vector<std::string>& extra_env = {});

class ChildProcess {
 public:
  // Starts `argv` with `extra_env` ("NAME=value") added to the environment.
  ChildProcess(const std::vector<std::string>& argv,
               const std::vector<std::string>& extra_env = {});
  ~ChildProcess();  // SIGKILL if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads output until it contains `needle` (true) or the deadline passes or the child closes
  // its output (false).
  bool wait_for(const std::string& needle, int timeout_ms);
  // The same, until the output contains `needle` `times` times.
  bool wait_for_count(const std::string& needle, size_t times, int timeout_ms);
  // Sends `signal` (0: none), then waits up to `timeout_ms` for the exit (SIGKILL after that).
  ProcessResult stop(int signal, int timeout_ms);
  pid_t pid() const { return pid_; }
  // The child closed its output (it has exited, or is about to).
  bool output_closed() const { return fd_ < 0; }
  const std::string& output() const { return out_; }

 private:
  void read_available(int timeout_ms);
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string out_;
  bool exited_ = false;
};

}  // namespace troupe::testing
