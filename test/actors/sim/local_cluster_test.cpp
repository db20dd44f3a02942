// The cluster scenarios on an in-process cluster (LocalCluster), plus what only it can show.
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cluster_scenarios.hpp"
#include "troupe/actors/device_rendezvous.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/devices/device.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {

BOOST_AUTO_TEST_SUITE(local_cluster)

BOOST_AUTO_TEST_CASE(model_parallel_step_across_ps_and_workers) {
  auto cluster = value_or_throw(LocalCluster::start(2, 2));
  testing::model_parallel_step(value_or_throw(cluster->target("worker", 0)));
}

BOOST_AUTO_TEST_CASE(any_task_can_be_the_master) {
  auto cluster = value_or_throw(LocalCluster::start(2, 2));
  testing::model_parallel_step(value_or_throw(cluster->target("ps", 1)));
}

BOOST_AUTO_TEST_CASE(tensors_never_pass_through_the_master) {
  auto cluster = value_or_throw(LocalCluster::start(2, 2));
  testing::tensors_go_peer_to_peer(value_or_throw(cluster->target("worker", 0)));
}

BOOST_AUTO_TEST_CASE(a_device_the_cluster_lacks) {
  auto cluster = value_or_throw(LocalCluster::start(2, 2));
  testing::missing_device_is_invalid_argument(value_or_throw(cluster->target("worker", 0)));
}

BOOST_AUTO_TEST_CASE(device_filters_limit_what_a_session_sees) {
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  SessionConfig config;
  config.device_filters = {"/job:ps", "/job:worker/task:0"};
  Scope root = Scope::new_root();
  auto on_ps = ops::Const(root.with_device("/job:ps/task:0"), 20);
  auto on_worker0 = ops::Add(root.with_device("/job:worker/task:0"), on_ps, 1);
  auto on_worker1 = ops::Neg(root.with_device("/job:worker/task:1"), on_ps);
  Session filtered =
      value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0)), config));
  BOOST_TEST(value_or_throw(filtered.run(on_worker0)).scalar<int32_t>() == 21);
  testing::check_error(filtered.run(on_worker1).status(), Code::kInvalidArgument,
                       "/job:worker/task:1");
  Session unfiltered =
      value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  BOOST_TEST(value_or_throw(unfiltered.run(on_worker1)).scalar<int32_t>() == -20);
}

BOOST_AUTO_TEST_CASE(tasks_with_several_cpu_devices) {
  LocalClusterOptions options;
  options.default_session_config.cpu_devices = 3;
  auto cluster = value_or_throw(LocalCluster::start(1, 1, options));
  Scope root = Scope::new_root();
  auto a = ops::Const(root.with_device("/job:worker/task:0/device:CPU:2"), 20);
  auto b = ops::Add(root.with_device("/job:worker/task:0/cpu:1"), a, 1);
  auto c = ops::Neg(root.with_device("/job:ps/task:0/device:CPU:2"), b);
  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  BOOST_TEST(value_or_throw(session.run(c)).scalar<int32_t>() == -21);
  auto missing = ops::Neg(root.with_device("/job:worker/task:0/device:CPU:3"), a);
  testing::check_error(session.run(missing).status(), Code::kInvalidArgument, "CPU:3");

  options.default_session_config.cpu_devices = -1;
  testing::check_error(LocalCluster::start(1, 1, options).status(), Code::kInvalidArgument,
                       "cpu_devices is -1");
}

BOOST_AUTO_TEST_CASE(a_bad_device_filter_is_refused) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  SessionConfig config;
  config.device_filters = {"/job:ps", "job:worker"};
  testing::check_error(
      Session::create(value_or_throw(cluster->target("worker", 0)), config).status(),
      Code::kInvalidArgument, "device_filters");
}

BOOST_AUTO_TEST_CASE(a_stopped_task_fails_the_steps_that_need_it) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  Scope root = Scope::new_root();
  Scope ps = root.with_device("/job:ps/task:0");
  auto queue = ops::FIFOQueue(ps, {DataType::kInt32});
  auto waiting = ops::Neg(root.with_device("/job:worker/task:0"),
                          ops::QueueDequeue(ps, queue, {DataType::kInt32})[0]);
  auto quick = ops::Neg(root.with_device("/job:worker/task:0"), ops::Const(ps, 3));
  auto local = ops::Neg(root.with_device("/job:worker/task:0"), 4);
  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  BOOST_TEST(value_or_throw(session.run(quick)).scalar<int32_t>() == -3);
  RunOptions bounded;
  bounded.timeout_ms = 20000;
  std::thread stopper([&] {
    // Not a condition: a pause so that the step is waiting on the ps when it stops; stopped
    // earlier, the step fails the same way.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    value_or_throw(cluster->server("ps", 0))->stop();
  });
  Status status = session.run({}, {waiting}, {}, bounded).status();
  stopper.join();
  testing::check_error(status, Code::kUnavailable, "/job:ps/replica:0/task:0");
  // Later steps that need it fail too (and fast); the others go on.
  testing::check_error(session.run({}, {quick}, {}, bounded).status(), Code::kUnavailable,
                       "/job:ps/replica:0/task:0");
  BOOST_TEST(value_or_throw(session.run(local)).scalar<int32_t>() == -4);
}

