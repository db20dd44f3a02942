// GpuProfiler: where a GPU device's time goes, per op, for benchmarks and tuning. Made when the
// environment sets TROUPE_GPU_PROFILE (to anything but "" or "0"): for every kernel the device
// runs, the host time its launch took and the stream time between CUDA events recorded before
// and after it, summed per node; a table on stderr when the GPU closes. A node's first launch
// (where cuBLAS and cuDNN choose their kernels, and troupe measures convolutions) is shown
// apart from the others.
//
// The stream time of a kernel includes any wait of the stream for its launch (an idle GPU
// reaches the "before" event at once): where a kernel's stream time is close to its host time,
// the GPU was waiting for the host, not computing.
// Thread-safety: every member function may be called from any thread.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace troupe {

class GpuProfiler {
 public:
  // The profiler of GPU `ordinal` when TROUPE_GPU_PROFILE asks for one, else nullptr.
  static std::unique_ptr<GpuProfiler> from_environment(int ordinal, cudaStream_t stream);
  GpuProfiler(int ordinal, cudaStream_t stream) : ordinal_(ordinal), stream_(stream) {}
  // Waits for the stream and prints the table.
  ~GpuProfiler();
  GpuProfiler(const GpuProfiler&) = delete;
  GpuProfiler& operator=(const GpuProfiler&) = delete;

  // Brackets one kernel's launch: begin() before it, end() after it, on the same thread.
  struct Mark {
    cudaEvent_t before = nullptr;
    std::chrono::steady_clock::time_point host_start;
  };
  Mark begin();
  void end(const Mark& mark, const std::string& node, const std::string& op);

  // A line on stderr, beside the table (what a kernel chose, say).
  void note(std::string line);

 private:
  struct Pending {
    std::string node, op;
    cudaEvent_t before, after;
    double host_us;
  };
  struct Totals {
    std::string op;
    int64_t count = 0;  // after the first
    double first_host_us = -1, first_stream_us = 0;
    double host_us = 0, stream_us = 0;  // after the first
  };
  cudaEvent_t take_event_locked();
  // Adds the pending launches whose events have passed (all of them when `wait`).
  void resolve_locked(bool wait);

  const int ordinal_;
  const cudaStream_t stream_;
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_events_;
  std::deque<Pending> pending_;
  std::map<std::string, Totals> totals_;  // by node
  std::vector<std::string> notes_;
  cudaEvent_t first_ = nullptr;  // before the first launch
  cudaEvent_t last_ = nullptr;   // after the latest launch
};

}  // namespace troupe
