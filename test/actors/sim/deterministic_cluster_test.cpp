// The deterministic simulation: the same seed gives the same run, byte for byte; seeds change
// the order of messages; delays and deadlines run on the virtual clock; and the property test,
// a training job under random faults on thousands of seeds, keeps every invariant.
#include <algorithm>
#include <chrono>
#include <set>

#include <boost/test/unit_test.hpp>

#include "function_graphs.hpp"
#include "status_checks.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/sim/deterministic_cluster.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/actors/sim/simulated_training.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/node_builder.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {
using testing::check_error;

// Lost tasks are logged as warnings, once by every peer that saw them go: thousands of seeds'
// worth is noise here (the reports say what happened).
class QuietLogs {
 public:
  QuietLogs() : level_(log_level()) { set_log_level(LogLevel::kError); }
  ~QuietLogs() { set_log_level(level_); }

 private:
  LogLevel level_;
};

SimulatedTrainingReport run(const SimulatedTrainingOptions& options) {
  QuietLogs quiet;
  auto report = run_simulated_training(options);
  BOOST_TEST_REQUIRE(report.ok(), report.status().to_string());
  return std::move(report).value();
}

std::string violations_of(const SimulatedTrainingReport& report) {
  std::string text;
  for (const std::string& violation : report.violations)
    text += "\n  " + violation;
  return text;
}

SimulatedStep ok_step(int worker, int index, int64_t global_step) {
  SimulatedStep step;
  step.worker = worker;
  step.index = index;
  step.global_step = global_step;
  return step;
}

// Seeds that once broke an invariant, kept as regression cases (none so far).
const std::vector<uint64_t> kRegressionSeeds = {};

}  // namespace

BOOST_AUTO_TEST_SUITE(deterministic_cluster)

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_trace_byte_for_byte) {
  SimulatedTrainingOptions options;
  options.num_workers = 3;
  options.steps = 40;
  options.faults = 2;
  options.seed = 11;
  options.keep_trace = true;
  SimulatedTrainingReport first = run(options);
  // Another seed in between: nothing of one run leaks into the next.
  options.seed = 12;
  SimulatedTrainingReport other = run(options);
  options.seed = 11;
  SimulatedTrainingReport again = run(options);
  BOOST_TEST(first.ok(), violations_of(first));
  BOOST_TEST(first.messages > 500u);
  BOOST_TEST(first.trace.size() == first.messages);
  BOOST_TEST(first.trace == again.trace);
  BOOST_TEST(first.trace_hash == again.trace_hash);
  BOOST_TEST(first.virtual_time.count() == again.virtual_time.count());
  BOOST_TEST(first.summary() == again.summary());
  BOOST_TEST(first.trace_hash != other.trace_hash);
}

BOOST_AUTO_TEST_CASE(seeds_choose_the_order_of_messages) {
  // No faults: what differs between seeds is only the order the actors run in.
  std::set<uint64_t> hashes;
  std::set<std::vector<int>> worker_orders;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimulatedTrainingOptions options;
    options.num_workers = 3;
    options.steps = 10;
    options.seed = seed;
    SimulatedTrainingReport report = run(options);
    BOOST_TEST(report.ok(), "seed " << seed << violations_of(report));
    hashes.insert(report.trace_hash);
    std::vector<int> order;
    for (const SimulatedStep& step : report.steps)
      order.push_back(step.worker);
    worker_orders.insert(order);
  }
  BOOST_TEST(hashes.size() == 20u);
  // Which worker's step ends next differs too, not only the hops in between.
  BOOST_TEST(worker_orders.size() >= 15u);
}