namespace {

// The bytes one training step moves between a worker and the ps holding a 100,000 x 16 float
// table (6.4 MB), reading and updating the rows of `ids`, with the gradient kept sparse or
// densified.
uint64_t bytes_of_a_training_step(bool sparse, const std::vector<int32_t>& ids) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  Scope root = Scope::new_root();
  Scope worker = root.with_device("/job:worker/task:0");
  ModelVariable table = make_variable(root.with_device("/job:ps/task:0"), "table",
                                      zeros(DataType::kFloat, TensorShape{100000, 16}));
  auto id_feed = ops::Placeholder(worker, DataType::kInt32, PartialShape({-1}));
  // As nn.embedding_lookup: the gather runs where the table is.
  auto rows = ops::GatherV2(root.colocate_with(table.ref.op()), table.ref, id_feed, int32_t{0});
  auto loss =
      ops::Sum(worker, ops::Square(worker, ops::Sub(worker, rows, 1.0f)), {int32_t{0}, int32_t{1}});
  AdagradOptimizer optimizer(0.1);
  auto grads = value_or_throw(optimizer.compute_gradients(worker, loss));
  BOOST_TEST_REQUIRE(grads[0].gradient.is_sparse());
  if (!sparse) grads[0].gradient = to_dense(worker, grads[0].gradient);
  Operation train = value_or_throw(optimizer.apply_gradients(worker, grads));
  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  throw_if_error(session.run_targets({global_variables_initializer(root)}));
  const FeedDict feed = {{id_feed, Tensor::from_vector(ids)}};
  throw_if_error(session.run_targets({train}, feed));  // the first step resolves the peers
  const uint64_t before = tensor_bytes_sent_between_tasks();
  throw_if_error(session.run_targets({train}, feed));
  return tensor_bytes_sent_between_tasks() - before;
}

}  // namespace

// Issue 35's rule: a step moves the ids, the rows read and their gradient, never the table.
BOOST_AUTO_TEST_CASE(a_sparse_step_moves_only_the_rows_it_touches) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 512; ++i)
    ids.push_back((i * 7919) % 100000);
  ids.push_back(ids[3]);  // a duplicate: read twice, updated once
  const uint64_t rows_both_ways = ids.size() * 16 * 4 * 2;
  const uint64_t sparse = bytes_of_a_training_step(true, ids);
  BOOST_TEST(sparse >= rows_both_ways);
  BOOST_TEST(sparse <= rows_both_ways * 12 / 10, sparse << " bytes for " << rows_both_ways);
  const uint64_t dense = bytes_of_a_training_step(false, ids);
  BOOST_TEST(dense >= 100000u * 16 * 4, dense << " bytes");  // the whole table's gradient
  BOOST_TEST_MESSAGE("one step moved " << sparse << " bytes sparse, " << dense << " dense; the "
                                       << "rows both ways are " << rows_both_ways);
}

BOOST_AUTO_TEST_CASE(unknown_task_is_an_error) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  testing::check_error(cluster->server("worker", 3).status(), Code::kInvalidArgument,
                       "/job:worker/replica:0/task:3");
}

// The threads of this process named `name` (/proc/self/task/*/comm).
int threads_named(const std::string& name) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  return count;
}

// Simulated tasks are actors, not thread owners: however many tasks a cluster has, their CPU
// kernels share one pool sized to the machine (or to intra_op_threads when set).
BOOST_AUTO_TEST_CASE(tasks_share_one_compute_pool) {
  const int before = threads_named("troupe-cpu");
  auto cluster = value_or_throw(LocalCluster::start(2, 62));
  BOOST_TEST(cluster->compute_threads() == Device::available_cores());
  BOOST_TEST(threads_named("troupe-cpu") - before <= cluster->compute_threads());
  testing::model_parallel_step(value_or_throw(cluster->target("worker", 61)));

  LocalClusterOptions options;
  options.default_session_config.intra_op_threads = 3;
  auto three = value_or_throw(LocalCluster::start(2, 5, options));
  BOOST_TEST(three->compute_threads() == 3);
  Server* server = value_or_throw(three->server("worker", 4));
  BOOST_TEST(server->task_name() == "/job:worker/replica:0/task:4");
  testing::model_parallel_step(value_or_throw(three->target("worker", 4)));
}

