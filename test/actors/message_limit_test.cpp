// The size limit on one tensor in a message between processes (RuntimeOptions::
// max_message_bytes): senders refuse what the other side would drop, with InvalidArgument
// naming the tensor, and a receiver with a smaller limit drops it without being held up.
#include "status_checks.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

constexpr uint64_t kLimit = 64 << 10;

std::shared_ptr<Runtime> runtime_with_limit(uint64_t limit) {
  RuntimeOptions options;
  options.max_message_bytes = limit;
  return value_or_throw(Runtime::create(options));
}

// A server whose runtime allows `limit` bytes, reached over loopback from other runtimes.
std::unique_ptr<Server> server_with_limit(uint64_t limit) {
  ServerOptions options;
  options.runtime = runtime_with_limit(limit);
  return value_or_throw(Server::create(ServerDef::local(), options));
}

Tensor floats(int64_t n) {
  Tensor t(DataType::kFloat, TensorShape{n});
  for (int64_t i = 0; i < n; ++i)
    t.data<float>()[i] = static_cast<float>(i);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(message_limit)

BOOST_AUTO_TEST_CASE(the_limit_is_checked) {
  RuntimeOptions options;
  options.max_message_bytes = 100;
  testing::check_error(options.validate(), Code::kInvalidArgument, "max_message_bytes=100");
  options.max_message_bytes = uint64_t{3} << 30;
  testing::check_error(options.validate(), Code::kInvalidArgument, "expected 4096 ..");
  testing::check_error(Runtime::create(options).status(), Code::kInvalidArgument,
                       "max_message_bytes");
}

BOOST_AUTO_TEST_CASE(senders_refuse_tensors_over_the_limit) {
  auto server = server_with_limit(kLimit);
  auto client = runtime_with_limit(kLimit);
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat, PartialShape({-1}));
  auto total = ops::Sum(root, x, {0});
  auto big = ops::Fill(root.with_op_name("big"), {1 << 16}, 1.5f);
  auto big_sum = ops::Sum(root, big, {0});
  Session session = value_or_throw(Session::create(server->target(), std::nullopt, client));

  // A feed over the limit never leaves the client.
  testing::check_error(session.run({{x, floats(1 << 16)}}, {total}).status(),
                       Code::kInvalidArgument,
                       "feed 'x:0' ([65536], 262144 bytes) is over the limit of 65536");
  // A fetch over the limit is refused by the master, which would send it.
  testing::check_error(session.run(big).status(), Code::kInvalidArgument, "fetch 'big:0'");
  // What fits goes through, also after those.
  BOOST_TEST(value_or_throw(session.run({{x, floats(1000)}}, {total})).at(0).scalar<float>() ==
             499500.f);
  BOOST_TEST(value_or_throw(session.run(big_sum)).scalar<float>() == 98304.f);
}

BOOST_AUTO_TEST_CASE(a_tensor_between_tasks_over_the_limit_fails_the_step) {
  ClusterSpec cluster = value_or_throw(make_ps_worker_cluster(1, 1, true));
  std::vector<std::unique_ptr<Server>> servers;
  for (const std::string job : {"ps", "worker"}) {
    ServerOptions options;
    options.runtime = runtime_with_limit(kLimit);
    servers.push_back(value_or_throw(
        Server::create(value_or_throw(ServerDef::create(cluster, job, 0)), options)));
  }
  Scope root = Scope::new_root();
  auto on_ps =
      ops::Fill(root.with_device("/job:ps/task:0").with_op_name("made_on_ps"), {1 << 16}, 1.f);
  auto on_worker = ops::Sum(root.with_device("/job:worker/task:0"), on_ps, {0});
  Session session = value_or_throw(Session::create(servers[1]->target()));
  Status status = session.run(on_worker).status();
  testing::check_error(status, Code::kInvalidArgument, "over the limit of 65536 bytes");
  testing::check_error(status, Code::kInvalidArgument, "the tensor sent as '/job:ps/");
  testing::check_error(status, Code::kInvalidArgument, "made_on_ps:0' ([65536], 262144 bytes)");
}

// A traced step's statistics and partition graph over the limit are left out (saying so on
// stderr), rather than failing a step that was only traced; nothing is held back in one process.
BOOST_AUTO_TEST_CASE(a_traced_steps_statistics_over_the_limit_are_left_out) {
  auto runtime = runtime_with_limit(kLimit);
  caf::actor_system& system = runtime->system();
  caf::node_id elsewhere = caf::make_node_id(4242, caf::node_id::default_data::host_id_type{1});
  auto traced = [] {
    std::vector<DeviceStepStats> stats(2);
    stats[0].device = "/job:worker/replica:0/task:0/device:CPU:0";
    stats[1].device = "/job:ps/replica:0/task:0/device:CPU:0";
    for (int i = 0; i < 2000; ++i) {  // about 200 KB
      NodeExecStats node;
      node.node_name = fmt::format("layer/Add_{}", i);
      node.timeline_label = fmt::format("layer/Add_{} = Add(layer/Add_{}, one)", i, i - 1);
      node.outputs.push_back({0, DataType::kFloat, {128, 10}, 5120, "cpu"});
      stats[0].node_stats.push_back(std::move(node));
    }
    stats[1].node_stats.resize(3);  // small: kept
    return stats;
  };
  GraphDef big, small;
  for (int i = 0; i < 2000; ++i)
    big.nodes.push_back({fmt::format("n{}", i), "NoOp", {}, "", {}});
  small.nodes.push_back({"n", "NoOp", {}, "", {}});

  auto stats = traced();
  std::vector<GraphDef> graphs{big, small};
  drop_oversized_trace(system, elsewhere, stats, graphs);
  BOOST_TEST(stats[0].node_stats.empty());
  BOOST_TEST(stats[0].device == "/job:worker/replica:0/task:0/device:CPU:0");
  BOOST_TEST(stats[1].node_stats.size() == 3u);
  BOOST_TEST(graphs[0].nodes.empty());
  BOOST_TEST(graphs[1].nodes.size() == 1u);

  auto local = traced();
  std::vector<GraphDef> local_graphs{big};
  drop_oversized_trace(system, system.node(), local, local_graphs);
  BOOST_TEST(local[0].node_stats.size() == 2000u);
  BOOST_TEST(local_graphs[0].nodes.size() == 2000u);
}

// A client with a larger limit than the server: the server drops the step request's content
// (and says so on stderr), the client gets InvalidArgument, and the server goes on serving.
BOOST_AUTO_TEST_CASE(a_receiver_drops_what_is_over_its_limit) {
  auto server = server_with_limit(kLimit);
  auto client = runtime_with_limit(uint64_t{1} << 30);
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root.with_op_name("x"), DataType::kFloat, PartialShape({-1}));
  auto total = ops::Sum(root, x, {0});
  Session session = value_or_throw(Session::create(server->target(), std::nullopt, client));
  BOOST_TEST(value_or_throw(session.run({{x, floats(10)}}, {total})).at(0).scalar<float>() == 45.f);
  testing::check_error(session.run({{x, floats(1 << 16)}}, {total}).status(),
                       Code::kInvalidArgument, "the receiver could not decode the message");
  BOOST_TEST(value_or_throw(session.run({{x, floats(10)}}, {total})).at(0).scalar<float>() == 45.f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
