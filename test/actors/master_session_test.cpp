// Deterministic tests of the master session with real task, directory and device actors of a
// ps task and a worker task, the session made by the worker's master service: the order of a step's
// messages (devices listed, partitions registered, then run, tensors exchanged peer to peer), a
// failed partition aborting the rest of its step, and a task lost in the middle of a step.
#include <boost/test/unit_test.hpp>

#include "actors/deterministic_system.hpp"
#include "actors/task_in_system.hpp"
#include "status_checks.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::DeterministicSystem;

// Names only: no network is used, the tasks are found in the local registry.
const std::string kPsAddress = "ps-0.test:2222";
const std::string kWorkerAddress = "worker-0.test:2222";
const std::string kPsTask = "/job:ps/replica:0/task:0";

// A ps task and a worker task in one deterministic actor system, and a master session of the
// worker's.
class PsWorkerCluster {
 public:
  PsWorkerCluster() {
    cluster_ = ClusterSpec::create({{"ps", {kPsAddress}}, {"worker", {kWorkerAddress}}}).value();
    worker_task_ = start_task("worker", kWorkerAddress);
    ps_task_ = start_task("ps", kPsAddress);
    // A session as the worker's master service creates it for a client.
    auto service = sys_.ask<caf::actor>(worker_task_, get_master_atom::value);
    BOOST_TEST_REQUIRE(service.ok(), service.status().to_string());
    auto session = sys_.ask<caf::actor>(*service, create_session_atom::value, false,
                                        SessionConfig{}, caf::actor());
    BOOST_TEST_REQUIRE(session.ok(), session.status().to_string());
    master_ = *session;
    sys_.label(master_, "master");
    sys_.run();
    sys_.clear_trace();
  }

  ~PsWorkerCluster() {
    unregister_local_task(worker_task_);
    unregister_local_task(ps_task_);
  }

  DeterministicSystem& sys() { return sys_; }
  const caf::actor& master() const { return master_; }
  const caf::actor& ps_task() const { return ps_task_; }

  // Starts a ps task anew at the address of the one that was lost.
  void restart_ps() {
    unregister_local_task(ps_task_);
    ps_task_ = start_task("ps", kPsAddress);
    sys_.clear_trace();
  }

  Status extend(const Scope& scope) {
    return sys_.ask_unit(master_, extend_graph_atom::value, scope.graph().to_graph_def());
  }

  // Starts a step fetching `fetches` and running `targets`; its answer waits in the client's
  // mailbox for finish_step.
  void start_step(std::vector<std::string> fetches, std::vector<std::string> targets = {}) {
    RunStepRequest request;
    request.signature.fetches = std::move(fetches);
    request.signature.targets = std::move(targets);
    step_.emplace(sys_.client()->request(master_, caf::infinite, run_step_atom::value, request));
  }

  StatusOr<RunStepResponse> finish_step() {
    sys_.run();
    if (sys_.client()->mailbox().empty()) return errors::DeadlineExceeded("the step never ended");
    StatusOr<RunStepResponse> result = errors::Internal("no answer");
    step_->receive([&](RunStepResponse& response) { result = std::move(response); },
                   [&](caf::error& error) { result = from_caf_error(error); });
    return result;
  }

  StatusOr<RunStepResponse> run_step(std::vector<std::string> fetches,
                                     std::vector<std::string> targets = {}) {
    start_step(std::move(fetches), std::move(targets));
    return finish_step();
  }

 private:
  caf::actor start_task(const std::string& job, const std::string& address) {
    caf::actor task = testing::start_task(sys_, cluster_, job).task;
    BOOST_TEST_REQUIRE(register_local_address(address, LocalTask{nullptr, task}));
    return task;
  }

  DeterministicSystem sys_;
  ClusterSpec cluster_;
  caf::actor worker_task_;
  caf::actor ps_task_;
  caf::actor master_;
  using StepHandle = decltype(std::declval<caf::scoped_actor&>()->request(
      std::declval<caf::actor&>(), caf::infinite, run_step_atom::value,
      std::declval<RunStepRequest&>()));
  std::optional<StepHandle> step_;
};

