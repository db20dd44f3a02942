// Two tasks in processes of their own that reach each other at the same moment, with TLS:
// CAF 0.17 then closes both connections (each side keeps the one it accepted and closes the
// one it opened as redundant), and the directory must connect again rather than fail the step
// (actors/directory.cpp, settle). A crossing happens in about a third of the attempts on
// loopback, so the test makes many: pairs of crossing_peer processes started together, each
// running a step on the other at one wall-clock instant; and the same with one of them reaching
// the other through a session on its server (actors/session.cpp).
#include <signal.h>

#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <boost/test/unit_test.hpp>

#include "apps/child_process.hpp"
#include "free_ports.hpp"
#include "tls_credentials.hpp"

namespace troupe {
namespace {

using testing::ChildProcess;

constexpr int kRounds = 4;
constexpr int kPairsPerRound = 3;

int64_t ms_since_epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Runs kRounds rounds of kPairsPerRound pairs of crossing_peer processes (`extra`: their
// optional last argument) and checks that every one ran its step; returns how many connections
// closed as they were made.
int run_crossings(const std::vector<std::string>& extra) {
  testing::TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions tls = creds.make_certificate("peer", "ca");
  std::vector<std::string> env{"TROUPE_TLS_CERT=" + tls.certificate_file,
                               "TROUPE_TLS_KEY=" + tls.key_file, "TROUPE_TLS_CA=" + tls.ca_file,
                               "TROUPE_LOG_LEVEL=debug"};
  int crossings = 0;
  for (int round = 0; round < kRounds; ++round) {
    // Far enough ahead for every process of the round to have started its server.
    auto start = ms_since_epoch(std::chrono::system_clock::now() + std::chrono::milliseconds(1500));
    std::vector<std::unique_ptr<ChildProcess>> peers;
    // One probe for every pair of the round, so that no two pairs share a port.
    ClusterSpec ports = testing::free_port_cluster({{"worker", 2 * kPairsPerRound}});
    for (int pair = 0; pair < kPairsPerRound; ++pair) {
      std::string a = ports.task_address("worker", 2 * pair).value();
      std::string b = ports.task_address("worker", 2 * pair + 1).value();
      for (int index : {0, 1}) {
        std::vector<std::string> argv{CROSSING_PEER, std::to_string(index), a, b,
                                      std::to_string(start)};
        argv.insert(argv.end(), extra.begin(), extra.end());
        peers.push_back(std::make_unique<ChildProcess>(argv, env));
      }
    }
    for (auto& peer : peers) {
      BOOST_TEST(peer->wait_for("got 6", 30000), peer->output());
    }
    for (auto& peer : peers) {
      crossings += static_cast<int>(testing::count_of(peer->output(), "connecting again"));
      peer->stop(SIGKILL, 10000);
    }
  }
  return crossings;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(crossed_connections)

// Each task's directory connects to the other to run its step there.
BOOST_AUTO_TEST_CASE(two_tasks_that_connect_to_each_other_at_once_both_get_through) {
  int crossings = run_crossings({});
  // Not a condition of the test (a run may see none): how often the race was met.
  BOOST_TEST_MESSAGE("connections that closed as they were made: " << crossings);
}

// Task 0's directory connects to task 1 while task 1 opens a session on task 0's server.
BOOST_AUTO_TEST_CASE(a_session_opened_as_the_server_connects_back_gets_through) {
  int crossings = run_crossings({"session"});
  BOOST_TEST_MESSAGE("connections that closed as they were made: " << crossings);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
