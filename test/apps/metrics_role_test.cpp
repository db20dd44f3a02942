// The example custom role ("metrics"): started by the in-process cluster and by `troupe node`
// for tasks of its job, reached by task name from other tasks.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <caf/all.hpp>

#include "apps/child_process.hpp"
#include "free_ports.hpp"
#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/apps/cli/metrics_role.hpp"

namespace troupe {
namespace {

// Roles and their message types must be registered before the first actor system starts.
struct RegisterMetricsRole {
  RegisterMetricsRole() { throw_if_error(register_metrics_role("metrics")); }
};
BOOST_TEST_GLOBAL_FIXTURE(RegisterMetricsRole);

const MetricSummary* find(const std::vector<MetricSummary>& summaries, const std::string& name) {
  for (const auto& s : summaries) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(metrics_role)

BOOST_AUTO_TEST_CASE(workers_report_to_the_role_in_process) {
  ClusterSpec spec =
      value_or_throw(ClusterSpec::create({{"ps", {"ps0.local.invalid:1"}},
                                          {"worker", {"w0.local.invalid:1", "w1.local.invalid:1"}},
                                          {"metrics", {"m0.local.invalid:1"}}}));
  auto cluster = value_or_throw(LocalCluster::start(spec));
  auto worker0 = MetricsClient::connect(*value_or_throw(cluster->server("worker", 0)));
  auto worker1 = MetricsClient::connect(*value_or_throw(cluster->server("worker", 1)));
  BOOST_REQUIRE_MESSAGE(worker0.ok(), worker0.status().to_string());
  BOOST_REQUIRE(worker1.ok());
  worker0->report("loss", 1, 4.0);
  worker1->report("loss", 2, 2.0);
  worker0->report("accuracy", 2, 0.5);
  // Reports from one sender arrive in order, so a summary read after them sees them.
  auto summaries = value_or_throw(worker1->summaries());
  const MetricSummary* loss = find(summaries, "loss");
  BOOST_REQUIRE(loss != nullptr);
  BOOST_TEST(loss->count == 2);
  BOOST_TEST(loss->mean == 3.0);
  BOOST_TEST(loss->min == 2.0);
  BOOST_TEST(loss->max == 4.0);
  BOOST_TEST(loss->last == 2.0);
  BOOST_TEST(loss->last_step == 2);
  BOOST_TEST(find(value_or_throw(worker0->summaries()), "accuracy")->count == 1);
}

BOOST_AUTO_TEST_CASE(a_job_without_a_role_is_not_found) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  auto client = MetricsClient::connect(*value_or_throw(cluster->server("worker", 0)), "ps", 0);
  testing::check_error(client.status(), Code::kNotFound, "job 'ps' has no role actor");
}

BOOST_AUTO_TEST_CASE(the_node_binary_runs_the_role_for_its_job) {
  ClusterSpec spec = testing::free_port_cluster({{"worker", 1}, {"metrics", 1}});
  testing::TempDir dir;
  std::string file = dir.file("cluster.json");
  testing::write_file(file, spec.to_json());
  testing::ChildProcess node(
      {TROUPE_CLI, "node", "--insecure", "--cluster_file=" + file, "--job_name=metrics"});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", 20000), node.output());
  // This test process is the worker task.
  auto worker =
      value_or_throw(Server::create(value_or_throw(ServerDef::create(spec, "worker", 0))));
  auto client = MetricsClient::connect(*worker);
  BOOST_REQUIRE_MESSAGE(client.ok(), client.status().to_string());
  client->report("examples_per_second", 10, 1234.5);
  auto summaries = value_or_throw(client->summaries());
  BOOST_REQUIRE(summaries.size() == 1u);
  BOOST_TEST(summaries[0].name == "examples_per_second");
  BOOST_TEST(summaries[0].last == 1234.5);
  worker->stop();
  BOOST_TEST(node.stop(SIGTERM, 10000).exit_code == 0);
  std::remove(file.c_str());
}

// A user's node binary (test/apps/programs/own_metrics_node.cpp) with a role of its own named
// "metrics": it serves that role, not troupe's example, and nothing clashes.
BOOST_AUTO_TEST_CASE(a_users_own_role_named_metrics_is_served) {
  ClusterSpec spec = testing::free_port_cluster({{"worker", 1}, {"metrics", 1}});
  testing::TempDir dir;
  std::string file = dir.file("cluster.json");
  testing::write_file(file, spec.to_json());
  testing::ChildProcess node(
      {OWN_METRICS_NODE, "--insecure", "--cluster_file=" + file, "--job_name=metrics"});
  BOOST_REQUIRE_MESSAGE(node.wait_for("serving at", 20000), node.output());
  auto worker =
      value_or_throw(Server::create(value_or_throw(ServerDef::create(spec, "worker", 0))));
  caf::actor role = value_or_throw(worker->find_role("metrics", 0));
  caf::scoped_actor self(worker->system());
  std::string answer;
  self->request(role, std::chrono::seconds(10), std::string("hello"))
      .receive([&](const std::string& text) { answer = text; },
               [&](const caf::error& error) { answer = worker->system().render(error); });
  BOOST_TEST(answer == "own metrics role of /job:metrics/replica:0/task:0: hello");
  worker->stop();
  auto result = node.stop(SIGTERM, 10000);
  BOOST_TEST(result.exit_code == 0, result.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
