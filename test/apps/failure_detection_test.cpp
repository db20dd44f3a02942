// Failure detection between node processes on loopback: a task that dies (SIGKILL) or
// freezes (SIGSTOP) is noticed within the heartbeat bound, the steps that need it fail with
// Unavailable naming it, later steps fail fast while it is away, and it is used again when it
// comes back; a training session recovers from a ps lost in a step or in a checkpoint save.
// Every wait in here is bounded.
#include <signal.h>

#include <filesystem>
#include <future>
#include <stop_token>
#include <thread>

#include "apps/child_process.hpp"
#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/actors/blocking_request.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/apps/training/hooks.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"
#include "wait_until.hpp"

namespace troupe {
namespace {

using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

constexpr int kStartMs = 20000;
constexpr int kHeartbeatTimeoutMs = 1500;
const std::string kPs = "/job:ps/replica:0/task:0";

// 1 ps + 1 worker node processes with fast heartbeats.
class FaultCluster {
 public:
  FaultCluster() : spec_(value_or_throw(make_ps_worker_cluster(1, 1, /*free_ports=*/true))) {
    start("ps");
    start("worker");
  }

  ~FaultCluster() {
    for (auto& [job, node] : nodes_) {
      ::kill(node->pid(), SIGCONT);
      node->stop(SIGKILL, 5000);
    }
  }

  // (Re)starts the task of `job` and waits until it serves.
  void start(const std::string& job) {
    std::vector<std::string> argv = {
        TROUPE_CLI,
        "node",
        "--insecure",
        "--ps_hosts=" + value_or_throw(spec_.task_address("ps", 0)),
        "--worker_hosts=" + value_or_throw(spec_.task_address("worker", 0)),
        "--job_name=" + job,
        "--task_index=0",
        "--heartbeat_interval_ms=200",
        "--heartbeat_timeout_ms=" + std::to_string(kHeartbeatTimeoutMs)};
    auto node = std::make_unique<ChildProcess>(argv);
    BOOST_REQUIRE_MESSAGE(node->wait_for("serving at", kStartMs), node->output());
    nodes_[job] = std::move(node);
  }

  ChildProcess& node(const std::string& job) { return *nodes_.at(job); }
  std::string target(const std::string& job) const {
    return "troupe://" + value_or_throw(spec_.task_address(job, 0));
  }

 private:
  ClusterSpec spec_;
  std::map<std::string, std::unique_ptr<ChildProcess>> nodes_;
};

// A graph whose steps need the ps: `blocking` waits on an empty queue there, `quick` reads a
// constant from it; both finish on the worker.
struct PsGraph {
  Scope root = Scope::new_root();
  Output queue, item, blocking, quick, value;
  Operation put;

  PsGraph() {
    Scope ps = root.with_device("/job:ps/task:0");
    Scope worker = root.with_device("/job:worker/task:0");
    queue = ops::FIFOQueue(ps.with_op_name("q"), {DataType::kInt64}, {.shared_name = "q"});
    item = ops::QueueDequeue(ps, queue, {DataType::kInt64})[0];
    blocking = ops::Add(worker, item, int64_t{1});
    quick = ops::Add(worker, ops::Const(ps, int64_t{41}), int64_t{1});
    value = ops::Placeholder(ps, DataType::kInt64);
    put = ops::QueueEnqueue(ps, queue, {value});
    BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  }
};

// Runs `fetch` in the background (with a generous step deadline as a safety net).
std::future<Status> run_in_background(Session& session, const Output& fetch) {
  return std::async(std::launch::async, [&session, fetch] {
    RunOptions options;
    options.timeout_ms = 60000;
    return session.run({}, {fetch}, {}, options).status();
  });
}

// Waits (bounded) for the background step; returns its status and how long it took after
// `since`.
std::pair<Status, int64_t> wait_step(std::future<Status>& step, Clock::time_point since) {
  BOOST_REQUIRE_MESSAGE(step.wait_for(std::chrono::seconds(30)) == std::future_status::ready,
                        "the step did not end");
  Status status = step.get();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
  return {status, ms};
}

Status run_quick(Session& session, const PsGraph& graph, int64_t* ms = nullptr) {
  auto start = Clock::now();
  RunOptions options;
  options.timeout_ms = 30000;
  Status status = testing::status_of([&] {
    BOOST_TEST(
        value_or_throw(session.run({}, {graph.quick}, {}, options)).at(0).scalar<int64_t>() == 42);
  });
  if (ms) {
    *ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  }
  return status;
}

// The start of every scenario: a cluster, a session on the worker, and a step in the
// background that waits on the ps's empty queue.
struct StepBlockedOnPs {
  FaultCluster cluster;
  PsGraph graph;
  Session session = value_or_throw(Session::create(cluster.target("worker")));
  std::future<Status> step;

