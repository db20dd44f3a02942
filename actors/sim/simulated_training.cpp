// The simulated training job: clients as actors of a DeterministicCluster, and its invariants.
#include "troupe/actors/sim/simulated_training.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/sim/deterministic_cluster.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

using init_atom = caf::atom_constant<caf::atom("siminit")>;
using train_atom = caf::atom_constant<caf::atom("simtrain")>;

// How long a client waits for a step beyond its RunOptions timeout before it calls it a hang.
constexpr auto kGrace = std::chrono::milliseconds(500);
// How long the set-up requests (master, session, graph) may take, of virtual time.
constexpr auto kSetupTimeout = std::chrono::milliseconds(10000);
constexpr float kLearningRate = 0.05f;

std::string ps_device(int task) {
  return fmt::format("/job:ps/task:{}", task);
}

// Worker `worker`'s graph of the job (every worker's names the same variables).
StatusOr<GraphDef> worker_graph(int worker, int num_ps) {
  Scope root = Scope::new_root();
  Scope ps0 = root.with_device(ps_device(0));
  Scope ps1 = root.with_device(ps_device(1 % num_ps));
  Scope here = root.with_device(fmt::format("/job:worker/task:{}", worker));
  auto w = ops::Variable(ps0.with_op_name("w"), TensorShape{}, DataType::kFloat);
  auto b = ops::Variable(ps1.with_op_name("b"), TensorShape{}, DataType::kFloat);
  auto global_step =
      ops::Variable(ps0.with_op_name("global_step"), TensorShape{}, DataType::kInt64);
  ops::NoOp(root.with_op_name("init").with_control_dependencies(
      {ops::Assign(ps0, w, 0.f).op(), ops::Assign(ps1, b, 0.f).op(),
       ops::Assign(ps0, global_step, int64_t{0}).op()}));
  // Eight points of y = 3x + 2 of this worker's own.
  std::vector<float> xs, ys;
  for (int i = 0; i < 8; ++i) {
    float x = static_cast<float>(i - 4) / 4.f + 0.1f * static_cast<float>(worker % 5);
    xs.push_back(x);
    ys.push_back(3.f * x + 2.f);
  }
  auto x = ops::Const(here, Tensor::from_vector(xs));
  auto y = ops::Const(here, Tensor::from_vector(ys));
  auto error = ops::Sub(here, ops::Add(here, ops::Mul(here, w, x), b), y);
  ops::Mean(here.with_op_name("loss"), ops::Square(here, error), int32_t{0});
  auto grad_w = ops::Mean(here, ops::Mul(here, ops::Mul(here, error, x), 2.f), int32_t{0});
  auto grad_b = ops::Mean(here, ops::Mul(here, error, 2.f), int32_t{0});
  ops::NoOp(root.with_op_name("train").with_control_dependencies(
      {ops::AssignSub(ps0, w, ops::Mul(here, grad_w, kLearningRate)).op(),
       ops::AssignSub(ps1, b, ops::Mul(here, grad_b, kLearningRate)).op()}));
  ops::Identity(ps0.with_op_name("step_value"), ops::AssignAdd(ps0, global_step, int64_t{1}));
  TROUPE_RETURN_IF_ERROR(root.status());
  return root.to_graph_def();
}

// What the driver knows of one client.
struct Progress {
  bool set_up = false;       // its session holds the graph (or set_up_status says why not)
  bool initialized = false;  // the chief's init step ended
  bool finished = false;     // no more steps: all ran, or its task died
  Status set_up_status;
};

struct TrainerConfig {
  int worker = 0;
  caf::actor task;
  GraphDef graph;
  int steps = 0;
  std::chrono::milliseconds step_timeout{0};
  DeterministicCluster* sim = nullptr;  // outlive the actor's handlers (stop() ends them)
  SimulatedTrainingReport* report = nullptr;
  Progress* progress = nullptr;
};

