// `troupe node` as real processes on loopback: 2 ps + 2 workers configured by the seed's
// flags, by TF_CONFIG and by a cluster file, running the same scenarios as the in-process
// cluster; and every bad input a node can be given.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "apps/child_process.hpp"
#include "cluster_scenarios.hpp"
#include "temp_files.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

using testing::ChildProcess;
using testing::run_process;

constexpr int kStartMs = 20000;

enum class Config { kFlags, kTfConfig, kClusterFile };

// "host:port,host:port" of a dense job.
std::string host_list(const ClusterSpec& spec, const std::string& job) {
  std::string out;
  for (const auto& [index, address] : value_or_throw(spec.tasks(job))) {
    out += (out.empty() ? "" : ",") + address;
  }
  return out;
}

// 2 ps + 2 worker node processes, stopped (SIGTERM) and checked when the fixture ends.
class NodeCluster {
 public:
  explicit NodeCluster(Config config) {
    spec_ = value_or_throw(make_ps_worker_cluster(2, 2, /*free_ports=*/true));
    if (config == Config::kClusterFile) {
      cluster_file_ = dir_.file("cluster.json");
      testing::write_file(cluster_file_, spec_.to_json());
    }
    for (const std::string job : {"ps", "worker"}) {
      for (int index = 0; index < 2; ++index) {
        std::vector<std::string> argv = {TROUPE_CLI, "node", "--insecure"};
        std::vector<std::string> env;
        switch (config) {
          case Config::kFlags:
            argv.push_back("--ps_hosts=" + host_list(spec_, "ps"));
            argv.push_back("--worker_hosts=" + host_list(spec_, "worker"));
            argv.push_back("--job_name=" + job);
            argv.push_back("--task_index=" + std::to_string(index));
            break;
          case Config::kTfConfig:
            env.push_back(
                fmt::format(R"(TF_CONFIG={{"cluster": {}, "task": {{"type": "{}", "index": {}}}}})",
                            spec_.to_json(), job, index));
            break;
          case Config::kClusterFile:
            argv.insert(argv.end(), {"--cluster_file", cluster_file_, "--job_name", job,
                                     "--task_index", std::to_string(index)});
            break;
        }
        nodes_.push_back(std::make_unique<ChildProcess>(argv, env));
      }
    }
    for (auto& node : nodes_) {
      BOOST_REQUIRE_MESSAGE(node->wait_for("serving at", kStartMs), node->output());
    }
  }

  ~NodeCluster() {
    for (auto& node : nodes_) {
      auto result = node->stop(SIGTERM, 10000);
      BOOST_TEST(result.exit_code == 0, result.out);
      BOOST_TEST(result.out.find("stopped") != std::string::npos, result.out);
    }
  }

  std::string target(const std::string& job, int index) const {
    return "troupe://" + value_or_throw(spec_.task_address(job, index));
  }

 private:
  ClusterSpec spec_;
  testing::TempDir dir_;
  std::string cluster_file_;
  std::vector<std::unique_ptr<ChildProcess>> nodes_;
};