  StepBlockedOnPs() {
    BOOST_REQUIRE(run_quick(session, graph).ok());
    step = run_in_background(session, graph.blocking);
    // Not a condition: the step blocks in a dequeue on the ps, which nothing outside the ps
    // reports; the pause lets it get there. Were it late, the fault would hit the step
    // earlier and the scenario would still hold (it only checks how the step ends).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }

  // Sends `signal` to the task of `job` and returns how the blocked step ended, and how long
  // after the signal.
  std::pair<Status, int64_t> fault(const std::string& job, int signal) {
    auto since = Clock::now();
    if (signal == SIGKILL) {
      cluster.node(job).stop(SIGKILL, 5000);
    } else {
      ::kill(cluster.node(job).pid(), signal);
    }
    return wait_step(step, since);
  }
};

// Kills the ps (SIGKILL) at chosen steps — before the step runs (the step then fails), or in
// after_run, before the chief's checkpoint saver (whose save then fails) — and starts it again,
// empty, a second later, as `troupe launch --max_restarts` would. Also checks that every
// after_run sees the session that exists then, not one a recovery has freed.
class PsKillerHook : public SessionRunHook {
 public:
  enum class When { kBeforeStep, kAfterStep };

  PsKillerHook(FaultCluster& cluster, std::map<int, When> kills)
      : cluster_(cluster), kills_(std::move(kills)) {}
  ~PsKillerHook() override { join(); }

  std::vector<Output> before_run(RunContext&) override {
    ++step_;
    if (due(When::kBeforeStep)) kill_and_restart_later();
    return {};
  }
  Status after_run(RunContext& context, const std::vector<Tensor>&) override {
    if (owner != nullptr && &context.session() != &owner->session()) ++stale_sessions;
    if (due(When::kAfterStep)) kill_and_restart_later();
    return Status::OK();
  }
  void join() {
    if (restarter_.joinable()) restarter_.join();
  }

  MonitoredTrainingSession* owner = nullptr;
  int stale_sessions = 0;
  int kills = 0;

 private:
  bool due(When when) const {
    auto it = kills_.find(step_);
    return it != kills_.end() && it->second == when;
  }
  void kill_and_restart_later() {
    join();
    cluster_.node("ps").stop(SIGKILL, 5000);
    ++kills;
    restarter_ = std::thread([this] {
      // Not a wait: the ps stays down a second on purpose, so the chief's recovery has to
      // retry until it is back.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      cluster_.start("ps");
    });
  }