BOOST_AUTO_TEST_CASE(delays_and_deadlines_run_on_the_virtual_clock) {
  auto cluster = make_ps_worker_cluster(1, 2, false).value();
  // A ps whose partition runs 2..4 are held 400 ms each, and a worker that drops its 3rd.
  SimulatedTrainingOptions options;
  options.num_workers = 2;
  options.steps = 10;
  options.step_timeout = std::chrono::milliseconds(1000);
  auto started = std::chrono::steady_clock::now();
  {
    // Messages take a microsecond of virtual time each: a request answered at once is answered
    // within microseconds.
    auto sim = DeterministicCluster::start(cluster);
    BOOST_TEST_REQUIRE(sim.ok(), sim.status().to_string());
    auto devices = (*sim)->ask<std::vector<DeviceInfo>>(
        (*sim)->task("ps", 0).value(), std::chrono::milliseconds(1), get_devices_atom::value);
    BOOST_TEST(devices.ok(), devices.status().to_string());
    BOOST_TEST(((*sim)->now() < std::chrono::milliseconds(1)));
    BOOST_TEST((*sim)->stop() == 0u);
  }
  // Without faults the whole job takes a few hundred microseconds of it.
  options.faults = 0;
  auto plain = run(options);
  BOOST_TEST((plain.virtual_time < std::chrono::milliseconds(10)));
  // A seed whose faults drop a partition run: its step waits its whole timeout, then fails
  // with DeadlineExceeded exactly then, of virtual time.
  options.faults = 2;
  bool saw_timeout = false;
  for (uint64_t seed = 1; seed <= 40 && !saw_timeout; ++seed) {
    options.seed = seed;
    SimulatedTrainingReport faulty = run(options);
    BOOST_TEST(faulty.ok(), "seed " << seed << violations_of(faulty));
    // Only drops, kills and delays: a frozen worker's step may end when the worker thaws.
    if (std::any_of(faulty.faults.begin(), faulty.faults.end(),
                    [](const Fault& fault) { return fault.kind == FaultKind::kFreeze; })) {
      continue;
    }
    for (const SimulatedStep& step : faulty.steps) {
      if (step.status.code() != Code::kDeadlineExceeded) continue;
      saw_timeout = true;
      // Its timeout from when the master took it, a few messages after the client asked.
      BOOST_TEST(step.ended_us - step.started_us >= 1000000, "seed " << seed);
      BOOST_TEST(step.ended_us - step.started_us < 1010000, "seed " << seed);
      BOOST_TEST((faulty.virtual_time >= std::chrono::seconds(1)));
    }
  }
  BOOST_TEST(saw_timeout);
  // A seed whose faults only delay runs: the job takes at least one delay of virtual time.
  bool saw_delay = false;
  for (uint64_t seed = 1; seed <= 200 && !saw_delay; ++seed) {
    options.seed = seed;
    options.faults = 1;
    SimulatedTrainingReport delayed = run(options);
    BOOST_TEST(delayed.ok(), "seed " << seed << violations_of(delayed));
    if (delayed.faults.at(0).kind != FaultKind::kDelay) continue;
    // Runs before the fault's first are not held; a seed whose fault came too late waited none
    // (and took only its messages' time).
    if (delayed.virtual_time < std::chrono::milliseconds(10)) continue;
    saw_delay = true;
    BOOST_TEST((delayed.virtual_time >= delayed.faults[0].delay), delayed.summary());
  }
  BOOST_TEST(saw_delay);
  // All of it in far less wall time than the virtual seconds it simulated.
  BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(20)));
}