struct TrainerState {
  caf::actor session;
  int next_step = 0;
  std::optional<SimulatedStep> in_flight;  // the step asked for and not answered yet
  static inline const char* name = "troupe.sim.trainer";
};

using Trainer = caf::stateful_actor<TrainerState>;

int64_t now_us(const TrainerConfig& config) {
  return std::chrono::duration_cast<std::chrono::microseconds>(config.sim->now()).count();
}

void finish(Trainer* self, const TrainerConfig& config) {
  config.progress->finished = true;
  self->quit();
}

void run_next_step(Trainer* self, const TrainerConfig& config) {
  if (self->state.next_step >= config.steps) return finish(self, config);
  RunStepRequest request;
  request.signature.fetches = {"step_value:0", "loss:0"};
  request.signature.targets = {"train"};
  request.options.timeout_ms = config.step_timeout.count();
  SimulatedStep step;
  step.worker = config.worker;
  step.index = self->state.next_step++;
  step.started_us = now_us(config);
  self->state.in_flight = step;
  auto done = [self, config, step](Status status, const RunStepResponse* response) mutable {
    self->state.in_flight.reset();
    step.ended_us = now_us(config);
    step.status = std::move(status);
    if (response != nullptr && response->fetches.size() == 2) {
      step.global_step = response->fetches[0].scalar<int64_t>();
      step.loss = response->fetches[1].scalar<float>();
    }
    config.report->steps.push_back(std::move(step));
    run_next_step(self, config);
  };
  self->request(self->state.session, config.step_timeout + kGrace, run_step_atom::value, request)
      .then([done](RunStepResponse& response) mutable { done(Status::OK(), &response); },
            [self, config, done, step](caf::error& error) mutable {
              // When the client's timer came due.
              const auto due =
                  std::chrono::microseconds(step.started_us) + config.step_timeout + kGrace;
              if (error == caf::sec::request_timeout &&
                  config.sim->was_frozen("worker", config.worker, due, due)) {
                // The client's whole process was frozen past the step's deadline: its own
                // timer fires first when it thaws, as a TF client's call deadline would.
                return done(errors::DeadlineExceeded(
                                "worker {} step {}: the worker was frozen past the step's "
                                "deadline",
                                config.worker, step.index),
                            nullptr);
              }
              if (error == caf::sec::request_timeout) {
                self->state.in_flight.reset();
                config.report->violations.push_back(fmt::format(
                    "worker {} step {}: no answer within its timeout of {} ms (+{} ms grace), "
                    "started at {} us of virtual time",
                    config.worker, step.index, config.step_timeout.count(), kGrace.count(),
                    step.started_us));
                return finish(self, config);
              }
              done(from_caf_error(error, "running the step"), nullptr);
            });
}

caf::behavior trainer(Trainer* self, TrainerConfig config) {
  auto fail_set_up = [self, config](const caf::error& error) {
    config.progress->set_up = true;
    config.progress->set_up_status = from_caf_error(error, "setting up the session");
    finish(self, config);
  };
  // Set-up: the task's master service, a session, the graph.
  self->request(config.task, kSetupTimeout, get_master_atom::value)
      .then(
          [=](caf::actor& service) {
            // As TF 1.x between-graph programs do: the session sees the ps tasks and its own
            // task only, so a lost worker does not fail the others' steps.
            SessionConfig session_config;
            session_config.device_filters = {"/job:ps",
                                             fmt::format("/job:worker/task:{}", config.worker)};
            self->request(service, kSetupTimeout, create_session_atom::value, true, session_config,
                          caf::actor_cast<caf::actor>(self))
                .then(
                    [=](caf::actor& session) {
                      self->state.session = session;
                      config.sim->adopt(session, fmt::format("worker {} session", config.worker),
                                        "worker", config.worker);
                      // A client in the worker's process: when its task dies, so does it.
                      self->monitor(session);
                      self->request(session, kSetupTimeout, extend_graph_atom::value, config.graph)
                          .then([=] { config.progress->set_up = true; }, fail_set_up);
                    },
                    fail_set_up);
          },
          fail_set_up);
  self->set_down_handler([self, config](caf::down_msg&) {
    // The step in flight, if any, ends with its session: it may have been applied on the ps
    // before the worker died, so it counts as a step that ran.
    if (auto& lost = self->state.in_flight) {
      lost->ended_us = now_us(config);
      lost->status = errors::Unavailable("worker {}'s task is gone", config.worker);
      config.report->steps.push_back(std::move(*lost));
      lost.reset();
    }
    finish(self, config);
  });
  return {
      [=](init_atom) {
        RunStepRequest request;
        request.signature.targets = {"init"};
        request.options.timeout_ms = config.step_timeout.count();
        self->request(self->state.session, config.step_timeout + kGrace, run_step_atom::value,
                      request)
            .then([=](RunStepResponse&) { config.progress->initialized = true; },
                  [=](caf::error&) { config.progress->initialized = true; });
      },
      [=](train_atom) { run_next_step(self, config); },
  };
}

