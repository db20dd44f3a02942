// End-to-end tests of the in-process runtime: client Session -> master session actor ->
// device actor, on a local server.
#include <thread>

#include <boost/test/unit_test.hpp>

#include "free_ports.hpp"
#include "status_checks.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
using testing::check_error;
using testing::status_of;

BOOST_AUTO_TEST_SUITE(session)

BOOST_AUTO_TEST_CASE(hello_through_a_local_server) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto hello = ops::Const(root, "Hello, distributed troupe!");
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_TEST(value_or_throw(session.run(hello)).scalar<std::string>() ==
             "Hello, distributed troupe!");
}

BOOST_AUTO_TEST_CASE(matmul_through_a_local_server) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto product =
      ops::MatMul(root, ops::Const(root, {{2.f, 1.f}}), ops::Const(root, {{1.f}, {2.f}}));
  Session session = value_or_throw(Session::create(server->target()));
  Tensor result = value_or_throw(session.run(product));
  BOOST_TEST(result.shape().to_string() == "[1,1]");
  BOOST_TEST(result.scalar<float>() == 4.f);
}

BOOST_AUTO_TEST_CASE(run_by_name_with_feeds) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat, PartialShape({-1}));
  auto y = ops::Mul(root.with_op_name("y"), x, 3.f);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_REQUIRE(session.extend(root.to_graph_def()).ok());
  std::vector<Tensor> out;
  BOOST_REQUIRE(session.run({{"x:0", Tensor::from_vector<float>({1, 2})}}, {"y:0"}, {}, &out).ok());
  BOOST_TEST(out.at(0).to_vector<float>() == (std::vector<float>{3, 6}));
  (void)y;
}

BOOST_AUTO_TEST_CASE(the_graph_grows_between_runs) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto a = ops::Const(root, 2.f);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_TEST(value_or_throw(session.run(a)).scalar<float>() == 2.f);
  auto b = ops::Square(root, a);
  BOOST_TEST(value_or_throw(session.run(b)).scalar<float>() == 4.f);
}

BOOST_AUTO_TEST_CASE(several_sessions_work_at_once) {
  auto server = value_or_throw(Server::create_local_server());
  constexpr int kThreads = 4;
  constexpr int kRuns = 20;
  std::vector<std::thread> threads;
  std::atomic<int> correct{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Scope root = Scope::new_root();
      auto x = ops::Placeholder(root, DataType::kInt32);
      auto y = ops::Add(root, x, t * 1000);
      Session session = value_or_throw(Session::create(server->target()));
      for (int i = 0; i < kRuns; ++i) {
        Tensor out = value_or_throw(session.run({{x, Tensor(i)}}, {y})).at(0);
        if (out.scalar<int32_t>() == t * 1000 + i) ++correct;
      }
    });
  }
  for (auto& th : threads)
    th.join();
  BOOST_TEST(correct.load() == kThreads * kRuns);
}

BOOST_AUTO_TEST_CASE(one_session_many_threads) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kInt64);
  auto y = ops::Mul(root, x, int64_t{2});
  Session session = value_or_throw(Session::create(server->target()));
  std::vector<std::thread> threads;
  std::atomic<int> correct{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        int64_t v = t * 100 + i;
        if (value_or_throw(session.run({{x, Tensor(v)}}, {y})).at(0).scalar<int64_t>() == 2 * v)
          ++correct;
      }
    });
  }
  for (auto& th : threads)
    th.join();
  BOOST_TEST(correct.load() == 100);
}

BOOST_AUTO_TEST_CASE(uninitialized_variable_is_failed_precondition) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto v = ops::Variable(root.with_op_name("weights"), TensorShape{2}, DataType::kFloat);
  auto read = ops::Identity(root, v);
  Session session = value_or_throw(Session::create(server->target()));
  check_error(session.run(read).status(), Code::kFailedPrecondition,
              "uninitialized value 'weights'");
  auto init = ops::Assign(root, v, Tensor::from_vector<float>({1, 2}));
  throw_if_error(session.run_targets({init.op()}));
  BOOST_TEST(value_or_throw(session.run(read)).to_vector<float>() == (std::vector<float>{1, 2}));
}