// A user's own graph through the cluster's client calls: a step across two tasks, then the
// same step while the ps task is frozen (DeadlineExceeded when the step's timeout passes, of
// virtual time), and again once it thawed.
BOOST_AUTO_TEST_CASE(a_users_graph_runs_and_a_frozen_task_holds_its_steps) {
  auto cluster = make_ps_worker_cluster(1, 1, false).value();
  auto started = DeterministicCluster::start(cluster, {.seed = 3});
  BOOST_TEST_REQUIRE(started.ok(), started.status().to_string());
  DeterministicCluster& sim = **started;
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat);
  auto squared = ops::Square(root.with_device("/job:ps/task:0"), x);
  ops::Mul(root.with_device("/job:worker/task:0").with_op_name("y"), squared, 2.f);
  BOOST_TEST_REQUIRE(root.ok(), root.status().to_string());
  auto session = sim.create_session("worker", 0);
  BOOST_TEST_REQUIRE(session.ok(), session.status().to_string());
  BOOST_TEST_REQUIRE(sim.extend(*session, root.to_graph_def()).ok());
  auto y = sim.run(*session, {{"x:0", Tensor(3.f)}}, {"y:0"});
  BOOST_TEST_REQUIRE(y.ok(), y.status().to_string());
  BOOST_TEST(y->at(0).scalar<float>() == 18.f);

  BOOST_TEST_REQUIRE(sim.freeze("ps", 0, std::chrono::milliseconds(2000)).ok());
  RunOptions options;
  options.timeout_ms = 500;
  auto before = sim.now();
  auto held = sim.run(*session, {{"x:0", Tensor(4.f)}}, {"y:0"}, {}, options);
  check_error(held.status(), Code::kDeadlineExceeded, "");
  BOOST_TEST((sim.now() - before >= std::chrono::milliseconds(500)));
  BOOST_TEST((sim.now() - before < std::chrono::milliseconds(510)));
  BOOST_TEST(sim.was_frozen("ps", 0, before, sim.now()));
  BOOST_TEST(!sim.was_frozen("worker", 0, before, sim.now()));
  // The next step waits for the thaw, then runs.
  auto after = sim.run(*session, {{"x:0", Tensor(4.f)}}, {"y:0"});
  BOOST_TEST_REQUIRE(after.ok(), after.status().to_string());
  BOOST_TEST(after->at(0).scalar<float>() == 32.f);
  BOOST_TEST((sim.now() - before >= std::chrono::milliseconds(2000)));
  check_error(sim.freeze("ps", 1, std::chrono::milliseconds(1)), Code::kInvalidArgument,
              "no task /job:ps/replica:0/task:1");

  // Cut off the network, the ps still runs, but what it sends the worker waits for the heal.
  BOOST_TEST_REQUIRE(sim.partition("ps", 0, std::chrono::milliseconds(1000)).ok());
  before = sim.now();
  auto cut = sim.run(*session, {{"x:0", Tensor(5.f)}}, {"y:0"}, {}, options);
  check_error(cut.status(), Code::kDeadlineExceeded, "");
  BOOST_TEST((sim.now() - before >= std::chrono::milliseconds(500)));
  BOOST_TEST((sim.now() - before < std::chrono::milliseconds(510)));
  BOOST_TEST(sim.held_messages() > 0u);
  auto healed = sim.run(*session, {{"x:0", Tensor(5.f)}}, {"y:0"});
  BOOST_TEST_REQUIRE(healed.ok(), healed.status().to_string());
  BOOST_TEST(healed->at(0).scalar<float>() == 50.f);
  BOOST_TEST((sim.now() - before >= std::chrono::milliseconds(1000)));
  // A killed task is gone for good.
  BOOST_TEST_REQUIRE(sim.kill("ps", 0).ok());
  check_error(sim.task("ps", 0).status(), Code::kUnavailable, "was killed");
  BOOST_TEST(!sim.run(*session, {{"x:0", Tensor(4.f)}}, {"y:0"}, {}, options).ok());
  BOOST_TEST(sim.stop() == 0u);
}

