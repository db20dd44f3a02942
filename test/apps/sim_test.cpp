// `troupe sim`: a whole cluster in one process, checked by itself or used from this process.
#include <signal.h>

#include <regex>

#include <boost/test/unit_test.hpp>

#include "apps/child_process.hpp"
#include "tls_credentials.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
using testing::ChildProcess;
using testing::run_process;

BOOST_AUTO_TEST_SUITE(sim)

BOOST_AUTO_TEST_CASE(check_runs_a_step_across_every_task) {
  auto result =
      run_process({TROUPE_CLI, "sim", "--ps=2", "--workers=2", "--check", "--insecure"}, 60000);
  BOOST_TEST(result.exit_code == 0, result.out);
  // sum = 1 + 1 + 2 = 4; workers multiply by 1 and 2: 4 + 8 = 12.
  BOOST_TEST(result.out.find("check passed: 12 computed on 4 devices, 4 bytes to the master") !=
                 std::string::npos,
             result.out);
  // The tasks share the process's threads, and say how many.
  BOOST_TEST(std::regex_search(result.out,
                               std::regex("troupe sim: 2 ps \\+ 2 workers in one process, sharing "
                                          "[0-9]+ compute threads and [0-9]+ actor scheduler "
                                          "threads")),
             result.out);
}

// A few hundred listening tasks: each binds port 0, so none can lose a port probed free to
// another task's connection before binding it (which failed 3 of 3 starts of 300 tasks).
BOOST_AUTO_TEST_CASE(three_hundred_listening_tasks_start) {
  auto result =
      run_process({TROUPE_CLI, "sim", "--ps=1", "--workers=299", "--check", "--insecure"}, 120000);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(result.out.find("check passed") != std::string::npos, result.out);
}

BOOST_AUTO_TEST_CASE(its_tasks_serve_sessions_from_other_processes) {
  ChildProcess sim({TROUPE_CLI, "sim", "--ps=1", "--workers=2", "--insecure"});
  BOOST_REQUIRE_MESSAGE(sim.wait_for("serving", 30000), sim.output());
  std::smatch match;
  std::string output = sim.output();
  BOOST_REQUIRE(std::regex_search(output, match,
                                  std::regex("/job:worker/replica:0/task:1  (troupe://[0-9.:]+)")));
  Scope root = Scope::new_root();
  auto x = ops::Placeholder(root, DataType::kFloat);
  auto y = ops::Mul(root.with_device("/job:worker/task:0"),
                    ops::Square(root.with_device("/job:ps/task:0"), x), 2.f);
  Session session = value_or_throw(Session::create(match[1].str()));
  BOOST_TEST(value_or_throw(session.run(FeedDict{{x, Tensor(3.f)}}, {y})).at(0).scalar<float>() ==
             18.f);
  auto stopped = sim.stop(SIGTERM, 10000);
  BOOST_TEST(stopped.exit_code == 0, stopped.out);
  BOOST_TEST(stopped.out.find("troupe sim: stopped") != std::string::npos);
}

// Listening follows the node's rule: TLS, or --insecure said out loud. In-process only
// (--listen=false) needs neither.
BOOST_AUTO_TEST_CASE(listening_needs_tls_or_insecure) {
  auto neither = run_process({TROUPE_CLI, "sim", "--check"}, 20000);
  BOOST_TEST(neither.exit_code == 2, neither.out);
  BOOST_TEST(neither.out.find("troupe sim: no TLS credentials") != std::string::npos, neither.out);
  auto in_process = run_process({TROUPE_CLI, "sim", "--check", "--listen=false"}, 60000);
  BOOST_TEST(in_process.exit_code == 0, in_process.out);
  BOOST_TEST(in_process.out.find("check passed") != std::string::npos, in_process.out);
  auto insecure = run_process({TROUPE_CLI, "sim", "--check", "--insecure"}, 60000);
  BOOST_TEST(insecure.exit_code == 0, insecure.out);
  BOOST_TEST(insecure.out.find("warning: --insecure") != std::string::npos, insecure.out);

  testing::TlsCredentials creds;
  creds.make_ca("ca");
  TlsOptions tls = creds.make_certificate("sim", "ca");
  auto with_tls = run_process({TROUPE_CLI, "sim", "--check", "--tls_cert=" + tls.certificate_file,
                               "--tls_key=" + tls.key_file, "--tls_ca=" + tls.ca_file},
                              60000);
  BOOST_TEST(with_tls.exit_code == 0, with_tls.out);
  BOOST_TEST(with_tls.out.find("check passed") != std::string::npos, with_tls.out);
}