  FaultCluster& cluster_;
  std::map<int, When> kills_;
  int step_ = 0;
  std::thread restarter_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(failure_detection)

BOOST_FIXTURE_TEST_CASE(a_killed_ps_fails_the_step_and_later_steps_until_it_is_back,
                        StepBlockedOnPs) {
  auto [status, ms] = fault("ps", SIGKILL);
  testing::check_error(status, Code::kUnavailable, kPs);
  BOOST_TEST(ms < kHeartbeatTimeoutMs + 2000, "noticed after " << ms << " ms");

  // While it is down, steps that need it fail fast, naming it.
  int64_t quick_ms = 0;
  testing::check_error(run_quick(session, graph, &quick_ms), Code::kUnavailable, kPs);
  BOOST_TEST(quick_ms < kHeartbeatTimeoutMs + 1000, "failed after " << quick_ms << " ms");

  // A restarted ps (empty) is used again by the same session.
  cluster.start("ps");
  Status back = run_quick(session, graph);
  BOOST_TEST(back.ok(), back.to_string());
}

BOOST_FIXTURE_TEST_CASE(a_frozen_ps_is_detected_by_heartbeats_and_found_again, StepBlockedOnPs) {
  auto [status, ms] = fault("ps", SIGSTOP);
  testing::check_error(status, Code::kUnavailable, kPs);
  testing::check_error(status, Code::kUnavailable, "heartbeat");
  BOOST_TEST(ms < kHeartbeatTimeoutMs + 2000, "noticed after " << ms << " ms");

  int64_t quick_ms = 0;
  testing::check_error(run_quick(session, graph, &quick_ms), Code::kUnavailable, kPs);
  BOOST_TEST(quick_ms < 1000, "failed after " << quick_ms << " ms");

  ::kill(cluster.node("ps").pid(), SIGCONT);
  Status back = errors::Unavailable("not tried");
  testing::wait_until([&] { return (back = run_quick(session, graph)).ok(); },
                      std::chrono::seconds(10));
  BOOST_TEST(back.ok(), back.to_string());
}

BOOST_FIXTURE_TEST_CASE(a_frozen_worker_is_detected_by_its_client, StepBlockedOnPs) {
  auto [status, ms] = fault("worker", SIGSTOP);
  testing::check_error(status, Code::kUnavailable, "heartbeat");
  BOOST_TEST(ms < ClientHeartbeats{}.timeout.count() + 3000, "noticed after " << ms << " ms");
  ::kill(cluster.node("worker").pid(), SIGCONT);
}

// A step sent to a worker while it is frozen: once it resumes, the step completes or fails at
// once. It used to wait for its deadline (for good without one): the ps, which had counted the
// worker lost, could not send it the step's tensor, and its partition had already answered.
BOOST_FIXTURE_TEST_CASE(a_step_sent_to_a_frozen_worker_ends_after_it_resumes, StepBlockedOnPs) {
  auto [status, ms] = fault("worker", SIGSTOP);
  testing::check_error(status, Code::kUnavailable, "heartbeat");
  auto since = Clock::now();
  auto next = std::async(std::launch::async, [&] {
    RunOptions options;
    options.timeout_ms = 10000;
    return session.run({}, {graph.quick}, {}, options).status();
  });
  // Not a condition: the step is sent while the worker is still frozen.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ::kill(cluster.node("worker").pid(), SIGCONT);
  BOOST_REQUIRE_MESSAGE(next.wait_for(std::chrono::seconds(30)) == std::future_status::ready,
                        "the step did not end");
  Status ended = next.get();
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
  BOOST_TEST_MESSAGE("the step sent while frozen: " << ended << " after " << took << " ms");
  // It fails at once (the ps, which still counts the worker lost, cannot send it the tensor),
  // naming the worker; before, it waited for its deadline.
  BOOST_TEST(took < 1000 + kHeartbeatTimeoutMs + 2000, "ended after " << took << " ms");
  if (!ended.ok()) testing::check_error(ended, Code::kUnavailable, "/job:worker/replica:0/task:0");
  // And the session works again.
  Status back = errors::Unavailable("not tried");
  testing::wait_until([&] { return (back = run_quick(session, graph)).ok(); },
                      std::chrono::seconds(10));
  BOOST_TEST(back.ok(), back.to_string());
}

BOOST_FIXTURE_TEST_CASE(a_step_whose_worker_dies_is_aborted_on_the_ps, StepBlockedOnPs) {
  // A dequeue on the ps driven by the worker's master: when the worker dies, the ps aborts
  // it, so the next item goes to whoever asks next instead of to the dead step.
  auto [status, ms] = fault("worker", SIGKILL);
  BOOST_TEST(status.code() == Code::kUnavailable, status.to_string());
  // Not a condition: the ps aborts the dead worker's dequeue when it notices the loss, which
  // it reports to no one; the bounded dequeue below fails if it has not.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  SessionConfig only_ps;  // the worker is down: see only the ps
  only_ps.device_filters = {"/job:ps"};
  Session on_ps = value_or_throw(Session::create(cluster.target("ps"), only_ps));
  value_or_throw(on_ps.run(FeedDict{{graph.value, Tensor(int64_t{7})}}, {}, {graph.put}));
  RunOptions options;
  options.timeout_ms = 5000;
  std::vector<Tensor> out;
  Status dequeued = testing::status_of(
      [&] { out = value_or_throw(on_ps.run(FeedDict{}, {graph.item}, {}, options)); });
  BOOST_REQUIRE_MESSAGE(dequeued.ok(), dequeued.to_string());
  BOOST_TEST(out.at(0).scalar<int64_t>() == 7);
}

// The client's heartbeats are configurable: with a 1000 ms timeout, a client of a frozen worker
// is told within about a second and a half (the interval plus the timeout), not four.
BOOST_AUTO_TEST_CASE(a_clients_heartbeat_timeout_is_configurable) {
  FaultCluster cluster;
  PsGraph graph;
  RuntimeOptions options;
  options.client_heartbeat_interval = std::chrono::milliseconds(200);
  options.client_heartbeat_timeout = std::chrono::milliseconds(1000);
  auto runtime = value_or_throw(Runtime::create(options));
  Session session =
      value_or_throw(Session::create(cluster.target("worker"), std::nullopt, runtime));
  BOOST_REQUIRE(run_quick(session, graph).ok());
  auto step = run_in_background(session, graph.blocking);
  // Not a condition: a pause for the step to reach the ps's queue (see StepBlockedOnPs).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto since = Clock::now();
  ::kill(cluster.node("worker").pid(), SIGSTOP);
  auto [status, ms] = wait_step(step, since);
  ::kill(cluster.node("worker").pid(), SIGCONT);
  testing::check_error(status, Code::kUnavailable, "no answer to a heartbeat within 1000 ms");
  BOOST_TEST(ms < 2 * 1200, "noticed after " << ms << " ms");
}

// A master session handles one message at a time, so while it imports a large graph a
// heartbeat sent to it would wait behind the import, and a busy server would seem dead. The
// client's heartbeats go to the server's task actor instead: an import that takes many times
// the heartbeat timeout succeeds.
BOOST_AUTO_TEST_CASE(a_server_busy_importing_a_large_graph_still_answers_heartbeats) {
  int port = value_or_throw(pick_free_port());
  std::string target = "troupe://127.0.0.1:" + std::to_string(port);
  ChildProcess node({TROUPE_CLI, "node", "--insecure", "--port=" + std::to_string(port)});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", kStartMs), node.output());
  // The first run of a graph of 120,002 nodes (sent, imported, then a step that only fetches
  // `probe`) on a session of a runtime with `options`; returns how long it took, in ms.
  auto first_run_ms = [&](const RuntimeOptions& options) -> int64_t {
    auto runtime = value_or_throw(Runtime::create(options));
    Session session = value_or_throw(Session::create(target, std::nullopt, runtime));
    Scope root = Scope::new_root();
    Output sum = ops::Const(root, 0.0f);
    for (int i = 0; i < 60000; ++i)
      sum = ops::Add(root, sum, ops::Const(root, 1.0f));
    Output probe = ops::Const(root, 7.0f);
    BOOST_REQUIRE(root.ok());
    auto since = Clock::now();
    Tensor out;
    Status ran = testing::status_of([&] { out = value_or_throw(session.run(probe)); });
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
    BOOST_REQUIRE_MESSAGE(ran.ok(), ran.to_string());
    BOOST_TEST(out.scalar<float>() == 7.0f);
    return ms;
  };
  RuntimeOptions quiet;
  quiet.client_heartbeat_timeout = std::chrono::milliseconds(0);  // no heartbeats
  int64_t baseline_ms = first_run_ms(quiet);
  RuntimeOptions eager;
  // A bound several times shorter than the import (about 1 s here), with room for a loaded
  // machine: at 100 ms, a parallel test on the other core once made a heartbeat late.
  eager.client_heartbeat_interval = std::chrono::milliseconds(50);
  eager.client_heartbeat_timeout = std::chrono::milliseconds(250);
  int64_t ms = first_run_ms(eager);
  BOOST_TEST_MESSAGE("the first run took " << ms << " ms with heartbeats, " << baseline_ms
                                           << " ms without");
  // Without this the test proves nothing: the graph must take longer than a heartbeat's bound.
  BOOST_WARN_MESSAGE(baseline_ms > 750, "the graph took only " << baseline_ms << " ms");
  BOOST_TEST(ms <= 2 * baseline_ms, ms << " ms with heartbeats, " << baseline_ms << " without");
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
}

// A client process killed in the middle of a step that waits on a queue: its session on the
// server closes and the step is cancelled, so the next item goes to a live client instead of
// the dead one.
BOOST_AUTO_TEST_CASE(a_client_that_dies_mid_step_leaves_nothing_behind) {
  int port = value_or_throw(pick_free_port());
  std::string target = "troupe://127.0.0.1:" + std::to_string(port);
  ChildProcess node({TROUPE_CLI, "node", "--insecure", "--port=" + std::to_string(port)});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", kStartMs), node.output());
  ChildProcess client({DEQUEUE_CLIENT, target});
  BOOST_REQUIRE_MESSAGE(client.wait_for("dequeuing", kStartMs), client.output());
  // Not conditions: the client's step reaching the queue, and the node noticing the client
  // gone, are seen by no one outside the node. If either pause is short the item below goes
  // to the dead client's step and the bounded dequeue fails: the test errs towards failing.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  BOOST_REQUIRE(::kill(client.pid(), SIGKILL) == 0);
  client.stop(0, 10000);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root.with_op_name("q"), {DataType::kInt64}, {.shared_name = "q"});
  auto value = ops::Placeholder(root, DataType::kInt64);
  auto put = ops::QueueEnqueue(root, queue, {value});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt64})[0];
  Session session = value_or_throw(Session::create(target));
  throw_if_error(session.run_targets({put}, {{value, Tensor(int64_t{7})}}));
  RunOptions bounded;
  bounded.timeout_ms = 5000;
  Status taken = testing::status_of([&] {
    BOOST_TEST(
        value_or_throw(session.run(FeedDict{}, {item}, {}, bounded)).at(0).scalar<int64_t>() == 7);
  });
  BOOST_TEST(taken.ok(), "the dead client's step took the item: " << taken.to_string());
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
}

// The chief checkpoints after every step; the ps dies once during a checkpoint save and once
// during a step. Each time the session recovers (restoring the last checkpoint on the empty
// ps) and training goes on to the end.
BOOST_AUTO_TEST_CASE(training_recovers_from_a_ps_lost_in_a_step_or_in_a_checkpoint_save) {
  namespace fs = std::filesystem;
  FaultCluster cluster;
  testing::TempDir temp("troupe-recovery-test");
  const fs::path& dir = temp.path();

  Scope root = Scope::new_root();
  Scope ps = root.with_device("/job:ps/task:0");
  Scope worker = root.with_device("/job:worker/task:0");
  ModelVariable step = get_or_create_global_step(ps);
  ModelVariable w = make_variable(ps, "w", Tensor(0.f));
  auto loss = ops::Square(worker, ops::Sub(worker, w.ref, 3.f));
  Operation train = value_or_throw(GradientDescentOptimizer(0.1).minimize(worker, loss, step.ref));
  BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());

