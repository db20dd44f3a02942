// How benchmarks report: one JSON object per measured series on stdout, which
// bench/report.py turns into docs/PERFORMANCE.md (medians, spread, ratios to baselines).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "apps/child_process.hpp"

namespace troupe::bench {

// One series: `system` measured on `case_name` of benchmark `bench`, in `unit`.
struct Series {
  std::string bench;      // "transfer"
  std::string case_name;  // "1 MiB"
  std::string system;     // "troupe, two processes", "raw TCP, two processes"
  std::string unit;       // "GB/s", "us", ...
  std::vector<double> samples;
};

// Prints `series` as one JSON line and flushes.
void report(const Series& series);

// The rest of the last output line of a benchmark's child process that starts with `prefix`
// (how a child reports its result). Throws std::runtime_error naming `what` with the output if
// the child failed or printed no such line.
std::string child_result(const testing::ProcessResult& run, const std::string& prefix,
                         const std::string& what);

// Seconds taken by `work()`.
template <class Work>
double seconds_of(Work&& work) {
  auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// This process's resident memory now and at its peak, in bytes (/proc/<pid>/status).
int64_t resident_bytes(int pid = 0);
int64_t peak_resident_bytes(int pid = 0);
// The threads of this process now (/proc/self/status).
int process_threads();

}  // namespace troupe::bench
