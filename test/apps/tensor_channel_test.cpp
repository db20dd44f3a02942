// The tensor channel between processes: a `troupe node` and this process exchange large
// tensors on it in both directions (values checked), small ones in batches or, alone, as actor
// messages, steps reach the node as calls on it, and a server started without it still moves
// the same tensors.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "apps/child_process.hpp"
#include "free_ports.hpp"
#include "status_checks.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"
#include "troupe/actors/transport/tensor_channel.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "wait_until.hpp"

namespace troupe {
namespace {

// The node's flags: its cluster, its channel settings, and TLS credentials or --insecure.
std::vector<std::string> node_command(const std::string& ps, const std::string& worker,
                                      bool channel, bool shared_memory, const TlsOptions& tls,
                                      const std::vector<std::string>& extra) {
  std::vector<std::string> command{
      TROUPE_CLI,
      "node",
      "--ps_hosts=" + ps,
      "--worker_hosts=" + worker,
      "--job_name=ps",
      channel ? "--tensor_channel=true" : "--tensor_channel=false",
      shared_memory ? "--shared_memory=true" : "--shared_memory=false"};
  if (tls.enabled()) {
    command.push_back("--tls_cert=" + tls.certificate_file);
    command.push_back("--tls_key=" + tls.key_file);
    command.push_back("--tls_ca=" + tls.ca_file);
  } else {
    command.push_back("--insecure");
  }
  command.insert(command.end(), extra.begin(), extra.end());
  return command;
}

struct NodeAndWorker {
  std::string ps = testing::free_address();
  std::string worker = testing::free_address();
  std::shared_ptr<Runtime> runtime;  // this process's: with TLS, the worker's credentials
  testing::ChildProcess node;
  std::unique_ptr<Server> server;

  // `channel`: this process's server has one; `node_channel`: the node's --tensor_channel;
  // `shared_memory`: both sides' --shared_memory. With `credentials` (a CA "ca" made), both
  // processes use TLS with certificates of that CA.
  explicit NodeAndWorker(bool channel, bool node_channel = true, bool shared_memory = true,
                         testing::TlsCredentials* credentials = nullptr,
                         const std::vector<std::string>& node_flags = {},
                         ServerOptions options = {})
      : runtime(credentials == nullptr
                    ? value_or_throw(Runtime::shared_default())
                    : value_or_throw(Runtime::create(
                          RuntimeOptions{.tls = credentials->make_certificate("worker", "ca")}))),
        node(node_command(
            ps, worker, node_channel, shared_memory,
            credentials == nullptr ? TlsOptions{} : credentials->make_certificate("ps", "ca"),
            node_flags)) {
    BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", 20000), node.output());
    options.tensor_channel = channel;
    options.shared_memory = shared_memory;
    options.runtime = runtime;
    auto spec = value_or_throw(ClusterSpec::create({{"ps", {ps}}, {"worker", {worker}}}));
    server = value_or_throw(
        Server::create(value_or_throw(ServerDef::create(spec, "worker", 0)), options));
  }