  using When = PsKillerHook::When;
  auto killer = std::make_shared<PsKillerHook>(
      cluster, std::map<int, When>{{3, When::kAfterStep}, {6, When::kBeforeStep}});
  MonitoredTrainingSessionOptions options;
  options.master = cluster.target("worker");
  options.checkpoint_dir = dir.string();
  options.save_checkpoint_steps = 1;
  options.recovery_timeout_ms = 30000;
  options.hooks = {killer, std::make_shared<StopAtStepHook>(step.ref, 10)};
  auto session = value_or_throw(MonitoredTrainingSession::create(root, options));
  killer->owner = session.get();

  int runs = 0;
  while (!session->should_stop() && runs < 40) {
    auto result = session->run({}, {}, {train});
    BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
    ++runs;
  }
  killer->join();
  BOOST_TEST(killer->kills == 2);
  BOOST_TEST(session->recoveries() == 2);
  BOOST_TEST(killer->stale_sessions == 0);
  BOOST_TEST(session->should_stop());
  BOOST_TEST(value_or_throw(session->session().run(step.ref)).scalar<int64_t>() >= 10);
  BOOST_TEST(session->close().ok());
  auto latest = value_or_throw(latest_checkpoint(dir.string()));
  BOOST_TEST(latest.has_value());
}

