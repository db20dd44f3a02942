// `troupe sim`: a whole cluster of ps and worker tasks in this one process (LocalCluster), each
// task listening on a free loopback port so sessions from other processes can use it. With
// --check it runs one model-parallel step across every task and exits. Listening follows the
// node's rule: TLS credentials, or --insecure said out loud; --listen=false needs neither.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/actors/sim/simulated_training.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/apps/cli/runtime_flags.hpp"
#include "troupe/apps/cli/stop_signals.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::cli {
namespace {

// Each ps task holds a variable v_i = i + 1; each worker multiplies the sum of the variables
// by its index + 1; the result, summed over workers, is known in closed form.
Status check_cluster(const LocalCluster& cluster, int num_ps, int num_workers) {
  Scope root = Scope::new_root();
  std::vector<Output> vars;
  std::vector<Operation> inits;
  for (int p = 0; p < num_ps; ++p) {
    Scope ps = root.with_device(fmt::format("/job:ps/task:{}", p));
    auto v = ops::Variable(ps, TensorShape{}, DataType::kFloat);
    inits.push_back(ops::Assign(ps, v, static_cast<float>(p + 1)).op());
    vars.push_back(v);
  }
  Output total;
  for (int w = 0; w < num_workers; ++w) {
    Scope worker = root.with_device(fmt::format("/job:worker/task:{}", w));
    Output sum = ops::Const(worker, 1.f);
    for (const Output& v : vars)
      sum = ops::Add(worker, sum, v);
    Output part = ops::Mul(worker, sum, static_cast<float>(w + 1));
    total = w == 0 ? part : ops::Add(worker, total, part);
  }
  TROUPE_RETURN_IF_ERROR(root.status());
  TROUPE_ASSIGN_OR_RETURN(std::string target, cluster.target("worker", 0));
  TROUPE_ASSIGN_OR_RETURN(Session session, Session::create(target));
  if (!inits.empty()) TROUPE_RETURN_IF_ERROR(session.run_targets(inits));
  RunMetadata metadata;
  TROUPE_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                          session.run(FeedDict{}, {total}, {}, RunOptions{}, &metadata));
  double sum = 1 + num_ps * (num_ps + 1) / 2.0;
  double expected = sum * num_workers * (num_workers + 1) / 2.0;
  if (out.at(0).scalar<float>() != static_cast<float>(expected)) {
    return errors::Internal("check computed {}, expected {}", out.at(0).scalar<float>(), expected);
  }
  std::cout << "troupe sim: check passed: " << out.at(0).scalar<float>() << " computed on "
            << metadata.devices.size() << " devices, " << metadata.bytes_to_master
            << " bytes to the master" << std::endl;
  return Status::OK();
}

// `troupe sim --deterministic`: the simulated training job of `flags`' seed.
int run_deterministic(const FlagSet& flags, bool log_level_given) {
  for (const char* flag : {"listen", "check", "insecure"}) {
    if (flags.was_set(flag)) {
      std::cerr << "troupe sim: --" << flag
                << " with --deterministic: a deterministic simulation neither listens nor "
                   "checks a listening cluster; drop --"
                << flag << "\n";
      return 2;
    }
  }
  // The run's outcome is its summary: a lost task's warnings, one per peer that saw it go,
  // only when asked for.
  if (!log_level_given) set_log_level(LogLevel::kError);
  SimulatedTrainingOptions options;
  auto int_flag = [&](const char* name, int64_t low, int64_t high, int* out) {
    int64_t value = flags.get_int(name);
    if (value < low || value > high) {
      std::cerr << fmt::format("troupe sim: --{}={}: expected {}..{}\n", name, value, low, high);
      return false;
    }
    *out = static_cast<int>(value);
    return true;
  };
  int timeout_ms = 0;
  if (!int_flag("ps", 1, 1000, &options.num_ps) ||
      !int_flag("workers", 1, 1000, &options.num_workers) ||
      !int_flag("steps", 1, 1000000, &options.steps) ||
      !int_flag("faults", 0, options.num_ps + options.num_workers, &options.faults) ||
      !int_flag("step_timeout_ms", 1, 3600000, &timeout_ms)) {
    return 2;
  }
  options.step_timeout = std::chrono::milliseconds(timeout_ms);
  if (flags.get_int("seed") < 0) {
    std::cerr << "troupe sim: --seed=" << flags.get_int("seed") << ": expected >= 0\n";
    return 2;
  }
  options.seed = static_cast<uint64_t>(flags.get_int("seed"));
  options.keep_trace = flags.get_bool("trace");
  std::cout << fmt::format(
                   "troupe sim: deterministic run, seed {}: {} ps + {} workers, {} steps each, "
                   "{} fault(s), step timeout {} ms of virtual time",
                   options.seed, options.num_ps, options.num_workers, options.steps, options.faults,
                   timeout_ms)
            << std::endl;
  auto start = std::chrono::steady_clock::now();
  auto report = run_simulated_training(options);
  if (!report.ok()) {
    std::cerr << "troupe sim: " << report.status().to_string() << "\n";
    return 1;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& hop : report->trace)
    std::cout << "  " << hop << "\n";
  std::cout << report->summary() << fmt::format("  {:.2f} s of wall time\n", wall);
  if (!report->ok()) {
    for (const std::string& violation : report->violations)
      std::cerr << "troupe sim: invariant broken: " << violation << "\n";
    std::cerr << "troupe sim: replay with: " << options.replay_command() << "\n";
    return 1;
  }
  std::cout << "troupe sim: every invariant held" << std::endl;
  return 0;
}

}  // namespace

