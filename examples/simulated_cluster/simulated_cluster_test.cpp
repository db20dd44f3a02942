// Between-graph replication on a simulated cluster: 2 ps + 4 workers in this process
// (LocalCluster), the same actors and messages as a real cluster. Every worker builds the same
// linear regression with replica_device_setter (the variables on the ps tasks, round robin)
// and trains it asynchronously on its own thread through a session on its own task; the model
// they share must fit the data.
#define BOOST_TEST_MODULE simulated_cluster
#include <cmath>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>

#include <troupe/actors/session.hpp>
#include <troupe/actors/sim/local_cluster.hpp>
#include <troupe/graph/device_setter.hpp>
#include <troupe/graph/ops/ops.hpp>
#include <troupe/graph/optimizers.hpp>
#include <troupe/graph/variables.hpp>
#include "troupe/graph/core/throwing.hpp"

using namespace troupe;

namespace {

constexpr int kWorkers = 4;
constexpr int kStepsPerWorker = 150;

// y = 3 a - 2 b + 1 on 64 fixed examples.
struct Model {
  Scope root = Scope::new_root();
  Output x, y, loss;
  ModelVariable w, b, step;
  Operation init, train;

  explicit Model(const LocalCluster& cluster, int task) {
    Scope placed = root.with_device_function(value_or_throw(
        replica_device_setter(cluster.cluster(), fmt::format("/job:worker/task:{}", task))));
    x = ops::Placeholder(placed.with_op_name("x"), DataType::kFloat, PartialShape({-1, 2}));
    y = ops::Placeholder(placed.with_op_name("y"), DataType::kFloat, PartialShape({-1, 1}));
    w = make_variable(placed, "w", value_or_throw(Tensor::from_vector<float>({0, 0}, {2, 1})));
    b = make_variable(placed, "b", value_or_throw(Tensor::from_vector<float>({0}, {1})));
    step = get_or_create_global_step(placed);
    Output predicted = ops::Add(placed, ops::MatMul(placed, x, w.ref), b.ref);
    loss = ops::Mean(placed, ops::Square(placed, ops::Sub(placed, predicted, y)), {0, 1});
    init = global_variables_initializer(root);
    train = value_or_throw(GradientDescentOptimizer(0.1).minimize(placed, loss, step.ref));
  }

  FeedDict data() const {
    Tensor xs(DataType::kFloat, TensorShape{64, 2}), ys(DataType::kFloat, TensorShape{64, 1});
    for (int i = 0; i < 64; ++i) {
      float a = std::sin(float(i)), c = std::cos(3.f * float(i));
      xs.data<float>()[2 * i] = a;
      xs.data<float>()[2 * i + 1] = c;
      ys.data<float>()[i] = 3 * a - 2 * c + 1;
    }
    return {{x, xs}, {y, ys}};
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(four_workers_train_one_model_held_by_two_ps_tasks) {
  auto cluster = value_or_throw(LocalCluster::start(/*num_ps=*/2, /*num_workers=*/kWorkers));

  // The chief (worker 0) initialises the variables once; then every worker trains.
  Model chief_model(*cluster, 0);
  Session chief = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  throw_if_error(chief.run_targets({chief_model.init}));
  const float initial_loss =
      value_or_throw(chief.run(chief_model.data(), {chief_model.loss})).at(0).scalar<float>();

  std::vector<Status> results(kWorkers);
  std::vector<std::thread> workers;
  for (int task = 0; task < kWorkers; ++task) {
    workers.emplace_back([&, task] {
      try {  // the builder API's runs throw StatusError
        Model model(*cluster, task);
        Session session =
            value_or_throw(Session::create(value_or_throw(cluster->target("worker", task))));
        FeedDict data = model.data();
        for (int i = 0; i < kStepsPerWorker; ++i)
          throw_if_error(session.run_targets({model.train}, data));
      } catch (const StatusError& e) {
        results[task] = e.status();
      }
    });
  }
  for (std::thread& worker : workers)
    worker.join();
  for (int task = 0; task < kWorkers; ++task)
    BOOST_CHECK_MESSAGE(results[task].ok(), "worker " << task << ": " << results[task]);

  // One model: every worker's steps counted on the one global step, and it fits.
  std::vector<Tensor> out =
      value_or_throw(chief.run(chief_model.data(), {chief_model.loss, chief_model.w.ref,
                                                    chief_model.b.ref, chief_model.step.ref}));
  BOOST_TEST(out[3].scalar<int64_t>() == kWorkers * kStepsPerWorker);
  BOOST_TEST(out[0].scalar<float>() < 0.01f * initial_loss);
  BOOST_TEST(out[1].data<float>()[0] == 3.f, boost::test_tools::tolerance(0.05f));
  BOOST_TEST(out[1].data<float>()[1] == -2.f, boost::test_tools::tolerance(0.05f));
  BOOST_TEST(out[2].data<float>()[0] == 1.f, boost::test_tools::tolerance(0.05f));

  // The variables live on the ps tasks: a step that reads them runs there, and the worker
  // that asks only computes.
  RunMetadata metadata;
  std::vector<Tensor> values;
  Status read = chief.run({}, {chief_model.w.ref.name(), chief_model.b.ref.name()}, {}, &values, {},
                          &metadata);
  BOOST_REQUIRE_MESSAGE(read.ok(), read);
  std::set<std::string> devices(metadata.devices.begin(), metadata.devices.end());
  BOOST_TEST(devices == (std::set<std::string>{"/job:ps/replica:0/task:0/device:CPU:0",
                                               "/job:ps/replica:0/task:1/device:CPU:0"}));
}