BOOST_AUTO_TEST_CASE(bad_sizes_are_refused) {
  auto no_workers = run_process({TROUPE_CLI, "sim", "--workers=0"}, 20000);
  BOOST_TEST(no_workers.exit_code == 2);
  BOOST_TEST(no_workers.out.find("expected ps >= 0 and workers >= 1") != std::string::npos,
             no_workers.out);
  auto bad_flag = run_process({TROUPE_CLI, "sim", "--tasks=3"}, 20000);
  BOOST_TEST(bad_flag.exit_code == 2);
  BOOST_TEST(bad_flag.out.find("unknown flag --tasks") != std::string::npos, bad_flag.out);
}

// --deterministic: a training job under seeded faults, the same output for the same seed in
// two processes (wall time aside), a summary and an exit code that says whether every invariant
// held.
BOOST_AUTO_TEST_CASE(deterministic_runs_replay_from_their_seed) {
  std::vector<std::string> command = {TROUPE_CLI,    "sim",         "--deterministic", "--seed=6",
                                      "--workers=3", "--steps=200", "--faults=2"};
  auto first = run_process(command, 60000);
  auto second = run_process(command, 60000);
  BOOST_TEST(first.exit_code == 0, first.out);
  BOOST_TEST(first.out.find("troupe sim: every invariant held") != std::string::npos, first.out);
  BOOST_TEST(first.out.find("fault: ") != std::string::npos, first.out);
  std::smatch hash;
  BOOST_TEST_REQUIRE(std::regex_search(first.out, hash, std::regex("trace hash [0-9a-f]{16}")),
                     first.out);
  auto without_wall_time = [](const std::string& out) {
    return std::regex_replace(out, std::regex("[0-9.]+ s of wall time"), "");
  };
  BOOST_TEST(without_wall_time(first.out) == without_wall_time(second.out));
  // Another seed, another run.
  command[3] = "--seed=7";
  auto other = run_process(command, 60000);
  BOOST_TEST(other.exit_code == 0, other.out);
  BOOST_TEST(other.out.find(hash.str()) == std::string::npos, other.out);
  // --trace prints every message taken.
  auto traced = run_process(
      {TROUPE_CLI, "sim", "--deterministic", "--steps=2", "--workers=1", "--trace"}, 60000);
  BOOST_TEST(traced.exit_code == 0, traced.out);
  BOOST_TEST(traced.out.find("worker 0 client -> worker 0 session: runstep") != std::string::npos,
             traced.out);
}

BOOST_AUTO_TEST_CASE(deterministic_flags_are_checked) {
  auto listen = run_process({TROUPE_CLI, "sim", "--deterministic", "--listen=true"}, 30000);
  BOOST_TEST(listen.exit_code == 2, listen.out);
  BOOST_TEST(listen.out.find("--listen with --deterministic") != std::string::npos, listen.out);
  auto seed = run_process({TROUPE_CLI, "sim", "--seed=3", "--listen=false", "--check"}, 30000);
  BOOST_TEST(seed.exit_code == 2, seed.out);
  BOOST_TEST(seed.out.find("--seed applies only with --deterministic") != std::string::npos,
             seed.out);
  auto faults = run_process({TROUPE_CLI, "sim", "--deterministic", "--faults=9"}, 30000);
  BOOST_TEST(faults.exit_code == 2, faults.out);
  BOOST_TEST(faults.out.find("--faults=9: expected 0..3") != std::string::npos, faults.out);
  auto steps = run_process({TROUPE_CLI, "sim", "--deterministic", "--steps=0"}, 30000);
  BOOST_TEST(steps.exit_code == 2, steps.out);
  BOOST_TEST(steps.out.find("--steps=0: expected 1..1000000") != std::string::npos, steps.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