// Faults for `count` distinct tasks, drawn from `seed`.
std::vector<Fault> draw_faults(uint64_t seed, const ClusterSpec& cluster, int count,
                               int max_partition) {
  std::vector<Fault> faults;
  std::set<std::pair<std::string, int>> hit;
  std::mt19937_64 draws(seed ^ 0x9e3779b97f4a7c15ull);
  while (static_cast<int>(faults.size()) < count) {
    Fault fault = Fault::random(draws(), cluster, max_partition, /*deterministic=*/true);
    if (hit.emplace(fault.job, fault.task).second) faults.push_back(fault);
  }
  return faults;
}

// Reads w, b and the global step through a session of ps task 0; none if it is gone.
void read_model(DeterministicCluster& sim, int num_ps, SimulatedTrainingReport& report) {
  SessionConfig session_config;
  session_config.device_filters = {"/job:ps"};
  auto session = sim.create_session("ps", 0, session_config, kSetupTimeout);
  if (!session.ok()) return;
  Scope root = Scope::new_root();
  Scope ps0 = root.with_device(ps_device(0));
  Scope ps1 = root.with_device(ps_device(1 % num_ps));
  ops::Identity(ps0.with_op_name("read_w"),
                ops::Variable(ps0.with_op_name("w"), TensorShape{}, DataType::kFloat));
  ops::Identity(ps1.with_op_name("read_b"),
                ops::Variable(ps1.with_op_name("b"), TensorShape{}, DataType::kFloat));
  ops::Identity(ps0.with_op_name("read_step"),
                ops::Variable(ps0.with_op_name("global_step"), TensorShape{}, DataType::kInt64));
  if (!sim.extend(*session, root.to_graph_def(), kSetupTimeout).ok()) return;
  RunOptions options;
  options.timeout_ms = kSetupTimeout.count();
  auto read = sim.run(*session, {}, {"read_w:0", "read_b:0", "read_step:0"}, {}, options,
                      kSetupTimeout + kGrace);
  if (read.ok() && read->size() == 3) {
    report.w = (*read)[0].scalar<float>();
    report.b = (*read)[1].scalar<float>();
    report.global_step = (*read)[2].scalar<int64_t>();
  }
}