testing::ProcessResult run_node(const std::vector<std::string>& flags,
                                const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {TROUPE_CLI, "node", "--insecure"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_process(argv, 20000, env);
}

void check_refused(const testing::ProcessResult& result, const std::string& needle) {
  BOOST_TEST(result.exit_code != 0, result.out);
  BOOST_TEST(!result.timed_out);
  BOOST_TEST(result.out.find(needle) != std::string::npos,
             "'" << needle << "' not in: " << result.out);
  // One line, naming the problem (after --insecure's warning, if given).
  size_t lines = std::count(result.out.begin(), result.out.end(), '\n');
  if (result.out.find("warning: --insecure") != std::string::npos) --lines;
  BOOST_TEST(lines == 1u, result.out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(node_processes)

BOOST_AUTO_TEST_CASE(cluster_from_the_seed_flags) {
  NodeCluster cluster(Config::kFlags);
  testing::model_parallel_step(cluster.target("worker", 0));
  testing::tensors_go_peer_to_peer(cluster.target("worker", 1));
  testing::missing_device_is_invalid_argument(cluster.target("ps", 0));
}

BOOST_AUTO_TEST_CASE(cluster_from_tf_config) {
  NodeCluster cluster(Config::kTfConfig);
  testing::model_parallel_step(cluster.target("worker", 1));
}

BOOST_AUTO_TEST_CASE(cluster_from_a_cluster_file) {
  NodeCluster cluster(Config::kClusterFile);
  testing::model_parallel_step(cluster.target("ps", 0));
}

BOOST_AUTO_TEST_CASE(a_standalone_node_serves_sessions) {
  int port = value_or_throw(pick_free_port());
  ChildProcess node({TROUPE_CLI, "node", "--insecure", "--port=" + std::to_string(port)});
  BOOST_REQUIRE_MESSAGE(
      node.wait_for("serving at troupe://localhost:" + std::to_string(port), kStartMs),
      node.output());
  Scope root = Scope::new_root();
  auto c = ops::Square(root, 7);
  Session session = value_or_throw(Session::create("troupe://127.0.0.1:" + std::to_string(port)));
  BOOST_TEST(value_or_throw(session.run(c)).scalar<int32_t>() == 49);
  auto result = node.stop(SIGINT, 10000);
  BOOST_TEST(result.exit_code == 0, result.out);
}

// A node started with a low soft limit on open files (1024 is common) raises it to the hard
// limit, so that many peers and clients do not run it out of descriptors.
BOOST_AUTO_TEST_CASE(a_node_raises_its_open_file_limit_to_the_hard_limit) {
  int port = value_or_throw(pick_free_port());
  ChildProcess node({"/usr/bin/prlimit", "--nofile=256:4096", TROUPE_CLI, "node", "--insecure",
                     "--port=" + std::to_string(port)});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", kStartMs), node.output());
  std::ifstream limits("/proc/" + std::to_string(node.pid()) + "/limits");
  std::string line, open_files;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) == 0) open_files = line;
  }
  std::istringstream fields(open_files.substr(std::string("Max open files").size()));
  long soft = 0, hard = 0;
  fields >> soft >> hard;
  BOOST_TEST(hard == 4096, open_files);
  BOOST_TEST(soft == 4096, open_files);
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
}