// A step that never lets the cluster idle (a While loop that never ends) still meets its
// deadline: each message moves the clock, and the deadline's timer fires when it is due.
BOOST_AUTO_TEST_CASE(an_endless_loop_meets_its_deadline) {
  auto cluster = make_ps_worker_cluster(1, 1, false).value();
  auto started = DeterministicCluster::start(cluster, {.seed = 8});
  BOOST_TEST_REQUIRE(started.ok(), started.status().to_string());
  DeterministicCluster& sim = **started;
  // while (true) i += 1
  Scope cond = Scope::new_root();
  testing::function_result(cond, ops::Identity(cond, ops::Const(cond, true)), 0, DataType::kBool);
  testing::function_arg(cond, "i", 0, DataType::kInt32);
  Scope body = Scope::new_root();
  testing::function_result(body,
                           ops::Add(body, testing::function_arg(body, "i", 0, DataType::kInt32), 1),
                           0, DataType::kInt32);
  Scope root = Scope::new_root();
  Scope worker = root.with_device("/job:worker/task:0");
  NodeBuilder(worker.with_op_name("loop"), "While")
      .input_list({Input(ops::Const(worker, 0))})
      .input_list({})
      .input_list({})
      .attr("T", std::vector<DataType>{DataType::kInt32})
      .attr("Tcond", std::vector<DataType>{})
      .attr("Tbody", std::vector<DataType>{})
      .attr("Tstacked", std::vector<DataType>{})
      .attr("cond", testing::serialized(cond))
      .attr("body", testing::serialized(body))
      .finalize();
  BOOST_TEST_REQUIRE(root.ok(), root.status().to_string());
  auto session = sim.create_session("worker", 0);
  BOOST_TEST_REQUIRE(session.ok(), session.status().to_string());
  BOOST_TEST_REQUIRE(sim.extend(*session, root.to_graph_def()).ok());
  RunOptions options;
  // (Each message moves the clock a microsecond, and a slice of the loop is one message of 256
  // iterations: 5 ms of virtual time are 1.3 million iterations.)
  options.timeout_ms = 5;
  auto before = sim.now();
  auto endless = sim.run(*session, {}, {"loop:0"}, {}, options);
  check_error(endless.status(), Code::kDeadlineExceeded, "");
  BOOST_TEST((sim.now() - before >= std::chrono::milliseconds(5)));
  BOOST_TEST((sim.now() - before < std::chrono::milliseconds(6)));
  BOOST_TEST(sim.stop() == 0u);
}

BOOST_AUTO_TEST_CASE(the_invariants_catch_what_they_should) {
  SimulatedTrainingOptions options;
  options.faults = 1;
  SimulatedTrainingReport report;
  report.steps = {ok_step(0, 0, 1), ok_step(1, 0, 1)};  // one increment read twice
  report.global_step = 2;
  check_invariants(options, report);
  BOOST_TEST(violations_of(report).find("read by two OK steps") != std::string::npos,
             violations_of(report));

  report = {};
  report.steps = {ok_step(0, 0, 3), ok_step(0, 1, 2)};  // going back
  check_invariants(options, report);
  BOOST_TEST(violations_of(report).find("not monotone") != std::string::npos,
             violations_of(report));

  report = {};
  report.steps = {ok_step(0, 0, 1), ok_step(0, 1, 2)};
  report.global_step = 5;  // more increments than steps ran
  check_invariants(options, report);
  BOOST_TEST(violations_of(report).find("lost or applied twice") != std::string::npos,
             violations_of(report));

  report = {};
  SimulatedStep failed = ok_step(0, 0, -1);
  failed.status = errors::Internal("a broken kernel");
  report.steps = {failed};
  check_invariants(options, report);
  BOOST_TEST(violations_of(report).find("untyped error") != std::string::npos,
             violations_of(report));

  report = {};
  report.steps = {ok_step(0, 0, 1), ok_step(1, 0, 2)};
  report.global_step = 2;
  check_invariants(options, report);
  BOOST_TEST(report.ok(), violations_of(report));
  BOOST_TEST(report.ok_steps == 2);
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused_naming_the_field) {
  SimulatedTrainingOptions options;
  options.num_ps = 0;
  check_error(run_simulated_training(options).status(), Code::kInvalidArgument, "ps is 0");
  options = {};
  options.faults = 6;  // 1 ps + 4 workers
  check_error(run_simulated_training(options).status(), Code::kInvalidArgument,
              "faults is 6: expected 0..5");
  options = {};
  options.step_timeout = std::chrono::milliseconds(0);
  check_error(run_simulated_training(options).status(), Code::kInvalidArgument, "step_timeout");
  options = {};
  options.steps = 0;
  check_error(run_simulated_training(options).status(), Code::kInvalidArgument, "steps is 0");
  auto cluster = make_ps_worker_cluster(1, 1, false).value();
  DeterministicOptions two_faults;
  two_faults.faults = {Fault{"ps", 0, FaultKind::kDrop}, Fault{"ps", 0, FaultKind::kKill}};
  check_error(DeterministicCluster::start(cluster, two_faults).status(), Code::kInvalidArgument,
              "more than one fault for /job:ps/replica:0/task:0");
  check_error(DeterministicCluster::start(ClusterSpec{}).status(), Code::kInvalidArgument,
              "no jobs");
  // Freezes stop actors on the simulation's one thread: a LocalCluster of threads has none.
  for (FaultKind kind : {FaultKind::kFreeze, FaultKind::kPartition}) {
    LocalClusterOptions local;
    local.faults = {Fault{"ps", 0, kind}};
    check_error(LocalCluster::start(cluster, local).status(), Code::kInvalidArgument,
                "freezes and partitions need a DeterministicCluster");
  }
  Fault instant{"ps", 0, FaultKind::kFreeze, 1, 1, std::chrono::milliseconds(0)};
  check_error(instant.validate(cluster), Code::kInvalidArgument, "a freeze needs a delay > 0");
  instant.kind = FaultKind::kPartition;
  check_error(instant.validate(cluster), Code::kInvalidArgument, "a partition needs a delay > 0");
}

