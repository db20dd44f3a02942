// The benchmarks of troupe_bench, one function each (bench_main.cpp dispatches). Each prints
// its series as JSON lines (report.hpp). `quick` runs fewer samples and sizes (a smoke run).
#pragma once

#include <string>

namespace troupe::bench {

struct BenchOptions {
  std::string self;  // this executable, for child processes
  bool quick = false;
  // The kernels benchmark takes this share (1 / rounds) of its samples: scripts/bench.sh runs
  // it in rounds alternating with its PyTorch peer's, so both see the same moments of a noisy
  // machine.
  int rounds = 1;
};

void transfer_bench(const BenchOptions& options);
void memory_bench(const BenchOptions& options);
void latency_bench(const BenchOptions& options);
void executor_bench(const BenchOptions& options);
void kernel_bench(const BenchOptions& options);
void scale_bench(const BenchOptions& options);
void training_bench(const BenchOptions& options);
void simulation_bench(const BenchOptions& options);

// The child processes the benchmarks start.
int tcp_peer_main(int argc, char** argv);
int scale_run_main(int tasks);
int simulation_scale_run_main(int tasks);
int training_worker_main(int argc, char** argv);

}  // namespace troupe::bench
