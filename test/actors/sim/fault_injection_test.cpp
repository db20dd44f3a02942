// Simulated faults in an in-process cluster (actors/sim/fault_injector.hpp): a short training job
// runs under many seeded faults — a task killed, partition runs dropped or delayed at some
// step — and each run must end with the right result or a typed error, within a bound.
#include <future>
#include <map>
#include <thread>

#include "status_checks.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {
namespace {

constexpr int kSteps = 30;
constexpr int64_t kStepTimeoutMs = 1000;

// y = 3x + 1 by SGD: the weights on the ps, the loss and gradients on worker 1, the client's
// session on worker 0; every step touches every task.
struct LinearJob {
  LinearJob() {
    Scope ps = root.with_device("/job:ps/task:0");
    Scope w1 = root.with_device("/job:worker/task:1");
    w = make_variable(ps, "w", Tensor(0.f));
    b = make_variable(ps, "b", Tensor(0.f));
    x = ops::Placeholder(w1.with_op_name("x"), DataType::kFloat, PartialShape({-1}));
    y = ops::Placeholder(w1.with_op_name("y"), DataType::kFloat, PartialShape({-1}));
    auto error = ops::Sub(w1, ops::Add(w1, ops::Mul(w1, x, w.ref), b.ref), y);
    loss = ops::Mean(w1, ops::Square(w1, error), {0});
    train = value_or_throw(GradientDescentOptimizer(0.1).minimize(w1, loss));
    init = global_variables_initializer(root);
    BOOST_REQUIRE_MESSAGE(root.ok(), root.status().to_string());
  }

  // Trains; the loss at the end, or the first step's error.
  StatusOr<float> run(const std::string& target) {
    try {
      Session session = value_or_throw(Session::create(target));
      RunOptions bounded;
      bounded.timeout_ms = kStepTimeoutMs;
      value_or_throw(session.run(FeedDict{}, {}, {init}, bounded));
      Tensor xs = Tensor::from_vector<float>({-1, 0, 1, 2});
      Tensor ys = Tensor::from_vector<float>({-2, 1, 4, 7});
      float last = 0;
      for (int step = 0; step < kSteps; ++step) {
        last = value_or_throw(session.run({{x, xs}, {y, ys}}, {loss}, {train}, bounded))
                   .at(0)
                   .scalar<float>();
      }
      return last;
    } catch (const StatusError& e) {
      return e.status();
    }
  }

  Scope root = Scope::new_root();
  ModelVariable w, b;
  Output x, y, loss;
  Operation train, init;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(fault_injection)

BOOST_AUTO_TEST_CASE(faults_fire_where_and_when_asked) {
  Fault drop{"ps", 0, FaultKind::kDrop, 3, 2};
  int killed = 0;
  FaultInjector injector(drop, [&] { ++killed; });
  std::chrono::milliseconds delay{0};
  std::vector<FaultInjector::Action> actions;
  for (int i = 0; i < 6; ++i)
    actions.push_back(injector.on_run_partition(&delay));
  using A = FaultInjector::Action;
  BOOST_TEST((actions == std::vector<A>{A::kRun, A::kRun, A::kDrop, A::kDrop, A::kRun, A::kRun}));

  FaultInjector kill(Fault{"ps", 0, FaultKind::kKill, 2}, [&] { ++killed; });
  BOOST_TEST((kill.on_run_partition(&delay) == A::kRun));
  BOOST_TEST((kill.on_run_partition(&delay) == A::kKill));
  BOOST_TEST((kill.on_run_partition(&delay) == A::kKill));
  BOOST_TEST(killed == 1);

  ClusterSpec cluster = value_or_throw(make_ps_worker_cluster(1, 2, false));
  testing::check_error(Fault{"ps", 3}.validate(cluster), Code::kInvalidArgument,
                       "/job:ps/replica:0/task:3");
  testing::check_error(Fault{"ps", 0, FaultKind::kDrop, 0}.validate(cluster),
                       Code::kInvalidArgument, "at_partition >= 1");
  BOOST_TEST(Fault::random(7, cluster, 10).to_string() ==
             Fault::random(7, cluster, 10).to_string());
  LocalClusterOptions twice;
  twice.faults = {Fault{"ps", 0}, Fault{"ps", 0, FaultKind::kDrop}};
  testing::check_error(LocalCluster::start(1, 1, twice).status(), Code::kInvalidArgument,
                       "more than one fault for /job:ps/replica:0/task:0");
}

BOOST_AUTO_TEST_CASE(training_under_seeded_faults_ends_right_or_with_a_typed_error) {
  ClusterSpec spec = value_or_throw(make_ps_worker_cluster(1, 2, false));
  std::map<std::string, int> outcomes;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    Fault fault = Fault::random(seed, spec, 2 * kSteps);
    BOOST_TEST_CONTEXT("seed " << seed << ": " << fault.to_string()) {
      LocalClusterOptions options;
      options.faults = {fault};
      auto cluster = value_or_throw(LocalCluster::start(spec, options));
      LinearJob job;
      // Every step has a deadline, so a run is bounded by construction; the bound checks it.
      auto result = std::async(std::launch::async, [&] {
        return job.run(value_or_throw(cluster->target("worker", 0)));
      });
      if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        BOOST_FAIL("the job hung under " << fault.to_string());
      }
      StatusOr<float> loss = result.get();
      if (loss.ok()) {
        BOOST_TEST(*loss < 1e-2f, "loss " << *loss);  // converged to y = 3x + 1
        ++outcomes["converged"];
      } else {
        Code code = loss.status().code();
        BOOST_TEST((code == Code::kUnavailable || code == Code::kAborted ||
                    code == Code::kDeadlineExceeded || code == Code::kCancelled),
                   loss.status().to_string());
        ++outcomes[std::string(code_name(code))];
      }
    }
  }
  for (const auto& [outcome, count] : outcomes)
    BOOST_TEST_MESSAGE(outcome << ": " << count);
  // The seeds cover both ends: runs that recover and runs that fail.
  BOOST_TEST(outcomes["converged"] > 0);
  BOOST_TEST(outcomes.size() > 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