BOOST_AUTO_TEST_CASE(variables_are_shared_unless_sessions_are_isolated) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto v = ops::Variable(root.with_op_name("counter"), TensorShape{}, DataType::kInt32);
  auto init = ops::Assign(root, v, 7);
  auto read = ops::Identity(root, v);
  Session writer = value_or_throw(Session::create(server->target()));
  throw_if_error(writer.run_targets({init.op()}));
  Session shared = value_or_throw(Session::create(server->target()));
  BOOST_TEST(value_or_throw(shared.run(read)).scalar<int32_t>() == 7);

  SessionConfig isolated_config;
  isolated_config.isolate_session_state = true;
  Session isolated = value_or_throw(Session::create(server->target(), isolated_config));
  check_error(isolated.run(read).status(), Code::kFailedPrecondition,
              "uninitialized value 'counter'");
}

BOOST_AUTO_TEST_CASE(graph_errors_name_the_node_before_anything_runs) {
  auto server = value_or_throw(Server::create_local_server());
  Session session = value_or_throw(Session::create(server->target()));
  GraphDef unknown_op;
  unknown_op.nodes.push_back(NodeDef{"mystery", "NoSuchOp", {}, "", {}});
  check_error(session.extend(unknown_op), Code::kInvalidArgument, "mystery");

  GraphDef missing_input;
  missing_input.nodes.push_back(NodeDef{"neg", "Neg", {"ghost:0"}, "", {{"T", DataType::kFloat}}});
  check_error(session.extend(missing_input), Code::kInvalidArgument, "ghost");

  GraphDef reserved;
  reserved.nodes.push_back(NodeDef{"_sneaky", "NoOp", {}, "", {}});
  check_error(session.extend(reserved), Code::kInvalidArgument, "reserved");
}

BOOST_AUTO_TEST_CASE(bad_feeds_and_fetches) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat, PartialShape({2}));
  auto y = ops::Neg(root.with_op_name("y"), x);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_REQUIRE(session.extend(root.to_graph_def()).ok());
  std::vector<Tensor> out;
  check_error(session.run({}, {"nothing:0"}, {}, &out), Code::kNotFound, "nothing");
  check_error(session.run({{"x:0", Tensor(1)}}, {"y:0"}, {}, &out), Code::kInvalidArgument,
              "feed 'x:0' is int32");
  check_error(session.run({{"x:0", Tensor::from_vector<float>({1, 2, 3})}}, {"y:0"}, {}, &out),
              Code::kInvalidArgument, "shape [3]");
  check_error(session.run({}, {"y:0"}, {}, &out), Code::kInvalidArgument,
              "must feed a value for placeholder tensor 'x'");
  (void)y;
}

BOOST_AUTO_TEST_CASE(a_step_past_its_timeout_is_deadline_exceeded) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto big = ops::Const(root, 1.f, TensorShape{1024, 1024});
  auto product = ops::MatMul(root, ops::MatMul(root, big, big), big);
  auto total = ops::Sum(root, product, {0, 1});
  auto cheap = ops::Const(root, 1.f);
  Session session = value_or_throw(Session::create(server->target()));
  // The graph goes to the server first: the deadline covers sending new nodes too, and 1 ms
  // is not enough for those 4 MiB on a busy machine.
  value_or_throw(session.run(cheap));
  RunOptions options;
  options.timeout_ms = 1;
  check_error(session.run({}, {total}, {}, options).status(), Code::kDeadlineExceeded,
              "did not finish within 1 ms");
}

BOOST_AUTO_TEST_CASE(a_closed_session_refuses_work) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto c = ops::Const(root, 1);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_REQUIRE(session.close().ok());
  BOOST_REQUIRE(session.close().ok());
  check_error(session.run(c).status(), Code::kFailedPrecondition, "closed");
}

BOOST_AUTO_TEST_CASE(a_stopped_server_fails_its_sessions) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto c = ops::Const(root, 1);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_TEST(value_or_throw(session.run(c)).scalar<int32_t>() == 1);
  server->stop();
  server->join();
  Status status = session.run(c).status();
  BOOST_TEST((status.code() == Code::kUnavailable || status.code() == Code::kCancelled),
             status.to_string());
}

