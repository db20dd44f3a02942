// scale: in-process clusters (LocalCluster) of 10, 100, 1,000 and 10,000 tasks — 1 ps per 100
// tasks, the rest workers. Each size runs in a fresh child process (`troupe_bench scale-run
// <n>`), so memory figures start from nothing: start-up time, resident memory per task, the
// time of one training-like step of each of up to 1,000 workers (read a counter on its ps, add
// one, assign it back), one step touching every task, and the threads the process runs.
#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/child_process.hpp"
#include "benchmarks.hpp"
#include "report.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
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

  // One step that touches every task: each worker makes a 1, the first ps adds them up, through
  // a session that sees the whole cluster. Its first run lists every task's devices, places the
  // graph and registers a partition on every task; the later ones only run it.
  Scope all = Scope::new_root();
  std::vector<Input> ones;
  for (int w = 0; w < num_workers; ++w)
    ones.push_back(ops::Const(all.with_device(fmt::format("/job:worker/task:{}", w)), 1.0f));
  Output sum = ops::AddN(all.with_device(ps_device(0)), ones);
  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  auto check = [&] {
    Tensor total = value_or_throw(session.run(sum));
    if (total.scalar<float>() != static_cast<float>(num_workers)) {
      throw std::runtime_error(fmt::format("the all-task step summed {} ones to {}", num_workers,
                                           total.scalar<float>()));
    }
  };
  double all_first = seconds_of(check);
  std::vector<double> all_again;
  for (int rep = 0; rep < 3; ++rep)
    all_again.push_back(seconds_of(check));
  std::sort(all_again.begin(), all_again.end());
  nlohmann::json result = {
      {"startup_s", startup},
      {"bytes_per_task", static_cast<double>(memory_after - memory_before) / tasks},
      {"step_us", step_us},
      {"all_first_s", all_first},
      {"all_again_s", all_again[1]},
      {"threads", process_threads()},
      {"compute_threads", cluster->compute_threads()}};
  std::cout << kResultPrefix << result.dump() << std::endl;
  cluster->stop();
  return 0;
}

void scale_bench(const BenchOptions& options) {
  std::vector<int> sizes =
      options.quick ? std::vector<int>{10, 100} : std::vector<int>{10, 100, 1000, 10000};
  for (int tasks : sizes) {
    std::vector<double> startup, memory, steps, all_first, all_again, threads;
    for (int rep = 0; rep < (options.quick ? 1 : 3); ++rep) {
      auto run = testing::run_process({options.self, "scale-run", std::to_string(tasks)}, 600000);
      auto result = nlohmann::json::parse(
          child_result(run, kResultPrefix, fmt::format("scale-run {}", tasks)));
      startup.push_back(result["startup_s"].template get<double>() * 1e3);
      memory.push_back(result["bytes_per_task"].template get<double>() / 1024);
      for (double us : result["step_us"])
        steps.push_back(us);
      all_first.push_back(result["all_first_s"].template get<double>() * 1e3);
      all_again.push_back(result["all_again_s"].template get<double>() * 1e3);
      threads.push_back(result["threads"].template get<double>());
    }
    std::string name = fmt::format("{} tasks", tasks);
    report({"scale", name, "troupe, start-up", "ms", startup});
    report({"scale", name, "troupe, resident memory per task", "KiB", memory});
    report({"scale", name, "troupe, one step of a worker", "us", steps});
    report({"scale", name, "troupe, first step touching every task", "ms", all_first});
    report({"scale", name, "troupe, later step touching every task", "ms", all_again});
    report({"scale", name, "troupe, threads of the process", "threads", threads});
  }
}

}  // namespace troupe::bench