  std::unique_ptr<Session> session() {
    return std::make_unique<Session>(
        value_or_throw(Session::create(server->target(), std::nullopt, runtime)));
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
  auto x = ops::Identity(
      worker, value_or_throw(Tensor::from_vector<float>(values, TensorShape{300, 1000})));
  auto doubled = ops::Mul(ps, x, 2.0f);
  auto total = ops::Sum(worker, doubled, Tensor::from_vector<int32_t>({0, 1}));
  auto small = ops::Add(ps, ops::Identity(worker, 1.0f), 1.0f);
  auto result = value_or_throw(session.run({total, ops::Identity(worker, doubled), small}));
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
  round_trip(*cluster.session());
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
  Session session = value_or_throw(Session::create(cluster.server->target()));
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
    testing::wait_until([&] { return channel->counters().frames_sent >= n; },
                        std::chrono::seconds(5));
    return channel->counters().frames_sent == n;
  };
  BOOST_TEST(value_or_throw(session.run(total)).scalar<float>() == 1024.0f * (39 * 40 / 2));
  BOOST_TEST(frames_sent_reach(40));
  BOOST_TEST(value_or_throw(session.run(scalar)).scalar<float>() == 6.0f);
  BOOST_TEST(frames_sent_reach(41));
  BOOST_TEST(channel->counters().fallbacks == 0u);
}

// The master session here sends the node its part of each step as a call on the channel; the
// answers, and the errors, come back on it.
void check_steps_reach_the_node_as_calls_on_the_channel(NodeAndWorker& cluster) {
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  auto owned_session = cluster.session();
  Session& session = *owned_session;
  Scope ps = Scope::new_root().with_device("/job:ps/task:0");
  auto counter = ops::Variable(ps.with_op_name("counter"), PartialShape({}), DataType::kFloat);
  auto never_set = ops::Variable(ps.with_op_name("never_set"), PartialShape({}), DataType::kFloat);
  auto add = ops::AssignAdd(ps, counter, 1.0f);
  throw_if_error(session.run_targets({ops::Assign(ps, counter, 0.0f).op()}));
  // The first steps go as actor messages while the channel connects (longer on a busy machine).
  int steps = 0;
  testing::wait_until([&] {
    ++steps;
    BOOST_REQUIRE(value_or_throw(session.run(add)).scalar<float>() == static_cast<float>(steps));
    return channel->counters().calls_sent > 0;
  });
  BOOST_REQUIRE(channel->counters().calls_sent > 0u);
  // Once it is connected, and with no tensor on the connection, every step is a call.
  uint64_t sent = channel->counters().calls_sent;
  for (int i = 1; i <= 20; ++i)
    BOOST_TEST(value_or_throw(session.run(add)).scalar<float>() == static_cast<float>(steps + i));
  BOOST_TEST(channel->counters().calls_sent == sent + 20);
  BOOST_TEST(channel->counters().calls_answered == channel->counters().calls_sent);
  sent = channel->counters().calls_sent;
  Status failed = session.run(ops::Identity(ps, never_set)).status();
  testing::check_error(failed, Code::kFailedPrecondition, "never_set");
  BOOST_TEST(channel->counters().calls_sent == sent + 1);
}

BOOST_AUTO_TEST_CASE(steps_reach_the_node_as_calls_on_the_channel) {
  NodeAndWorker cluster(true);
  check_steps_reach_the_node_as_calls_on_the_channel(cluster);
}

// The path users run: a TLS cluster of processes. Its tensors and calls take the channel,
// sealed, and large tensors between its processes on this host the shared-memory ring.
BOOST_AUTO_TEST_CASE(in_a_tls_cluster_tensors_and_calls_take_the_sealed_channel_and_the_ring) {
  testing::TlsCredentials credentials;
  credentials.make_ca("ca");
  NodeAndWorker cluster(true, true, true, &credentials);
  const TensorChannel::Counters& counters = round_trip_on_the_channel(cluster);
  BOOST_TEST(counters.sealed_connections >= 2u);  // this process to the node, and back
  BOOST_TEST(counters.shared_memory_frames >= 1u);
  BOOST_TEST(counters.handshakes_refused == 0u);
  check_steps_reach_the_node_as_calls_on_the_channel(cluster);
}

BOOST_AUTO_TEST_CASE(in_a_tls_cluster_without_shared_memory_tensors_go_sealed_on_the_socket) {
  testing::TlsCredentials credentials;
  credentials.make_ca("ca");
  NodeAndWorker cluster(true, true, false, &credentials);
  const TensorChannel::Counters& counters = round_trip_on_the_channel(cluster);
  BOOST_TEST(counters.sealed_connections >= 2u);
  BOOST_TEST(counters.shared_memory_frames == 0u);
}

// --channel_port and ServerOptions::channel_port fix the ports the channels listen on.
BOOST_AUTO_TEST_CASE(the_channel_listens_on_the_port_it_is_given) {
  uint16_t node_port = static_cast<uint16_t>(value_or_throw(pick_free_port()));
  uint16_t worker_port = static_cast<uint16_t>(value_or_throw(pick_free_port()));
  ServerOptions options;
  options.channel_port = worker_port;
  NodeAndWorker cluster(true, true, true, nullptr, {fmt::format("--channel_port={}", node_port)},
                        options);
  BOOST_TEST(cluster.server->tensor_channel()->address() ==
             fmt::format("127.0.0.1:{}", worker_port));
  round_trip_on_the_channel(cluster);  // to the node's channel, at the port it announced
  int fd = tcp_connect("127.0.0.1", node_port, std::chrono::seconds(5));
  BOOST_TEST(fd >= 0, "nothing listens on the node's --channel_port " << node_port);
  if (fd >= 0) ::close(fd);
}

BOOST_AUTO_TEST_CASE(a_channel_port_that_is_taken_is_an_error_naming_it) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  BOOST_REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&address), length) == 0);
  BOOST_REQUIRE(::listen(holder, 1) == 0);
  BOOST_REQUIRE(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ServerOptions options;
  options.channel_port = ntohs(address.sin_port);
  auto spec = testing::free_port_cluster({{"worker", 1}});
  auto server = Server::create(value_or_throw(ServerDef::create(spec, "worker", 0)), options);
  ::close(holder);
  BOOST_REQUIRE(!server.ok());
  testing::check_error(server.status(), Code::kUnavailable,
                       fmt::format("tensor channel: cannot listen on 127.0.0.1 port {}: Address "
                                   "already in use",
                                   options.channel_port));
}

BOOST_AUTO_TEST_CASE(a_server_without_the_channel_moves_the_same_tensors) {
  NodeAndWorker cluster(false);
  BOOST_TEST(cluster.server->tensor_channel() == nullptr);
  round_trip(*cluster.session());
}

// The node says it has no channel: this process sends and receives actor messages only.
BOOST_AUTO_TEST_CASE(a_node_started_without_the_channel_gets_actor_messages) {
  NodeAndWorker cluster(true, /*node_channel=*/false);
  round_trip(*cluster.session());
  const TensorChannel* channel = cluster.server->tensor_channel();
  BOOST_REQUIRE(channel != nullptr);
  BOOST_TEST(channel->counters().frames_sent == 0u);
  BOOST_TEST(channel->counters().frames_received == 0u);
  BOOST_TEST(channel->counters().fallbacks == 0u);
  BOOST_TEST(channel->counters().calls_sent == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