// Listening, each task binds port 0 and the cluster learns the port: no port is probed free
// and bound later, where another process (or an earlier task's connection) could take it.
BOOST_AUTO_TEST_CASE(listening_tasks_bind_port_zero_and_the_cluster_learns_their_ports) {
  LocalClusterOptions options;
  options.listen = true;
  auto cluster = value_or_throw(LocalCluster::start(2, 30, options));
  std::set<std::string> addresses;
  for (const auto& [job, tasks] : cluster->cluster().as_map()) {
    for (const auto& [index, address] : tasks) {
      BOOST_TEST(address.rfind("127.0.0.1:", 0) == 0u, address);
      BOOST_TEST(address != "127.0.0.1:0");
      BOOST_TEST(value_or_throw(cluster->server(job, index))->address() == address);
      BOOST_TEST(value_or_throw(cluster->target(job, index)) == "troupe://" + address);
      addresses.insert(address);
    }
  }
  BOOST_TEST(addresses.size() == 32u);
  testing::model_parallel_step(value_or_throw(cluster->target("worker", 29)));
}

// Two clusters in one process with the same task addresses are two clusters: each task finds
// its own cluster's peers (by its group), not the first task registered at that address.
BOOST_AUTO_TEST_CASE(two_clusters_with_the_same_addresses_stay_apart) {
  auto first = value_or_throw(LocalCluster::start(1, 1));
  auto second = value_or_throw(LocalCluster::start(1, 1));
  BOOST_TEST((first->cluster() == second->cluster()));
  auto set_and_read = [](const LocalCluster& cluster, float value, bool assign) {
    Scope root = Scope::new_root();
    Output counter = ops::Variable(root.with_device("/job:ps/task:0").with_op_name("counter"),
                                   PartialShape({}), DataType::kFloat);
    Output assigned = ops::Assign(root.with_device("/job:ps/task:0"), counter, value);
    Output read = ops::Identity(root.with_device("/job:worker/task:0"), counter);
    Session session = value_or_throw(Session::create(value_or_throw(cluster.target("worker", 0))));
    if (assign) throw_if_error(session.run_targets({assigned.op()}));
    return value_or_throw(session.run(read)).scalar<float>();
  };
  BOOST_TEST(set_and_read(*first, 1.0f, true) == 1.0f);
  BOOST_TEST(set_and_read(*second, 2.0f, true) == 2.0f);
  BOOST_TEST(set_and_read(*first, 0.0f, false) == 1.0f);
}

// A stopped task's names leave the process's registry, and only its names.
BOOST_AUTO_TEST_CASE(a_stopped_task_leaves_the_registry_and_only_it) {
  auto cluster = value_or_throw(LocalCluster::start(1, 2));
  Server* gone = value_or_throw(cluster->server("worker", 1));
  Server* kept = value_or_throw(cluster->server("worker", 0));
  std::string gone_target = gone->target();
  gone->stop();
  BOOST_TEST(!find_local_task(gone_target).has_value());
  BOOST_TEST(!find_local_task(gone->address()).has_value());
  BOOST_TEST(find_local_task(kept->target()).has_value());
  BOOST_TEST(find_local_task(kept->address()).has_value());
}

// Every task of a free-port cluster has a port of its own, at the host asked for.
BOOST_AUTO_TEST_CASE(free_port_clusters_have_distinct_ports_and_check_their_counts) {
  auto spec = free_port_cluster({{"ps", 2}, {"worker", 3}, {"evaluator", 0}}, "node-a.test");
  BOOST_TEST_REQUIRE(spec.ok(), spec.status().to_string());
  BOOST_TEST(spec->jobs() == (std::vector<std::string>{"ps", "worker"}));
  std::set<std::string> addresses;
  for (const std::string& job : spec->jobs()) {
    for (int index : spec->task_indices(job).value()) {
      std::string address = spec->task_address(job, index).value();
      BOOST_TEST(address.rfind("node-a.test:", 0) == 0u, address);
      addresses.insert(address);
    }
  }
  BOOST_TEST(addresses.size() == 5u);
  testing::check_error(free_port_cluster({{"worker", -1}}).status(), Code::kInvalidArgument,
                       "job 'worker' has -1 tasks");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