// x = 3 on the ps, y = -x on the worker.
Scope ps_to_worker_graph() {
  Scope s = Scope::new_root();
  auto x = ops::Const(s.with_device("/job:ps/task:0").with_op_name("x"), 3.f);
  ops::Neg(s.with_device("/job:worker/task:0").with_op_name("y"), x);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  return s;
}

float scalar_of(const RunStepResponse& response) {
  BOOST_TEST_REQUIRE(response.fetches.size() == 1u);
  return response.fetches[0].scalar<float>();
}

// The position of the first hop "sender -> receiver: what" at or after `from`, or -1.
int position(const DeterministicSystem& sys, const std::string& hop, size_t from = 0) {
  for (size_t i = from; i < sys.trace().size(); ++i)
    if (sys.trace()[i].to_string() == hop) return static_cast<int>(i);
  return -1;
}

int count(const DeterministicSystem& sys, const std::string& what) {
  int n = 0;
  for (const auto& hop : sys.trace())
    n += hop.what == what;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(master_session)

BOOST_AUTO_TEST_CASE(a_step_lists_devices_registers_partitions_then_runs_them) {
  PsWorkerCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  BOOST_TEST_REQUIRE(cluster.extend(ps_to_worker_graph()).ok());
  sys.clear_trace();

  auto first = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(first.ok(), first.status().to_string());
  BOOST_TEST(scalar_of(*first) == -3.f);
  BOOST_TEST(first->metadata.devices.size() == 2u);
  const std::string trace = sys.trace_text();
  BOOST_TEST_MESSAGE("first step:\n" << trace);

  // The devices are listed once, through the directory, which asks each task.
  BOOST_TEST(sys.in_order({"client -> master: runstep", "master -> worker directory: listdevs",
                           "worker directory -> master: answer"}),
             trace);
  BOOST_TEST(position(sys, "worker directory -> ps task: devices") >= 0, trace);
  BOOST_TEST(position(sys, "worker directory -> worker task: devices") >= 0, trace);
  // Each device registers its partition, then runs it; the worker's waits for the tensor the
  // ps device sends it directly.
  BOOST_TEST(sys.in_order({"worker directory -> master: answer", "master -> ps device: regpart",
                           "ps device -> master: answer", "master -> ps device: runpart",
                           "ps device -> master: answer"}),
             trace);
  BOOST_TEST(
      sys.in_order({"worker directory -> master: answer", "master -> worker device: regpart",
                    "worker device -> master: answer", "master -> worker device: runpart",
                    "ps device -> worker device: recvtensor", "worker device -> master: answer"}),
      trace);
  // No partition runs before every partition is registered.
  int last_registered = std::max(position(sys, "ps device -> master: answer"),
                                 position(sys, "worker device -> master: answer"));
  BOOST_TEST(position(sys, "master -> ps device: runpart") > last_registered, trace);
  BOOST_TEST(position(sys, "master -> worker device: runpart") > last_registered, trace);

  // The same signature again: prepared already, so only the runs.
  sys.clear_trace();
  auto second = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(second.ok(), second.status().to_string());
  BOOST_TEST(scalar_of(*second) == -3.f);
  BOOST_TEST(count(sys, "listdevs") == 0, sys.trace_text());
  BOOST_TEST(count(sys, "regpart") == 0, sys.trace_text());
  BOOST_TEST(count(sys, "runpart") == 2, sys.trace_text());
}

BOOST_AUTO_TEST_CASE(a_failed_partition_aborts_the_rest_of_its_step) {
  PsWorkerCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  // v is read before it is initialized: the ps partition fails while the worker's waits for
  // the value.
  Scope s = Scope::new_root();
  Scope ps = s.with_device("/job:ps/task:0");
  auto v = ops::Variable(ps.with_op_name("v"), TensorShape{}, DataType::kFloat);
  auto read = ops::Identity(ps.with_op_name("read"), v);
  ops::Neg(s.with_device("/job:worker/task:0").with_op_name("y"), read);
  ops::Assign(ps.with_op_name("init"), v, ops::Const(ps.with_op_name("three"), 3.f));
  BOOST_TEST_REQUIRE(cluster.extend(s).ok());
  sys.clear_trace();

  auto failed = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(!failed.ok());
  check_error(failed.status(), Code::kFailedPrecondition, "v");
  const std::string trace = sys.trace_text();
  BOOST_TEST_MESSAGE("failed step:\n" << trace);
  // The master answers the client at once and cancels the step on the worker, whose
  // partition then ends with the abort instead of waiting for the tensor for good.
  BOOST_TEST(sys.in_order({"master -> worker device: runpart", "ps device -> master: error",
                           "master -> worker device: abortstep", "worker device -> master: error"}),
             trace);
  BOOST_TEST(position(sys, "ps device -> worker device: recvtensor") == -1, trace);

  // Nothing of the failed step is left behind: once v is initialized, the same run works.
  auto init = cluster.run_step({}, {"init"});
  BOOST_TEST_REQUIRE(init.ok(), init.status().to_string());
  auto again = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(again.ok(), again.status().to_string());
  BOOST_TEST(scalar_of(*again) == -3.f);
}

BOOST_AUTO_TEST_CASE(a_task_lost_during_a_step_fails_it_naming_the_task) {
  PsWorkerCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  // The ps partition dequeues from a queue on the ps; the worker's waits for the item.
  Scope s = Scope::new_root();
  Scope ps = s.with_device("/job:ps/task:0");
  Scope worker = s.with_device("/job:worker/task:0");
  ops::FIFOQueueOptions scalars;
  scalars.shapes = {PartialShape::scalar()};
  auto queue = ops::FIFOQueue(ps.with_op_name("queue"), {DataType::kFloat}, scalars);
  ops::QueueEnqueue(ps.with_op_name("put"), queue, {ops::Const(ps.with_op_name("three"), 3.f)});
  auto item = ops::QueueDequeue(ps.with_op_name("take"), queue, {DataType::kFloat});
  ops::Neg(worker.with_op_name("y"), item[0]);
  ops::Const(worker.with_op_name("local"), 5.f);
  BOOST_TEST_REQUIRE(cluster.extend(s).ok());
  BOOST_TEST_REQUIRE(cluster.run_step({}, {"put"}).ok());
  auto first = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(first.ok(), first.status().to_string());
  BOOST_TEST(scalar_of(*first) == -3.f);

  // The queue is empty now: the next step waits on the ps, and the ps task dies under it.
  sys.clear_trace();
  cluster.start_step({"y:0"});
  sys.run();
  BOOST_TEST_REQUIRE(sys.client()->mailbox().empty(), "the step ended:\n" << sys.trace_text());
  BOOST_TEST(position(sys, "master -> ps device: runpart") >= 0, sys.trace_text());
  BOOST_TEST(position(sys, "master -> worker device: runpart") >= 0, sys.trace_text());
  caf::anon_send_exit(cluster.ps_task(), caf::exit_reason::kill);
  auto lost = cluster.finish_step();
  BOOST_TEST_REQUIRE(!lost.ok());
  check_error(lost.status(), Code::kUnavailable, kPsTask);
  const std::string trace = sys.trace_text();
  BOOST_TEST_MESSAGE("lost step:\n" << trace);
  // The worker's directory saw the task go and told the master, which cancelled the step on
  // the worker.
  BOOST_TEST(sys.in_order({"anonymous -> ps task: exit", "worker directory -> master: tasklost",
                           "master -> worker device: abortstep", "worker device -> master: error"}),
             trace);

  // Steps that do not use the lost task go on.
  auto local = cluster.run_step({"local:0"});
  BOOST_TEST_REQUIRE(local.ok(), local.status().to_string());
  BOOST_TEST(scalar_of(*local) == 5.f);

  // A task restarted at the same address is looked up again, and the runs work as before.
  cluster.restart_ps();
  BOOST_TEST_REQUIRE(cluster.run_step({}, {"put"}).ok());
  BOOST_TEST(position(sys, "master -> worker directory: resolvedev") >= 0, sys.trace_text());
  auto recovered = cluster.run_step({"y:0"});
  BOOST_TEST_REQUIRE(recovered.ok(), recovered.status().to_string());
  BOOST_TEST(scalar_of(*recovered) == -3.f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