BOOST_AUTO_TEST_CASE(an_unknown_target_is_not_found) {
  check_error(Session::create("inproc://999999").status(), Code::kNotFound, "inproc://999999");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe

namespace troupe {

BOOST_AUTO_TEST_SUITE(session_blocking_steps)

BOOST_AUTO_TEST_CASE(close_from_another_thread_cancels_a_blocked_step) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root.with_op_name("inbox"), {DataType::kFloat});
  auto item = ops::QueueDequeue(root, queue, {DataType::kFloat});
  Session session = value_or_throw(Session::create(server->target()));
  Status blocked;
  std::thread runner([&] { blocked = session.run(item[0]).status(); });
  // Not a condition: a pause for the dequeue to start waiting (nothing reports it). Were
  // close() first, the step would fail with FailedPrecondition and the test would say so.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  BOOST_REQUIRE(session.close().ok());
  runner.join();
  testing::check_error(blocked, Code::kCancelled, "the session was closed");
}

BOOST_AUTO_TEST_CASE(cancel_step_cancels_that_step_and_keeps_the_session) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root, {DataType::kInt32});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt32});
  auto put = ops::QueueEnqueue(root, queue, {9});
  Session session = value_or_throw(Session::create(server->target()));
  RunOptions tagged;
  tagged.step_tag = 17;
  Status blocked;
  std::thread runner([&] { blocked = session.run({}, {item[0]}, {}, tagged).status(); });
  // Cancel until the step has reached the server and been cancelled (0 until then).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int cancelled = 0;
  while (cancelled == 0 && std::chrono::steady_clock::now() < deadline) {
    BOOST_REQUIRE_EQUAL(value_or_throw(session.cancel_step(99)), 0);  // another tag: none
    cancelled = value_or_throw(session.cancel_step(17));
    if (cancelled == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  runner.join();
  BOOST_TEST(cancelled == 1);
  testing::check_error(blocked, Code::kCancelled, "cancelled by its client");
  // The session still works, and the cancelled dequeue took nothing.
  throw_if_error(session.run_targets({put}));
  BOOST_TEST(value_or_throw(session.run(item[0])).scalar<int32_t>() == 9);
}

BOOST_AUTO_TEST_CASE(a_blocked_step_times_out) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root, {DataType::kInt32});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt32});
  auto put = ops::QueueEnqueue(root, queue, {5});
  Session session = value_or_throw(Session::create(server->target()));
  RunOptions options;
  options.timeout_ms = 100;
  testing::check_error(session.run({}, {item[0]}, {}, options).status(), Code::kDeadlineExceeded,
                       "within 100 ms");
  // The timed-out step left nothing behind: the next element goes to the next dequeue.
  throw_if_error(session.run_targets({put}));
  BOOST_TEST(value_or_throw(session.run(item[0])).scalar<int32_t>() == 5);
}

BOOST_AUTO_TEST_CASE(a_session_default_timeout_applies) {
  SessionConfig config;
  config.operation_timeout_ms = 50;
  auto server = value_or_throw(Server::create_local_server(config));
  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root, {DataType::kInt32});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt32});
  Session session = value_or_throw(Session::create(server->target()));
  testing::check_error(session.run(item[0]).status(), Code::kDeadlineExceeded, "within 50 ms");
}

BOOST_AUTO_TEST_CASE(a_dequeue_that_timed_out_takes_nothing_later) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto queue = ops::FIFOQueue(root, {DataType::kInt64});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt64});
  auto value = ops::Placeholder(root, DataType::kInt64);
  auto put = ops::QueueEnqueue(root, queue, {value});
  Session session = value_or_throw(Session::create(server->target()));
  RunOptions short_wait;
  short_wait.timeout_ms = 50;
  testing::check_error(session.run({}, {item[0]}, {}, short_wait).status(), Code::kDeadlineExceeded,
                       "within 50 ms");
  value_or_throw(session.run(FeedDict{{value, Tensor(int64_t{7})}}, {}, {put}));
  RunOptions bounded;
  bounded.timeout_ms = 5000;
  BOOST_TEST(value_or_throw(session.run({}, {item[0]}, {}, bounded)).at(0).scalar<int64_t>() == 7);
}