// 10000 x 3000 float32 = 120 MB, more than Cap'n Proto's default 64 MiB traversal limit: fed,
// fetched and held as a constant through a node process. The client's heartbeats may wait
// behind the 120 MB on its connection (docs/reliability.md), so they get a timeout that covers
// sending it on a loaded 2-core machine: this test is about the data path.
BOOST_AUTO_TEST_CASE(a_120_mb_tensor_crosses_the_remote_path) {
  int port = value_or_throw(pick_free_port());
  ChildProcess node({TROUPE_CLI, "node", "--insecure", "--port=" + std::to_string(port)});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", kStartMs), node.output());
  Tensor big(DataType::kFloat, TensorShape{10000, 3000});
  float* data = big.data<float>();
  for (int64_t i = 0; i < big.num_elements(); ++i)
    data[i] = static_cast<float>(i % 1009);

  Scope root = Scope::new_root();
  auto fed = ops::Placeholder(root, DataType::kFloat, PartialShape({-1, 3000}));
  auto echoed = ops::Identity(root, fed);
  auto held = ops::Identity(root, ops::Const(root, big));
  auto total = ops::Sum(root, held, {0, 1});
  RuntimeOptions patient;
  patient.client_heartbeat_timeout = std::chrono::seconds(60);
  Session session =
      value_or_throw(Session::create("troupe://127.0.0.1:" + std::to_string(port), std::nullopt,
                                     value_or_throw(Runtime::create(patient))));
  Tensor back = value_or_throw(session.run(FeedDict{{fed, big}}, {echoed})).at(0);
  BOOST_TEST(back.equals(big));
  Tensor constant = value_or_throw(session.run(held));
  BOOST_TEST(constant.equals(big));
  double expected = 0;
  for (int64_t i = 0; i < big.num_elements(); ++i)
    expected += data[i];
  BOOST_TEST(std::abs(value_or_throw(session.run(total)).scalar<float>() - expected) / expected <
             1e-3);
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(bad_flags_are_one_line_errors) {
  check_refused(run_node({"--bogus=1"}), "unknown flag --bogus");
  check_refused(run_node({"--task_index=two"}), "flag --task_index: 'two' is not an integer");
  check_refused(run_node({"--job_name"}), "flag --job_name needs a value");
  check_refused(run_node({"--job_name=ps"}), "--job_name given without a cluster");
  check_refused(run_node({"--ps_hosts=127.0.0.1:1", "--task_index=0"}), "--job_name is required");
  check_refused(run_node({"--ps_hosts=localhost", "--job_name=ps"}), "port");
  check_refused(run_node({"--ps_hosts=127.0.0.1:1", "--worker_hosts=127.0.0.1:2",
                          "--job_name=worker", "--task_index=5"}),
                "job 'worker' has no task 5");
  check_refused(run_node({"--ps_hosts=127.0.0.1:1", "--job_name=chief"}), "unknown job 'chief'");
  check_refused(run_node({"--cluster_file=/nonexistent/cluster.json", "--job_name=ps"}),
                "cannot read '/nonexistent/cluster.json': No such file or directory");
  check_refused(run_node({"--cluster_file=/tmp", "--job_name=ps"}),
                "--cluster_file: '/tmp' is a directory (expected a JSON file");
  // Without a cluster a node serves /job:localhost/task:0; another index is a mistake.
  check_refused(run_node({"--task_index=1"}), "--task_index given without a cluster");
  check_refused(run_node({"--port=70000"}), "--port=70000 is not a port");
  check_refused(run_node({"--heartbeat_timeout_ms=-5"}), "--heartbeat_timeout_ms=-5 is negative");
  check_refused(run_node({"--heartbeat_interval_ms=0"}), "--heartbeat_interval_ms=0 needs");
  check_refused(run_node({"--buffer_pool_bytes=-1"}), "--buffer_pool_bytes=-1 is negative");
  check_refused(run_node({"--max_pending_connections=0"}),
                "--max_pending_connections=0 is out of range (expected 1 .. 1000000)");
  check_refused(run_node({"--max_pending_connections_per_peer=-3"}),
                "--max_pending_connections_per_peer=-3 is out of range");
  check_refused(run_node({"--handshake_timeout_ms=0"}),
                "--handshake_timeout_ms=0 is out of range (expected at least 1 ms)");
}

BOOST_AUTO_TEST_CASE(bad_tf_config_is_a_one_line_error) {
  check_refused(run_node({}, {"TF_CONFIG={not json"}), "TF_CONFIG");
  check_refused(
      run_node(
          {"--task_index=1"},
          {R"(TF_CONFIG={"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}})"}),
      "--task_index given with TF_CONFIG, whose \"task\" names this task");
  check_refused(
      run_node(
          {},
          {R"(TF_CONFIG={"cluster": {"ps": ["a:1"]}, "task": {"type": "worker", "index": 0}})"}),
      "task.type 'worker' is not a job of the cluster");
  check_refused(
      run_node(
          {},
          {R"(TF_CONFIG={"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}})"}),
      "TF_CONFIG");
  check_refused(
      run_node(
          {},
          {R"(TF_CONFIG={"cluster": {"worker": ["nohost"]}, "task": {"type": "worker", "index": 0}})"}),
      "port");
}