BOOST_AUTO_TEST_CASE(without_faults_the_job_trains_the_model) {
  SimulatedTrainingOptions options;
  options.num_workers = 4;
  options.steps = 150;
  SimulatedTrainingReport report = run(options);
  BOOST_TEST(report.ok(), violations_of(report));
  BOOST_TEST(report.ok_steps == 600);
  BOOST_TEST_REQUIRE(report.global_step.has_value());
  BOOST_TEST(*report.global_step == 600);
  BOOST_TEST(std::abs(*report.w - 3.f) < 0.05f);
  BOOST_TEST(std::abs(*report.b - 2.f) < 0.05f);
  BOOST_TEST(report.leaked_actors == 0u);
}

// The property test: a training job of 1 ps and 2-3 workers under 0-3 faults drawn from each
// seed (kills, dropped and delayed runs, freezes, partitions). Every seed must keep every
// invariant; one that does not is printed with the command that replays it, and joins
// kRegressionSeeds once fixed.
BOOST_AUTO_TEST_CASE(every_seed_keeps_the_invariants) {
  std::vector<uint64_t> seeds = kRegressionSeeds;
  for (uint64_t seed = 1; seed <= 2000; ++seed)
    seeds.push_back(seed);
  int failing = 0;
  std::map<int, int> runs_by_faults;
  std::set<int> kinds;
  for (uint64_t seed : seeds) {
    SimulatedTrainingOptions options;
    options.seed = seed;
    options.num_workers = 2 + static_cast<int>(seed % 2);
    options.steps = 12;
    options.faults = static_cast<int>(seed % 4);
    options.step_timeout = std::chrono::milliseconds(500);
    SimulatedTrainingReport report = run(options);
    ++runs_by_faults[options.faults];
    for (const Fault& fault : report.faults)
      kinds.insert(static_cast<int>(fault.kind));
    if (!report.ok() && ++failing <= 5) {
      BOOST_ERROR("seed " << seed << ":" << violations_of(report) << "\n"
                          << report.summary() << "replay: " << options.replay_command());
    }
  }
  BOOST_TEST(failing == 0);
  BOOST_TEST(runs_by_faults.size() == 4u);
  // Every kind of fault was drawn.
  BOOST_TEST(kinds.size() == 5u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