BOOST_AUTO_TEST_CASE(a_producer_session_wakes_a_consumer_session) {
  auto server = value_or_throw(Server::create_local_server());
  Scope root = Scope::new_root();
  auto queue =
      ops::FIFOQueue(root.with_op_name("work"), {DataType::kInt64}, {.shared_name = "work"});
  auto item = ops::QueueDequeue(root, queue, {DataType::kInt64});
  auto value = ops::Placeholder(root, DataType::kInt64);
  auto put = ops::QueueEnqueue(root, queue, {value});
  Session consumer = value_or_throw(Session::create(server->target()));
  Session producer = value_or_throw(Session::create(server->target()));
  int64_t received = 0;
  std::thread waiter([&] { received = value_or_throw(consumer.run(item[0])).scalar<int64_t>(); });
  // Not a condition: a pause so that the consumer usually blocks first, the case under test;
  // the result is the same in either order.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  value_or_throw(producer.run(FeedDict{{value, Tensor(int64_t{99})}}, {}, {put}));
  waiter.join();
  BOOST_TEST(received == 99);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe

namespace troupe {

namespace {

// A worker server whose cluster lists a ps that nothing serves, and a node on that ps.
struct WorkerWithAbsentPs {
  explicit WorkerWithAbsentPs(std::chrono::milliseconds connect_timeout) {
    auto cluster =
        value_or_throw(ClusterSpec::create({{"worker", {"127.0.0.1:0"}}, {"ps", {nobody}}}));
    ServerOptions options;
    options.peers.connect_timeout = connect_timeout;
    server = value_or_throw(
        Server::create(value_or_throw(ServerDef::create(cluster, "worker", 0)), options));
    on_ps = ops::Neg(root.with_device("/job:ps/task:0"), 3);
  }

  testing::ClosedAddress closed;  // before the server binds its own ports
  std::string nobody = closed.address();
  std::unique_ptr<Server> server;
  Scope root = Scope::new_root();
  Output on_ps;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(session_targets)

BOOST_AUTO_TEST_CASE(a_target_that_is_not_a_server_address) {
  testing::check_error(Session::create("http://localhost:80").status(), Code::kInvalidArgument,
                       "expected 'troupe://host:port'");
  testing::check_error(Session::create("troupe://localhost").status(), Code::kInvalidArgument,
                       "port");
}

BOOST_AUTO_TEST_CASE(a_target_nobody_listens_on_is_unavailable) {
  int port = value_or_throw(pick_free_port());
  testing::check_error(Session::create("troupe://127.0.0.1:" + std::to_string(port)).status(),
                       Code::kUnavailable, "cannot reach the server at troupe://127.0.0.1:");
}

BOOST_AUTO_TEST_CASE(a_task_that_never_comes_up_is_unavailable_after_the_connect_timeout) {
  WorkerWithAbsentPs setup(std::chrono::milliseconds(500));
  Session session = value_or_throw(Session::create(setup.server->target()));
  testing::check_error(session.run(setup.on_ps).status(), Code::kUnavailable,
                       "/job:ps/replica:0/task:0 at " + setup.nobody + " is unreachable");
}

// A step's deadline starts when run() is called and covers reaching the tasks it needs: a ps
// that never comes up fails the step at its deadline (not at the 60 s connect timeout),
// naming the ps and its address, whether the deadline comes from RunOptions or from the
// session's config.
BOOST_AUTO_TEST_CASE(a_step_deadline_covers_connecting_to_its_tasks) {
  using Clock = std::chrono::steady_clock;
  WorkerWithAbsentPs setup(PeerOptions{}.connect_timeout);  // the default: 60 s
  const auto& [closed, nobody, server, root, c] = setup;
  constexpr int64_t kTimeoutMs = 1000;
  auto elapsed_ms = [](Clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
  };
  const std::string waiting_for = "connecting to /job:ps/replica:0/task:0 at " + nobody;

  Session session = value_or_throw(Session::create(server->target()));
  RunOptions bounded;
  bounded.timeout_ms = kTimeoutMs;
  for (int step = 0; step < 2; ++step) {
    auto start = Clock::now();
    Status status = session.run({}, {c}, {}, bounded).status();
    testing::check_error(status, Code::kDeadlineExceeded, waiting_for);
    // Far below the 60 s connect timeout; generous above the deadline, for a loaded machine.
    BOOST_TEST(elapsed_ms(start) < 10 * kTimeoutMs, "step " << step);
  }

  SessionConfig config;
  config.operation_timeout_ms = kTimeoutMs;
  Session with_default = value_or_throw(Session::create(server->target(), config));
  for (int step = 0; step < 2; ++step) {
    auto start = Clock::now();
    Status status = with_default.run(c).status();
    testing::check_error(status, Code::kDeadlineExceeded, waiting_for);
    BOOST_TEST(elapsed_ms(start) < 10 * kTimeoutMs, "step " << step);
  }
}

// Once a task was found unreachable (after the connect timeout), later steps that need it
// fail fast instead of waiting out the connect timeout again.
BOOST_AUTO_TEST_CASE(a_task_never_reached_fails_later_steps_fast) {
  using Clock = std::chrono::steady_clock;
  // A connect timeout well above what a fast failure may take on a loaded machine.
  WorkerWithAbsentPs setup(std::chrono::milliseconds(5000));
  const auto& [closed, nobody, server, root, c] = setup;
  Session session = value_or_throw(Session::create(server->target()));
  const std::string unreachable = "/job:ps/replica:0/task:0 at " + nobody + " is unreachable";
  testing::check_error(session.run(c).status(), Code::kUnavailable, unreachable);
  for (int step = 0; step < 3; ++step) {
    auto start = Clock::now();
    testing::check_error(session.run(c).status(), Code::kUnavailable, unreachable);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    BOOST_TEST(ms < 2500, "step " << step << " took " << ms << " ms");
  }
}

BOOST_AUTO_TEST_CASE(a_server_def_with_an_unknown_protocol_is_refused) {
  ServerDef def = ServerDef::local();
  def.protocol = "carrier-pigeon";  // built field by field, past ServerDef::create
  testing::check_error(Server::create(def).status(), Code::kInvalidArgument,
                       "unknown protocol 'carrier-pigeon'");
  def.protocol = "grpc";  // TensorFlow's default: the same transport
  BOOST_TEST(Server::create(def).ok());
}

BOOST_AUTO_TEST_CASE(bad_peer_options_are_refused) {
  ServerOptions options;
  options.peers.heartbeat_timeout = std::chrono::milliseconds(-1);
  testing::check_error(Server::create(ServerDef::local(), options).status(), Code::kInvalidArgument,
                       "heartbeat_timeout is -1 ms");
  options.peers.heartbeat_timeout = std::chrono::milliseconds(100);
  options.peers.heartbeat_interval = std::chrono::milliseconds(0);
  testing::check_error(Server::create(ServerDef::local(), options).status(), Code::kInvalidArgument,
                       "heartbeat_interval is 0 ms");

  RuntimeOptions runtime;
  runtime.client_heartbeat_timeout = std::chrono::milliseconds(-1);
  testing::check_error(runtime.validate(), Code::kInvalidArgument,
                       "client_heartbeat_timeout -1 ms: expected a timeout >= 0");
  runtime.client_heartbeat_timeout = std::chrono::milliseconds(100);
  runtime.client_heartbeat_interval = std::chrono::milliseconds(0);
  testing::check_error(runtime.validate(), Code::kInvalidArgument, "an interval >= 1 ms");
  runtime.admission.max_pending_per_peer = 0;
  runtime.client_heartbeat_interval = std::chrono::milliseconds(10);
  testing::check_error(runtime.validate(), Code::kInvalidArgument,
                       "admission: max_pending_per_peer is 0: expected at least 1");
}

BOOST_AUTO_TEST_CASE(a_listening_server_is_reached_by_address_in_process) {
  auto cluster = value_or_throw(ClusterSpec::create({{"worker", {"127.0.0.1:0"}}}));
  auto server =
      value_or_throw(Server::create(value_or_throw(ServerDef::create(cluster, "worker", 0))));
  BOOST_TEST(server->target().starts_with("troupe://127.0.0.1:"));
  BOOST_TEST(server->address() != "127.0.0.1:0");
  Scope root = Scope::new_root();
  auto c = ops::Neg(root, 3);
  Session session = value_or_throw(Session::create(server->target()));
  BOOST_TEST(value_or_throw(session.run(c)).scalar<int32_t>() == -3);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
