// scale: in-process clusters (LocalCluster) of 10, 100 and 1,000 tasks — 1 ps per 100 tasks,
// the rest workers. Each size runs in a fresh child process (`troupe_bench scale-run <n>`), so
// memory figures start from nothing: start-up time, resident memory per task, and the time of
// one training-like step of each worker (read a counter on its ps, add one, assign it back).
#include <fmt/core.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/child_process.hpp"
#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/local_cluster.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::bench {
namespace {

constexpr char kResultPrefix[] = "scale-result ";

std::string ps_device(int index) {
  return fmt::format("/job:ps/task:{}", index);
}

}  // namespace

int scale_run_main(int tasks) {
  constexpr int kMaxSteppingWorkers = 1000;
  int num_ps = std::max(1, tasks / 100), num_workers = tasks - num_ps;
  int64_t memory_before = resident_bytes();
  std::unique_ptr<LocalCluster> cluster;
  double startup =
      seconds_of([&] { cluster = value_or_throw(LocalCluster::start(num_ps, num_workers)); });
  int64_t memory_after = resident_bytes();

  {  // initialise every ps's counter
    Scope root = Scope::new_root();
    std::vector<Operation> init;
    for (int p = 0; p < num_ps; ++p) {
      Scope ps = root.with_device(ps_device(p));
      Output v = ops::Variable(ps.with_op_name(fmt::format("counter{}", p)), PartialShape({}),
                               DataType::kFloat);
      init.push_back(ops::Assign(ps, v, 0.0f).op());
    }
    throw_if_error(value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))))
                       .run_targets(init));
  }
  struct Worker {
    Scope root = Scope::new_root();
    Operation step;
    std::unique_ptr<Session> session;
  };
  int stepping = std::min(num_workers, kMaxSteppingWorkers);
  std::vector<Worker> workers(static_cast<size_t>(stepping));
  for (int w = 0; w < stepping; ++w) {
    Worker& worker = workers[static_cast<size_t>(w)];
    int p = w % num_ps;
    Scope ps = worker.root.with_device(ps_device(p));
    Scope here = worker.root.with_device(fmt::format("/job:worker/task:{}", w));
    Output v = ops::Variable(ps.with_op_name(fmt::format("counter{}", p)), PartialShape({}),
                             DataType::kFloat);
    worker.step = ops::AssignAdd(ps, v, ops::Add(here, v, 1.0f)).op();
    // As TensorFlow's workers do at scale, each session sees only the ps tasks and its own
    // task (ConfigProto.device_filters); unfiltered, each would list all the tasks' devices.
    SessionConfig config;
    config.device_filters = {"/job:ps", fmt::format("/job:worker/task:{}", w)};
    worker.session = std::make_unique<Session>(
        value_or_throw(Session::create(value_or_throw(cluster->target("worker", w)), config)));
    throw_if_error(worker.session->run_targets({worker.step}));  // registers its partitions
  }
  std::vector<double> step_us;
  for (Worker& worker : workers) {
    step_us.push_back(
        seconds_of([&] { throw_if_error(worker.session->run_targets({worker.step})); }) * 1e6);
  }
  workers.clear();
  nlohmann::json result = {
      {"startup_s", startup},
      {"bytes_per_task", static_cast<double>(memory_after - memory_before) / tasks},
      {"step_us", step_us}};
  std::cout << kResultPrefix << result.dump() << std::endl;
  cluster->stop();
  return 0;
}

void scale_bench(const BenchOptions& options) {
  std::vector<int> sizes =
      options.quick ? std::vector<int>{10, 100} : std::vector<int>{10, 100, 1000};
  for (int tasks : sizes) {
    std::vector<double> startup, memory, steps;
    for (int rep = 0; rep < (options.quick ? 1 : 3); ++rep) {
      auto run = testing::run_process({options.self, "scale-run", std::to_string(tasks)}, 600000);
      auto result = nlohmann::json::parse(
          child_result(run, kResultPrefix, fmt::format("scale-run {}", tasks)));
      startup.push_back(result["startup_s"].template get<double>() * 1e3);
      memory.push_back(result["bytes_per_task"].template get<double>() / 1024);
      for (double us : result["step_us"])
        steps.push_back(us);
    }
    std::string name = fmt::format("{} tasks", tasks);
    report({"scale", name, "troupe, start-up", "ms", startup});
    report({"scale", name, "troupe, resident memory per task", "KiB", memory});
    report({"scale", name, "troupe, one step of a worker", "us", steps});
  }
}

}  // namespace troupe::bench