// The model of the recovery scenarios: w on the ps, trained towards 3 from the worker.
struct PsModel {
  Scope root = Scope::new_root();
  ModelVariable step = get_or_create_global_step(root.with_device("/job:ps/task:0"));
  ModelVariable w = make_variable(root.with_device("/job:ps/task:0"), "w", Tensor(0.f));
  Output loss;
  Operation train;

  PsModel() {
    Scope worker = root.with_device("/job:worker/task:0");
    loss = ops::Square(worker, ops::Sub(worker, w.ref, 3.f));
    train = value_or_throw(GradientDescentOptimizer(0.1).minimize(worker, loss, step.ref));
    BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  }
};

// A chief whose ps is gone for good recovers until recovery_timeout_ms; a stop request (the
// first SIGTERM of troupe train) ends that recovery at once, and the close that follows
// (whose final save cannot reach the ps) does not start another one.
BOOST_AUTO_TEST_CASE(a_stop_request_ends_a_recovery_and_the_close_after_it) {
  FaultCluster cluster;
  testing::TempDir dir("troupe-recovery-test");
  PsModel m;
  std::stop_source stop;
  MonitoredTrainingSessionOptions options;
  options.master = cluster.target("worker");
  options.checkpoint_dir = dir.path().string();
  options.save_checkpoint_steps = 1;
  options.recovery_timeout_ms = 300000;
  options.stop = stop.get_token();
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  BOOST_REQUIRE(session->run({}, {}, {m.train}).ok());
  cluster.node("ps").stop(SIGKILL, 5000);

  auto step = std::async(std::launch::async, [&] { return session->run({}, {}, {m.train}); });
  // Not a condition: the recovery's first tries fail while we wait; the stop ends it anyway.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto since = Clock::now();
  stop.request_stop();
  BOOST_REQUIRE(step.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  auto ran = step.get();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
  testing::check_error(ran.status(), Code::kCancelled, "stopped while recovering");
  BOOST_TEST(ms < kHeartbeatTimeoutMs + 3000, "stopped after " << ms << " ms");

  since = Clock::now();
  Status closed = session->close();
  ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
  BOOST_TEST(!closed.ok());
  BOOST_TEST(ms < kHeartbeatTimeoutMs + 3000, "closed after " << ms << " ms");
  // The checkpoint of the step before the ps was lost is there to resume from.
  BOOST_TEST(value_or_throw(latest_checkpoint(dir.path().string())).has_value());
}

// A ps lost after the last training step, during the final evaluation (run_step_fn) and during
// the final save (close), is recovered from as in a step: the evaluation runs on the restored
// model and the final checkpoint is written.
BOOST_AUTO_TEST_CASE(the_final_evaluation_and_save_survive_a_lost_ps) {
  FaultCluster cluster;
  testing::TempDir dir("troupe-recovery-test");
  PsModel m;
  MonitoredTrainingSessionOptions options;
  options.master = cluster.target("worker");
  options.checkpoint_dir = dir.path().string();
  options.save_checkpoint_steps = 1;
  options.recovery_timeout_ms = 30000;
  options.hooks = {std::make_shared<StopAtStepHook>(m.step.ref, 5)};
  auto session = value_or_throw(MonitoredTrainingSession::create(m.root, options));
  while (!session->should_stop())
    BOOST_REQUIRE(session->run({}, {}, {m.train}).ok());

  auto kill_and_restart = [&] {
    cluster.node("ps").stop(SIGKILL, 5000);
    return std::async(std::launch::async, [&] {
      std::this_thread::sleep_for(std::chrono::seconds(1));  // down for a while, on purpose
      cluster.start("ps");
    });
  };
  auto restarted = kill_and_restart();
  int calls = 0;
  float loss = -1;
  Status evaluated = session->run_step_fn([&](Session& s) -> Status {
    ++calls;
    TROUPE_ASSIGN_OR_RETURN(Tensor value, s.run(m.loss));
    loss = value.scalar<float>();
    return Status::OK();
  });
  restarted.wait();
  BOOST_TEST(evaluated.ok(), evaluated.to_string());
  BOOST_TEST(calls >= 2);
  BOOST_TEST(session->recoveries() == 1);
  BOOST_TEST(loss >= 0.f);
  BOOST_TEST(loss < 9.f);  // the restored model is trained (w = 0 would give 9)

  restarted = kill_and_restart();
  Status closed = session->close();
  restarted.wait();
  BOOST_TEST(closed.ok(), closed.to_string());
  BOOST_TEST(session->recoveries() == 2);
  auto latest = value_or_throw(latest_checkpoint(dir.path().string()));
  BOOST_REQUIRE(latest.has_value());
  BOOST_TEST(std::filesystem::path(*latest).filename().string() == "model.ckpt-5");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