bool typed_failure(Code code) {
  switch (code) {
    case Code::kCancelled:
    case Code::kDeadlineExceeded:
    case Code::kFailedPrecondition:
    case Code::kAborted:
    case Code::kUnavailable:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status SimulatedTrainingOptions::validate() const {
  if (num_ps < 1) return errors::InvalidArgument("ps is {}: expected >= 1", num_ps);
  if (num_workers < 1) return errors::InvalidArgument("workers is {}: expected >= 1", num_workers);
  if (steps < 1) return errors::InvalidArgument("steps is {}: expected >= 1", steps);
  if (faults < 0 || faults > num_ps + num_workers) {
    return errors::InvalidArgument("faults is {}: expected 0..{} (one per task at most)", faults,
                                   num_ps + num_workers);
  }
  if (step_timeout.count() <= 0) {
    return errors::InvalidArgument("step_timeout is {} ms: expected > 0", step_timeout.count());
  }
  return Status::OK();
}

std::string SimulatedTrainingOptions::replay_command() const {
  return fmt::format(
      "troupe sim --deterministic --seed={} --ps={} --workers={} --steps={} --faults={} "
      "--step_timeout_ms={}",
      seed, num_ps, num_workers, steps, faults, step_timeout.count());
}

std::string SimulatedTrainingReport::summary() const {
  std::string text;
  if (faults.empty()) text += "  faults: none\n";
  for (const Fault& fault : faults)
    text += "  fault: " + fault.to_string() + "\n";
  std::map<std::string, int> failures;
  for (const SimulatedStep& step : steps) {
    if (!step.status.ok()) ++failures[std::string(code_name(step.status.code()))];
  }
  std::string by_code;
  for (const auto& [code, count] : failures)
    by_code += fmt::format("{}{} {}", by_code.empty() ? "" : ", ", count, code);
  text += fmt::format("  steps: {} OK, {} failed{}\n", ok_steps, failed_steps,
                      by_code.empty() ? "" : " (" + by_code + ")");
  if (global_step) {
    text += fmt::format("  global step {}; w = {:.4f}, b = {:.4f} (y = 3x + 2)\n", *global_step,
                        w.value_or(NAN), b.value_or(NAN));
  } else {
    text += "  global step unknown: a ps task holding the model is gone\n";
  }
  text += fmt::format("  {:.3f} s of virtual time, {} messages, trace hash {:016x}\n",
                      std::chrono::duration<double>(virtual_time).count(), messages, trace_hash);
  return text;
}

void check_invariants(const SimulatedTrainingOptions& options, SimulatedTrainingReport& report) {
  std::map<int64_t, const SimulatedStep*> applied;  // global step -> the OK step that read it
  std::map<int, int64_t> last_read;                 // worker -> its last OK step's global step
  for (const SimulatedStep& step : report.steps) {
    if (step.status.ok()) {
      ++report.ok_steps;
      if (auto [it, fresh] = applied.emplace(step.global_step, &step); !fresh) {
        report.violations.push_back(fmt::format(
            "global step {} was read by two OK steps (worker {} step {} and worker {} step {}): "
            "a step applied twice",
            step.global_step, it->second->worker, it->second->index, step.worker, step.index));
      }
      if (auto it = last_read.find(step.worker);
          it != last_read.end() && step.global_step <= it->second) {
        report.violations.push_back(
            fmt::format("worker {} step {} read global step {} after {}: not monotone", step.worker,
                        step.index, step.global_step, it->second));
      }
      last_read[step.worker] = step.global_step;
    } else {
      ++report.failed_steps;
      if (!typed_failure(step.status.code())) {
        report.violations.push_back(
            fmt::format("worker {} step {} failed with an untyped error: {}", step.worker,
                        step.index, step.status.to_string()));
      }
    }
  }
  if (report.global_step) {
    int64_t global = *report.global_step;
    if (global < report.ok_steps || global > report.ok_steps + report.failed_steps) {
      report.violations.push_back(fmt::format(
          "global step {} on the ps, expected between the {} OK steps and the {} steps that ran: "
          "a step lost or applied twice",
          global, report.ok_steps, report.ok_steps + report.failed_steps));
    }
    if (!applied.empty() && applied.rbegin()->first > global) {
      report.violations.push_back(fmt::format("an OK step read global step {}, above the final {}",
                                              applied.rbegin()->first, global));
    }
  }
  if (options.faults == 0) {
    if (report.failed_steps > 0) {
      report.violations.push_back(
          fmt::format("{} steps failed without a fault", report.failed_steps));
    }
    if (!report.w || !report.b || std::abs(*report.w - 3.f) > 0.05f ||
        std::abs(*report.b - 2.f) > 0.05f) {
      if (options.steps * options.num_workers >= 400) {
        report.violations.push_back(
            fmt::format("without faults the model did not converge: w = {}, b = {} (expected "
                        "3 and 2 within 0.05)",
                        report.w.value_or(NAN), report.b.value_or(NAN)));
      }
    }
  }
}

StatusOr<SimulatedTrainingReport> run_simulated_training(const SimulatedTrainingOptions& options) {
  TROUPE_RETURN_IF_ERROR(options.validate());
  TROUPE_ASSIGN_OR_RETURN(ClusterSpec cluster,
                          make_ps_worker_cluster(options.num_ps, options.num_workers, false));
  SimulatedTrainingReport report;
  report.faults = draw_faults(options.seed, cluster, options.faults, options.steps);
  DeterministicOptions sim_options;
  sim_options.seed = options.seed;
  sim_options.faults = report.faults;
  sim_options.keep_trace = options.keep_trace;
  // Before the cluster, which may still run the clients' handlers as it goes.
  std::vector<Progress> progress(static_cast<size_t>(options.num_workers));
  TROUPE_ASSIGN_OR_RETURN(auto sim, DeterministicCluster::start(cluster, sim_options));

  std::vector<caf::actor> trainers;
  for (int w = 0; w < options.num_workers; ++w) {
    TrainerConfig config;
    config.worker = w;
    TROUPE_ASSIGN_OR_RETURN(config.task, sim->task("worker", w));
    TROUPE_ASSIGN_OR_RETURN(config.graph, worker_graph(w, options.num_ps));
    config.steps = options.steps;
    config.step_timeout = options.step_timeout;
    config.sim = sim.get();
    config.report = &report;
    config.progress = &progress[static_cast<size_t>(w)];
    trainers.push_back(sim->spawn_owned(fmt::format("worker {} client", w), trainer, config));
    // The client runs in the worker's process: it freezes with it.
    sim->adopt(trainers.back(), fmt::format("worker {} client", w), "worker", w);
  }
  auto all = [&](auto predicate) {
    return [&progress, predicate] {
      for (const Progress& p : progress)
        if (!p.finished && !predicate(p)) return false;
      return true;
    };
  };
  // Bound on the whole run, of virtual time: every step timing out, and the set-up.
  const auto limit = (options.step_timeout + kGrace) * (options.steps + 2) + kSetupTimeout * 4;
  bool finished = sim->run_until(all([](const Progress& p) { return p.set_up; }), limit);
  if (finished && !progress[0].finished) {
    caf::anon_send(trainers[0], init_atom::value);
    finished =
        sim->run_until([&] { return progress[0].initialized || progress[0].finished; }, limit);
  }
  for (const caf::actor& trainer : trainers)
    caf::anon_send(trainer, train_atom::value);
  if (finished) finished = sim->run_until(all([](const Progress&) { return false; }), limit);
  if (!finished) {
    for (size_t w = 0; w < progress.size(); ++w) {
      if (!progress[w].finished) {
        report.violations.push_back(
            fmt::format("worker {}'s client did not finish within {} s of virtual time", w,
                        std::chrono::duration_cast<std::chrono::seconds>(limit).count()));
      }
    }
  }
  for (size_t w = 0; w < progress.size(); ++w) {
    if (!progress[w].set_up_status.ok() && !typed_failure(progress[w].set_up_status.code())) {
      report.violations.push_back(fmt::format("worker {}'s set-up failed with an untyped error: {}",
                                              w, progress[w].set_up_status.to_string()));
    }
  }
  read_model(*sim, options.num_ps, report);
  check_invariants(options, report);
  report.virtual_time = sim->now();
  report.leaked_actors = sim->stop();
  if (report.leaked_actors != 0) {
    report.violations.push_back(
        fmt::format("{} actors still ran after the cluster stopped", report.leaked_actors));
  }
  report.messages = sim->messages();
  report.trace_hash = sim->trace_hash();
  report.trace = sim->trace();
  return report;
}

}  // namespace troupe