BOOST_AUTO_TEST_CASE(tls_or_insecure_must_be_chosen) {
  std::vector<std::string> node = {TROUPE_CLI, "node", "--port=0"};
  auto with = [&](std::vector<std::string> flags, std::vector<std::string> env = {}) {
    flags.insert(flags.begin(), node.begin(), node.end());
    return run_process(flags, 20000, env);
  };
  check_refused(with({}), "no TLS credentials: give --tls_cert, --tls_key and --tls_ca");
  check_refused(with({"--tls_cert=/a.pem"}), "--tls_key is missing");
  check_refused(with({"--tls_cert=/no/a.pem", "--tls_key=/no/a.key", "--tls_ca=/no/ca.pem"}),
                "--tls_cert '/no/a.pem' is not a readable PEM certificate");
  check_refused(with({"--insecure"}, {"TROUPE_TLS_CERT=/a.pem"}), "--insecure and TLS credentials");
  // --insecure is allowed, with a warning.
  int port = value_or_throw(pick_free_port());
  ChildProcess insecure({TROUPE_CLI, "node", "--port=" + std::to_string(port)},
                        {"TROUPE_INSECURE=1"});
  BOOST_REQUIRE_MESSAGE(insecure.wait_for("serving at", kStartMs), insecure.output());
  BOOST_TEST(
      insecure.output().find("warning: --insecure: traffic is unencrypted") != std::string::npos,
      insecure.output());
}

BOOST_AUTO_TEST_CASE(tls_from_the_environment) {
  testing::TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions tls = creds.make_certificate("node", "ca");
  RuntimeOptions client;
  client.tls = creds.make_certificate("client", "ca");
  int port = value_or_throw(pick_free_port());
  ChildProcess node({TROUPE_CLI, "node", "--port=" + std::to_string(port)},
                    {"TROUPE_TLS_CERT=" + tls.certificate_file, "TROUPE_TLS_KEY=" + tls.key_file,
                     "TROUPE_TLS_CA=" + tls.ca_file});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", kStartMs), node.output());
  Scope root = Scope::new_root();
  auto c = ops::Square(root, 7);
  std::string target = "troupe://127.0.0.1:" + std::to_string(port);
  Session session = value_or_throw(
      Session::create(target, std::nullopt, value_or_throw(Runtime::create(client))));
  BOOST_TEST(value_or_throw(session.run(c)).scalar<int32_t>() == 49);
  testing::check_error(Session::create(target).status(), Code::kUnavailable,
                       "this process does not use TLS");
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(a_taken_port_is_refused) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  BOOST_REQUIRE(::listen(fd, 1) == 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  auto result = run_node({"--worker_hosts=" + address, "--job_name=worker"});
  ::close(fd);
  check_refused(result, "cannot listen on " + address);
  BOOST_TEST(result.out.find("Address already in use") != std::string::npos, result.out);
}

// A cluster that gives this task another host's address (192.0.2.1 is TEST-NET-1, on no
// host) is named at once, before the tensor channel or the task starts.
BOOST_AUTO_TEST_CASE(another_hosts_address_is_refused_with_the_reason) {
  auto result = run_node({"--ps_hosts=192.0.2.1:2222", "--job_name=ps"});
  check_refused(result,
                "cannot listen on 192.0.2.1:2222 for /job:ps/replica:0/task:0: Cannot "
                "assign requested address (no interface of this host has that address");
}

// --health_port (apps/cli/health_port.hpp), or the variable troupe k8s's manifests set.
BOOST_AUTO_TEST_CASE(the_node_takes_the_health_port_flag_or_the_variable) {
  auto bad = testing::run_process(
      {TROUPE_CLI, "node", "--insecure", "--port=0", "--health_port=70000"}, 30000);
  BOOST_TEST(bad.exit_code == 2, bad.out);
  BOOST_TEST(bad.out.find("--health_port='70000' (or $TROUPE_HEALTH_PORT) is not a port") !=
                 std::string::npos,
             bad.out);
  auto from_env = testing::run_process({TROUPE_CLI, "node", "--insecure", "--port=0"}, 30000,
                                       {"TROUPE_HEALTH_PORT=x1"});
  BOOST_TEST(from_env.exit_code == 2, from_env.out);
  BOOST_TEST(from_env.out.find("--health_port='x1'") != std::string::npos, from_env.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
