// troupe_bench: runs benchmarks by name and prints their series as JSON lines (report.hpp);
// scripts/bench.sh runs them all and writes docs/PERFORMANCE.md. Also the entry point of the
// child processes the benchmarks start.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "benchmarks.hpp"
#include "troupe/graph/core/status.hpp"

namespace {

constexpr char kUsage[] =
    "usage: troupe_bench [--quick] [--rounds=N] <benchmark>...\n"
    "benchmarks: transfer memory latency executor kernels scale simulation training all\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace troupe::bench;
  std::string first = argc > 1 ? argv[1] : "";
  // Child processes.
  if (first == "tcp-peer") return tcp_peer_main(argc - 2, argv + 2);
  if (first == "scale-run" && argc == 3) return scale_run_main(std::stoi(argv[2]));
  if (first == "sim-scale-run" && argc == 3) return simulation_scale_run_main(std::stoi(argv[2]));
  if (first == "train-worker" && argc >= 4) return training_worker_main(argc - 2, argv + 2);

  const std::map<std::string, void (*)(const BenchOptions&)> benchmarks = {
      {"transfer", transfer_bench},     {"memory", memory_bench},    {"latency", latency_bench},
      {"executor", executor_bench},     {"kernels", kernel_bench},   {"scale", scale_bench},
      {"simulation", simulation_bench}, {"training", training_bench}};
  BenchOptions options;
  options.self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> chosen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg.starts_with("--rounds=")) {
      options.rounds = std::atoi(arg.c_str() + 9);
      if (options.rounds < 1) {
        std::cerr << "troupe_bench: " << arg << " is not a count of rounds (>= 1)\n" << kUsage;
        return 2;
      }
    } else if (arg == "all") {
      for (const auto& [name, run] : benchmarks)
        chosen.push_back(name);
    } else if (benchmarks.count(arg) != 0) {
      chosen.push_back(arg);
    } else {
      std::cerr << "troupe_bench: unknown benchmark '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (chosen.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  for (const std::string& name : chosen) {
    try {
      std::cerr << "troupe_bench: " << name << std::endl;
      benchmarks.at(name)(options);
    } catch (const std::exception& e) {
      std::cerr << "troupe_bench: " << name << " failed: " << e.what() << "\n";
      return 1;
    }
  }
  return 0;
}
