// The tensor channel between processes: a `troupe node` and this process exchange large
// tensors on it in both directions (values checked), small ones in batches or, alone, as actor
// messages, steps reach the node as calls on it, and a server started without it still moves
// the same tensors.
#include <signal.h>

#include <chrono>
#include <thread>

#include "actors/local_cluster.hpp"
#include "actors/session.hpp"
#include "actors/tensor_channel.hpp"
#include "apps/child_process.hpp"
#include "graph/ops/ops.hpp"
#include "status_checks.hpp"

namespace troupe {
namespace {

struct NodeAndWorker {
  std::string ps = fmt::format("127.0.0.1:{}", pick_free_port().value_or_throw());
  std::string worker = fmt::format("127.0.0.1:{}", pick_free_port().value_or_throw());
  testing::ChildProcess node;
  std::unique_ptr<Server> server;

  // `channel`: this process's server has one; `node_channel`: the node's --tensor_channel;
  // `shared_memory`: both sides' --shared_memory.
  explicit NodeAndWorker(bool channel, bool node_channel = true, bool shared_memory = true)
      : node({TROUPE_CLI, "node", "--insecure", "--ps_hosts=" + ps, "--worker_hosts=" + worker,
              "--job_name=ps", node_channel ? "--tensor_channel=true" : "--tensor_channel=false",
              shared_memory ? "--shared_memory=true" : "--shared_memory=false"}) {
    BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", 20000), node.output());
    ServerOptions options;
    options.tensor_channel = channel;
    options.shared_memory = shared_memory;
    auto spec = ClusterSpec::create({{"ps", {ps}}, {"worker", {worker}}}).value_or_throw();
    server = Server::create(ServerDef::create(spec, "worker", 0).value_or_throw(), options)
                 .value_or_throw();
  }
  ~NodeAndWorker() {
    server->stop();
    auto stopped = node.stop(SIGTERM, 10000);
    BOOST_TEST(stopped.exit_code == 0, stopped.out);
  }
};

// x (300x1000 floats, 1.2 MB) made on the worker, doubled on the ps, summed back on the
// worker; and a scalar the other way. Returns (sum, the doubled matrix).
std::vector<Tensor> round_trip(Session& session) {
  Scope root = Scope::new_root();
  Scope worker = root.with_device("/job:worker/task:0"), ps = root.with_device("/job:ps/task:0");
  std::vector<float> values(300 * 1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i % 997);
  auto x = ops::Identity(worker, Tensor::from_vector<float>(values, TensorShape{300, 1000}));
  auto doubled = ops::Mul(ps, x, 2.0f);
  auto total = ops::Sum(worker, doubled, Tensor::from_vector<int32_t>({0, 1}));
  auto small = ops::Add(ps, ops::Identity(worker, 1.0f), 1.0f);
  auto result = session.run({total, ops::Identity(worker, doubled), small});
  double expected = 0;
  for (float v : values)
    expected += 2.0 * v;
  BOOST_TEST(result[0].scalar<float>() == expected, boost::test_tools::tolerance(1e-5));
  const float* d = result[1].data<float>();
  for (size_t i = 0; i < values.size(); i += 997)
    BOOST_TEST(d[i] == 2 * values[i]);
  BOOST_TEST(result[2].scalar<float>() == 2.0f);
  return result;
}

// round_trip through `cluster`, whose server's channel must carry the large tensors both ways
// (worker -> ps: x; ps -> worker: doubled) with no fallback; the channel's counters after it.
const TensorChannel::Counters& round_trip_on_the_channel(NodeAndWorker& cluster) {
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  Session session(cluster.server->target());
  round_trip(session);
  BOOST_TEST(channel->counters().frames_sent >= 1u);
  BOOST_TEST(channel->counters().frames_received >= 1u);
  BOOST_TEST(channel->counters().fallbacks == 0u);
  return channel->counters();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_channel_between_processes)

BOOST_AUTO_TEST_CASE(large_tensors_travel_on_the_channel_both_ways) {
  NodeAndWorker cluster(true);
  // Both processes are on this host: x's bytes went through shared memory.
  BOOST_TEST(round_trip_on_the_channel(cluster).shared_memory_frames >= 1u);
}

BOOST_AUTO_TEST_CASE(without_shared_memory_large_tensors_go_on_the_socket) {
  NodeAndWorker cluster(true, true, /*shared_memory=*/false);
  BOOST_TEST(round_trip_on_the_channel(cluster).shared_memory_frames == 0u);
}

// 40 tensors of 4 KiB for the ps in one step go on the channel in one batch, and a lone scalar
// on its own: with steps as calls on the channel, actor messages would be the slower path.
BOOST_AUTO_TEST_CASE(small_tensors_go_on_the_channel_in_batches_and_alone) {
  NodeAndWorker cluster(true);
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  Session session(cluster.server->target());
  Scope root = Scope::new_root();
  Scope worker = root.with_device("/job:worker/task:0"), ps = root.with_device("/job:ps/task:0");
  std::vector<Input> parts;
  for (int i = 0; i < 40; ++i) {
    parts.push_back(ops::Identity(
        worker, ops::Fill(worker, Tensor::from_vector<int64_t>({1024}), static_cast<float>(i))));
  }
  auto total = ops::Sum(ps, ops::AddN(ps, parts), Tensor::from_vector<int32_t>({0}));
  auto scalar = ops::Mul(ps, ops::Identity(worker, 3.0f), 2.0f);
  // The sender counts a frame once its write returns, which may be after the step ended.
  auto frames_sent_reach = [&](uint64_t n) {
    for (int i = 0; i < 500 && channel->counters().frames_sent < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return channel->counters().frames_sent == n;
  };
  BOOST_TEST(session.run(total).scalar<float>() == 1024.0f * (39 * 40 / 2));
  BOOST_TEST(frames_sent_reach(40));
  BOOST_TEST(session.run(scalar).scalar<float>() == 6.0f);
  BOOST_TEST(frames_sent_reach(41));
  BOOST_TEST(channel->counters().fallbacks == 0u);
}

// The master session here sends the node its part of each step as a call on the channel; the
// answers, and the errors, come back on it.
BOOST_AUTO_TEST_CASE(steps_reach_the_node_as_calls_on_the_channel) {
  NodeAndWorker cluster(true);
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  Session session(cluster.server->target());
  Scope ps = Scope::new_root().with_device("/job:ps/task:0");
  auto counter = ops::Variable(ps.with_op_name("counter"), PartialShape({}), DataType::kFloat);
  auto never_set = ops::Variable(ps.with_op_name("never_set"), PartialShape({}), DataType::kFloat);
  auto add = ops::AssignAdd(ps, counter, 1.0f);
  session.run_targets({ops::Assign(ps, counter, 0.0f).op()});
  // The first steps go as actor messages while the channel connects (longer on a busy machine).
  int steps = 0;
  while (channel->counters().calls_sent == 0 && steps < 1000) {
    ++steps;
    BOOST_REQUIRE(session.run(add).scalar<float>() == static_cast<float>(steps));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  BOOST_REQUIRE(channel->counters().calls_sent > 0u);
  // Once it is connected, and with no tensor on the connection, every step is a call.
  uint64_t sent = channel->counters().calls_sent;
  for (int i = 1; i <= 20; ++i)
    BOOST_TEST(session.run(add).scalar<float>() == static_cast<float>(steps + i));
  BOOST_TEST(channel->counters().calls_sent == sent + 20);
  BOOST_TEST(channel->counters().calls_answered == channel->counters().calls_sent);
  sent = channel->counters().calls_sent;
  Status failed = testing::status_of([&] { session.run(ops::Identity(ps, never_set)); });
  testing::check_error(failed, Code::kFailedPrecondition, "never_set");
  BOOST_TEST(channel->counters().calls_sent == sent + 1);
}

BOOST_AUTO_TEST_CASE(a_server_without_the_channel_moves_the_same_tensors) {
  NodeAndWorker cluster(false);
  BOOST_TEST(cluster.server->tensor_channel() == nullptr);
  Session session(cluster.server->target());
  round_trip(session);
}

// The node says it has no channel: this process sends and receives actor messages only.
BOOST_AUTO_TEST_CASE(a_node_started_without_the_channel_gets_actor_messages) {
  NodeAndWorker cluster(true, /*node_channel=*/false);
  Session session(cluster.server->target());
  round_trip(session);
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  BOOST_TEST(channel->counters().frames_sent == 0u);
  BOOST_TEST(channel->counters().frames_received == 0u);
  BOOST_TEST(channel->counters().fallbacks == 0u);
  BOOST_TEST(channel->counters().calls_sent == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
