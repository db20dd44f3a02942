// simulation: the deterministic mode (actors/sim/deterministic_cluster.hpp). The training job
// of `troupe sim --deterministic` (1 ps + 4 workers, 1,000 steps each, 3 faults drawn from
// each seed) in wall time, run twice per seed to check the traces are the same; and
// deterministic clusters of 10,000 and 100,000 tasks (1 ps per 100), each size in a fresh child
// process (`troupe_bench sim-scale-run <n>`): start-up, resident memory per task, and one step
// touching every task, in wall time.
#include <fmt/core.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "apps/child_process.hpp"
#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/sim/deterministic_cluster.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/actors/sim/simulated_training.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {
namespace {

constexpr char kResultPrefix[] = "sim-scale-result ";

}  // namespace

int simulation_scale_run_main(int tasks) {
  set_log_level(LogLevel::kError);
  int num_ps = std::max(1, tasks / 100), num_workers = tasks - num_ps;
  ClusterSpec spec = value_or_throw(make_ps_worker_cluster(num_ps, num_workers, false));
  int64_t memory_before = resident_bytes();
  std::unique_ptr<DeterministicCluster> sim;
  double startup = seconds_of([&] { sim = value_or_throw(DeterministicCluster::start(spec)); });
  int64_t memory_after = resident_bytes();
  // Each worker makes a 1, the first ps adds them up.
  Scope all = Scope::new_root();
  std::vector<Input> ones;
  for (int w = 0; w < num_workers; ++w)
    ones.push_back(ops::Const(all.with_device(fmt::format("/job:worker/task:{}", w)), 1.0f));
  ops::AddN(all.with_device("/job:ps/task:0").with_op_name("sum"), ones);
  caf::actor session = value_or_throw(sim->create_session("worker", 0));
  throw_if_error(sim->extend(session, all.to_graph_def()));
  auto check = [&] {
    auto total = value_or_throw(sim->run(session, {}, {"sum:0"}));
    if (total.at(0).scalar<float>() != static_cast<float>(num_workers)) {
      throw std::runtime_error(fmt::format("the all-task step summed {} ones to {}", num_workers,
                                           total.at(0).scalar<float>()));
    }
  };
  double all_first = seconds_of(check);
  double all_again = seconds_of(check);
  nlohmann::json result = {
      {"startup_s", startup},
      {"bytes_per_task", static_cast<double>(memory_after - memory_before) / tasks},
      {"peak_bytes", static_cast<double>(peak_resident_bytes())},
      {"all_first_s", all_first},
      {"all_again_s", all_again},
      {"messages", static_cast<double>(sim->messages())}};
  std::cout << kResultPrefix << result.dump() << std::endl;
  return 0;
}

void simulation_bench(const BenchOptions& options) {
  set_log_level(LogLevel::kError);
  std::vector<double> wall, messages;
  int seeds = options.quick ? 1 : 5;
  for (int seed = 1; seed <= seeds; ++seed) {
    SimulatedTrainingOptions job;
    job.seed = static_cast<uint64_t>(seed);
    job.num_workers = 4;
    job.steps = options.quick ? 100 : 1000;
    job.faults = 3;
    SimulatedTrainingReport first, second;
    wall.push_back(seconds_of([&] { first = value_or_throw(run_simulated_training(job)); }));
    second = value_or_throw(run_simulated_training(job));
    if (first.trace_hash != second.trace_hash || first.messages != second.messages) {
      throw std::runtime_error(fmt::format("seed {}: two runs gave traces {:016x} and {:016x}",
                                           seed, first.trace_hash, second.trace_hash));
    }
    if (!first.ok()) {
      throw std::runtime_error(fmt::format("seed {}: {}", seed, first.violations.front()));
    }
    messages.push_back(static_cast<double>(first.messages));
  }
  std::string name =
      fmt::format("1 ps + 4 workers, {} steps each, 3 faults", options.quick ? 100 : 1000);
  report({"simulation", name, "troupe, deterministic run (wall time)", "s", wall});
  report({"simulation", name, "troupe, messages simulated", "messages", messages});

  std::vector<int> sizes = options.quick ? std::vector<int>{1000} : std::vector<int>{10000, 100000};
  for (int tasks : sizes) {
    std::vector<double> startup, memory, peak, all_first, all_again;
    for (int rep = 0; rep < (options.quick ? 1 : 3); ++rep) {
      auto run =
          testing::run_process({options.self, "sim-scale-run", std::to_string(tasks)}, 1800000);
      auto result = nlohmann::json::parse(
          child_result(run, kResultPrefix, fmt::format("sim-scale-run {}", tasks)));
      startup.push_back(result["startup_s"].template get<double>());
      memory.push_back(result["bytes_per_task"].template get<double>() / 1024);
      peak.push_back(result["peak_bytes"].template get<double>() / (1 << 30));
      all_first.push_back(result["all_first_s"].template get<double>());
      all_again.push_back(result["all_again_s"].template get<double>());
    }
    std::string size = fmt::format("{} tasks, deterministic", tasks);
    report({"simulation", size, "troupe, start-up", "s", startup});
    report({"simulation", size, "troupe, resident memory per task", "KiB", memory});
    report({"simulation", size, "troupe, peak resident memory", "GiB", peak});
    report({"simulation", size, "troupe, first step touching every task", "s", all_first});
    report({"simulation", size, "troupe, later step touching every task", "s", all_again});
  }
}

}  // namespace troupe::bench