static int run_sim(const Args& args) {
  FlagSet flags(*find_command_help("sim"));
  flags.add_int("ps", 1, "number of ps tasks (>= 0)");
  flags.add_int("workers", 2, "number of worker tasks (>= 1)");
  flags.add_bool("listen", true,
                 "each task listens on 127.0.0.1, on a port the kernel picks (port 0)");
  flags.add_bool("check", false, "run one step across every task, then exit");
  flags.add_bool("deterministic", false,
                 "run a training job in a deterministic simulation (one thread, a virtual "
                 "clock, messages in an order drawn from --seed), check its invariants, exit");
  flags.add_int("seed", 1, "--deterministic: the seed of the order, the ids and the faults");
  flags.add_int("steps", 100, "--deterministic: steps each worker runs");
  flags.add_int("faults", 0, "--deterministic: tasks a fault drawn from the seed hits");
  flags.add_int("step_timeout_ms", 1000, "--deterministic: each step's timeout, virtual time");
  flags.add_bool("trace", false, "--deterministic: print every message taken");
  add_runtime_flags(flags);
  add_log_level_flag(flags);
  if (auto exit_code = flags.parse_command_line(args)) return *exit_code;
  const bool log_level_given =
      flags.was_set("log_level") || std::getenv("TROUPE_LOG_LEVEL") != nullptr;
  if (auto exit_code = apply_log_level_flag(flags, "sim")) return *exit_code;
  if (flags.get_bool("deterministic")) return run_deterministic(flags, log_level_given);
  for (const char* flag : {"seed", "steps", "faults", "step_timeout_ms", "trace"}) {
    if (flags.was_set(flag)) {
      std::cerr << "troupe sim: --" << flag << " applies only with --deterministic\n";
      return 2;
    }
  }
  int64_t num_ps = flags.get_int("ps"), num_workers = flags.get_int("workers");
  if (num_ps < 0 || num_workers < 1 || num_ps + num_workers > 100000) {
    std::cerr << "troupe sim: --ps=" << num_ps << " --workers=" << num_workers
              << ": expected ps >= 0 and workers >= 1\n";
    return 2;
  }
  if (flags.get_bool("listen")) {
    if (auto exit_code = apply_runtime_flags(flags, "sim")) return *exit_code;
  }

  StopSignals stop_signals;

  LocalClusterOptions options;
  options.listen = flags.get_bool("listen");
  auto cluster =
      LocalCluster::start(static_cast<int>(num_ps), static_cast<int>(num_workers), options);
  if (!cluster.ok()) {
    std::cerr << "troupe sim: " << cluster.status().to_string() << "\n";
    return 1;
  }
  std::cout << fmt::format(
      "troupe sim: {} ps + {} workers in one process, sharing {} compute threads and {} actor "
      "scheduler threads\n",
      num_ps, num_workers, (*cluster)->compute_threads(), (*cluster)->scheduler_threads());
  for (const std::string& job : (*cluster)->cluster().jobs()) {
    for (int index : (*cluster)->cluster().task_indices(job).value()) {
      std::cout << fmt::format("  /job:{}/replica:0/task:{}  {}\n", job, index,
                               (*cluster)->target(job, index).value());  // a task it listed
    }
  }
  std::cout << "cluster: " << (*cluster)->cluster().to_json() << std::endl;
  if (flags.get_bool("check")) {
    Status checked =
        check_cluster(**cluster, static_cast<int>(num_ps), static_cast<int>(num_workers));
    if (!checked.ok()) {
      std::cerr << "troupe sim: check failed: " << checked.to_string() << "\n";
      return 1;
    }
    return 0;
  }
  std::cout << "troupe sim: serving; Ctrl-C or SIGTERM stops" << std::endl;
  stop_signals.wait();
  (*cluster)->stop();
  std::cout << "troupe sim: stopped" << std::endl;
  return 0;
}

int sim_command(const Args& args) {
  return exit_code_of("sim", [&] { return run_sim(args); });
}

}  // namespace troupe::cli
