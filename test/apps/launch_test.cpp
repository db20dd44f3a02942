// `troupe launch` run as a user runs it, with /bin/sh scripts as the launched program: TF_CONFIG
// per task, prefixed whole lines, the chief ending the job, failures, progress, SIGTERM, usage
// errors; and the line splitting and progress rendering behind it (apps/cli/launch_output.hpp).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "apps/child_process.hpp"
#include "temp_files.hpp"
#include "troupe/apps/cli/launch_output.hpp"
#include "troupe/devices/device.hpp"
#include "troupe/graph/cluster/tf_config.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
using testing::TempDir;
namespace {

using cli::parse_progress;
using cli::Progress;
using testing::ChildProcess;
using testing::ProcessResult;
using testing::run_process;
using Clock = std::chrono::steady_clock;

constexpr int kTimeoutMs = 30000;
// Far below the 600 s the stopped tasks would sleep, far above a loaded machine's start-up.
constexpr int64_t kQuickMs = 8000;

// Sets $task to this task's job and index ("ps0", "worker1") from TF_CONFIG.
const std::string kWhoAmI = R"sh(
task=$(echo "$TF_CONFIG" | sed 's/.*"task": {"type": "\([a-z]*\)", "index": \([0-9]*\)}}$/\1\2/')
)sh";

// `await DIR N` waits (at most 20 s) until DIR holds N entries: a barrier for the chief, so
// that it exits only once the other tasks have done their part.
const std::string kAwait = R"sh(
await() {
  i=0
  while [ "$(ls "$1" | wc -l)" -lt "$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
}
)sh";

struct Launched {
  ProcessResult result;
  int64_t elapsed_ms = 0;
};

// `troupe launch <flags> -- /bin/sh -c <script> sh <script_args...>`.
Launched launch_script(const std::vector<std::string>& flags, const std::string& script,
                       const std::vector<std::string>& script_args = {}) {
  std::vector<std::string> argv = {TROUPE_CLI, "launch"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "/bin/sh", "-c", kWhoAmI + kAwait + script, "sh"});
  argv.insert(argv.end(), script_args.begin(), script_args.end());
  auto start = Clock::now();
  Launched launched;
  launched.result = run_process(argv, kTimeoutMs);
  launched.elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  BOOST_TEST(!launched.result.timed_out, launched.result.out);
  return launched;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// The lines a task printed, without its "[worker1] " prefix.
std::vector<std::string> task_lines(const std::string& out, const std::string& task) {
  std::vector<std::string> lines;
  std::string prefix = "[" + task + "] ";
  for (const std::string& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
  }
  return lines;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

bool process_exists(pid_t pid) {
  return kill(pid, 0) == 0 || errno != ESRCH;
}

pid_t read_pid(const std::string& file) {
  pid_t pid = 0;
  std::ifstream(file) >> pid;
  return pid;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(launch)

BOOST_AUTO_TEST_CASE(tasks_get_throwaway_tls_credentials_that_go_with_the_job) {
  TempDir dir;
  // Each task checks its credentials with openssl and records where they were.
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=2"}, R"sh(
openssl verify -CAfile "$TROUPE_TLS_CA" "$TROUPE_TLS_CERT" || exit 3
openssl pkey -in "$TROUPE_TLS_KEY" -noout || exit 4
echo "insecure=[$TROUPE_INSECURE] key mode $(stat -c %a "$TROUPE_TLS_KEY")"
echo "$TROUPE_TLS_CERT" > "$1/$task"
if [ "$task" = worker0 ]; then await "$1" 3; exit 0; fi
exec sleep 600
)sh",
                                            {dir.path().string()});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(contains(result.out, "troupe launch: TLS with throwaway credentials in "), result.out);
  BOOST_TEST(contains(result.out, "[worker1] insecure=[] key mode 600"), result.out);
  std::ifstream recorded(dir.path().string() + "/worker0");
  std::string certificate;
  std::getline(recorded, certificate);
  BOOST_REQUIRE(!certificate.empty());
  BOOST_TEST(!std::filesystem::exists(std::filesystem::path(certificate).parent_path()),
             "the credentials outlived the job: " << certificate);
}

BOOST_AUTO_TEST_CASE(insecure_tasks_get_no_credentials) {
  auto [result, elapsed_ms] = launch_script({"--insecure", "--workers=1", "--ps=0"}, R"(
echo "insecure=[$TROUPE_INSECURE] cert=[$TROUPE_TLS_CERT]"
)");
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(contains(result.out, "troupe launch: --insecure: the tasks run without TLS"),
             result.out);
  BOOST_TEST(contains(result.out, "[worker0] insecure=[1] cert=[]"), result.out);

  auto both = run_process({TROUPE_CLI, "launch", "--insecure", "--", "true"}, kTimeoutMs,
                          {"TROUPE_TLS_CERT=/x.pem", "TROUPE_TLS_KEY=/x.key", "TROUPE_TLS_CA=/x"});
  BOOST_TEST(both.exit_code == 2, both.out);
  BOOST_TEST(contains(both.out, "--insecure, but TROUPE_TLS_CERT/KEY/CA are set"), both.out);
  auto unreadable =
      run_process({TROUPE_CLI, "launch", "--", "true"}, kTimeoutMs,
                  {"TROUPE_TLS_CERT=/no/such.pem", "TROUPE_TLS_KEY=/x.key", "TROUPE_TLS_CA=/x"});
  BOOST_TEST(unreadable.exit_code == 2, unreadable.out);
  BOOST_TEST(contains(unreadable.out, "TROUPE_TLS_CERT '/no/such.pem'"), unreadable.out);
}

BOOST_AUTO_TEST_CASE(each_task_gets_tf_config_naming_it_and_the_cluster) {
  TempDir dir;
  auto [result, elapsed_ms] = launch_script({"--ps=2", "--workers=3"}, R"(
echo "$TF_CONFIG"
touch "$1/$task"
if [ "$task" = worker0 ]; then await "$1" 5; exit 0; fi
exec sleep 600
)",
                                            {dir.path().string()});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);

  std::optional<ClusterSpec> cluster;
  for (const std::string& line : lines_of(result.out)) {
    if (line.rfind("troupe launch: cluster ", 0) == 0) {
      cluster = value_or_throw(ClusterSpec::from_json(line.substr(line.find('{'))));
    }
  }
  BOOST_REQUIRE_MESSAGE(cluster.has_value(), result.out);
  // The 5 tasks share this host's cores (ServerDef::intra_op_threads).
  const int cores = Device::available_cores();
  BOOST_TEST(contains(result.out,
                      fmt::format("troupe launch: 5 tasks on this host's {} core{}: {} intra-op "
                                  "thread{} each unless a task sets --intra_op_threads",
                                  cores, cores == 1 ? "" : "s", std::max(1, cores / 5),
                                  cores / 5 > 1 ? "s" : "")),
             result.out);
  std::set<std::string> addresses;
  for (const auto& [job, count] : {std::pair<std::string, int>{"ps", 2}, {"worker", 3}}) {
    BOOST_TEST(value_or_throw(cluster->num_tasks(job)) == count);
    for (int index = 0; index < count; ++index) {
      std::string address = value_or_throw(cluster->task_address(job, index));
      BOOST_TEST(address.rfind("127.0.0.1:", 0) == 0u, address);
      addresses.insert(address);
      auto lines = task_lines(result.out, job + std::to_string(index));
      BOOST_REQUIRE_MESSAGE(lines.size() == 1u, result.out);
      TfConfig config = value_or_throw(TfConfig::parse(lines[0]));
      BOOST_TEST(config.task_type == job);
      BOOST_TEST(config.task_index == index);
      BOOST_TEST((config.cluster == *cluster), lines[0]);
    }
  }
  BOOST_TEST(addresses.size() == 5u, "ports are distinct");
  BOOST_TEST(contains(result.out, "troupe launch: done\n"), result.out);
}

BOOST_AUTO_TEST_CASE(lines_are_prefixed_and_whole) {
  TempDir dir;
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=2"}, R"(
i=0; while [ $i -lt 200 ]; do echo "$task line $i"; i=$((i+1)); done
printf '%s partial' "$task"; sleep 0.2; printf ' line\n'
echo "$task to stderr" >&2
printf '%s last line without newline' "$task"
touch "$1/$task"
if [ "$task" = worker0 ]; then await "$1" 3; fi
)",
                                            {dir.path().string()});
  BOOST_TEST(result.exit_code == 0, result.out);
  std::regex line_shape(R"((\[(ps0|worker0|worker1)\] .*)|(troupe launch: .*))");
  for (const std::string& line : lines_of(result.out)) {
    BOOST_TEST(std::regex_match(line, line_shape), "not a whole prefixed line: '" << line << "'");
  }
  for (const std::string task : {"ps0", "worker0", "worker1"}) {
    std::vector<std::string> expected;
    for (int i = 0; i < 200; ++i)
      expected.push_back(task + " line " + std::to_string(i));
    expected.push_back(task + " partial line");
    auto lines = task_lines(result.out, task);
    BOOST_REQUIRE_MESSAGE(lines.size() == 203u, result.out);
    BOOST_TEST(std::vector<std::string>(lines.begin(), lines.begin() + 201) == expected,
               boost::test_tools::per_element());
    // stderr and stdout are separate pipes: their last lines may come in either order.
    std::set<std::string> last(lines.begin() + 201, lines.end());
    BOOST_TEST(
        (last == std::set<std::string>{task + " to stderr", task + " last line without newline"}),
        result.out);
  }
}

BOOST_AUTO_TEST_CASE(the_chief_exiting_0_stops_the_other_tasks) {
  TempDir dir;
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=2"}, R"(
echo $$ > "$1/$task.pid"
if [ "$task" = worker0 ]; then await "$1" 3; echo "chief finished"; exit 0; fi
exec sleep 600
)",
                                            {dir.path().string()});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);
  BOOST_TEST(contains(result.out, "[worker0] chief finished\n"), result.out);
  BOOST_TEST(contains(result.out, "troupe launch: done\n"), result.out);
  BOOST_TEST(!contains(result.out, "failed"), result.out);
  for (const std::string task : {"ps0", "worker1"}) {
    pid_t pid = read_pid(dir.path().string() + "/" + task + ".pid");
    BOOST_TEST(pid > 0);
    BOOST_TEST(!process_exists(pid), task << " survived");
  }
}

BOOST_AUTO_TEST_CASE(a_task_ignoring_sigterm_is_killed_after_the_grace_period) {
  TempDir dir;
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=1", "--grace_ms=300"}, R"(
if [ "$task" = worker0 ]; then await "$1" 1; exit 0; fi
trap '' TERM
echo $$ > "$1/$task.pid"
exec sleep 600
)",
                                            {dir.path().string()});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);
  BOOST_TEST(contains(result.out, "troupe launch: done\n"), result.out);
  pid_t pid = read_pid(dir.path().string() + "/ps0.pid");
  BOOST_TEST(pid > 0);
  BOOST_TEST(!process_exists(pid));
}

BOOST_AUTO_TEST_CASE(a_failing_worker_fails_the_job) {
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=2"}, R"(
if [ "$task" = worker1 ]; then echo "giving up"; exit 3; fi
exec sleep 600
)");
  BOOST_TEST(result.exit_code == 1, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);
  BOOST_TEST(contains(result.out, "[worker1] giving up\n"), result.out);
  BOOST_TEST(contains(result.out,
                      "troupe launch: task /job:worker/replica:0/task:1 failed: exit code 3\n"),
             result.out);
  BOOST_TEST(!contains(result.out, "done"), result.out);
}

BOOST_AUTO_TEST_CASE(a_failed_task_is_restarted_up_to_the_limit) {
  // worker1 fails every time: restarted twice, then the job fails naming it.
  auto [result, elapsed_ms] = launch_script({"--ps=0", "--workers=2", "--max_restarts=2"}, R"(
if [ "$task" = worker1 ]; then echo "attempt"; exit 3; fi
exec sleep 600
)");
  BOOST_TEST(result.exit_code == 1, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);
  BOOST_TEST(contains(result.out,
                      "task /job:worker/replica:0/task:1 failed: exit code 3; "
                      "restarting it (1 of 2)\n"),
             result.out);
  BOOST_TEST(contains(result.out, "restarting it (2 of 2)\n"), result.out);
  BOOST_TEST(contains(result.out,
                      "troupe launch: task /job:worker/replica:0/task:1 failed: exit code 3\n"),
             result.out);
  size_t attempts = 0;
  for (size_t at = result.out.find("[worker1] attempt"); at != std::string::npos;
       at = result.out.find("[worker1] attempt", at + 1)) {
    ++attempts;
  }
  BOOST_TEST(attempts == 3u, result.out);
}

BOOST_AUTO_TEST_CASE(a_restarted_task_that_then_succeeds_lets_the_job_finish) {
  // The chief fails on its first run only (a marker file remembers), then ends the job.
  TempDir dir;
  std::string marker = dir.file("failed-once");
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=1", "--max_restarts=1"},
                                            "if [ \"$task\" = worker0 ]; then\n"
                                            "  if [ ! -e " +
                                                marker + " ]; then touch " + marker +
                                                "; exit 5; fi\n"
                                                "  exit 0\n"
                                                "fi\n"
                                                "exec sleep 600\n");
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(contains(result.out, "restarting it (1 of 1)"), result.out);
  BOOST_TEST(contains(result.out, "troupe launch: done"), result.out);
}

BOOST_AUTO_TEST_CASE(a_task_killed_by_a_signal_fails_the_job) {
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=1"}, R"(
if [ "$task" = ps0 ]; then kill -9 $$; fi
exec sleep 600
)");
  BOOST_TEST(result.exit_code == 1, result.out);
  BOOST_TEST(elapsed_ms < kQuickMs, result.out);
  BOOST_TEST(contains(result.out,
                      "troupe launch: task /job:ps/replica:0/task:0 failed: killed by signal 9\n"),
             result.out);
}

BOOST_AUTO_TEST_CASE(a_program_that_cannot_run_fails_its_task_with_127) {
  auto result = run_process(
      {TROUPE_CLI, "launch", "--ps=0", "--workers=1", "--", "/no/such/program", "arg"}, kTimeoutMs);
  BOOST_TEST(result.exit_code == 1, result.out);
  BOOST_TEST(contains(result.out, "[worker0] troupe launch: cannot execute '/no/such/program': "),
             result.out);
  BOOST_TEST(contains(result.out,
                      "troupe launch: task /job:worker/replica:0/task:0 failed: exit code 127\n"),
             result.out);
}

BOOST_AUTO_TEST_CASE(progress_lines_become_throttled_progress_lines_on_a_pipe) {
  auto [result, elapsed_ms] = launch_script({"--ps=1", "--workers=1"}, R"(
if [ "$task" = ps0 ]; then exec sleep 600; fi
echo "troupe-progress x 10"
echo "troupe-progress 5 3 more than the total"
i=0; while [ $i -le 1000 ]; do echo "troupe-progress $i 1000 training"; i=$((i+50)); done
echo "after"
)");
  BOOST_TEST(result.exit_code == 0, result.out);
  std::vector<std::string> progress;
  for (const std::string& line : lines_of(result.out)) {
    if (line.rfind("progress:", 0) == 0) progress.push_back(line);
  }
  // One line per tenth, with the elapsed time; the rate and ETA once a second report shows it.
  BOOST_REQUIRE_MESSAGE(progress.size() == 11u, result.out);
  BOOST_TEST(std::regex_match(
                 progress[0],
                 std::regex(R"(progress: 0/1000 \(0%\) \[\d+:\d\d<\?, \? steps/s\] training)")),
             progress[0]);
  for (int i = 1; i <= 10; ++i) {
    std::regex line(fmt::format(
        R"(progress: {}/1000 \({}%\) \[\d+:\d\d<\d+:\d\d, [0-9.]+[kMG]? steps/s\] training)",
        i * 100, i * 10));
    BOOST_TEST(std::regex_match(progress[i], line), progress[i]);
  }
  // Malformed progress lines are ordinary output; valid ones are never echoed.
  BOOST_TEST(task_lines(result.out, "worker0") ==
                 (std::vector<std::string>{"troupe-progress x 10",
                                           "troupe-progress 5 3 more than the total", "after"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(sigterm_or_sigint_stops_every_task) {
  for (int signal : {SIGTERM, SIGINT}) {
    ChildProcess launch({TROUPE_CLI, "launch", "--ps=1", "--workers=2", "--", "/bin/sh", "-c",
                         R"(echo "pid $$"; exec sleep 600)"});
    std::regex pid_line(R"(\[(ps0|worker0|worker1)\] pid (\d+)\n)");
    for (const std::string task : {"ps0", "worker0", "worker1"}) {
      BOOST_REQUIRE_MESSAGE(launch.wait_for("[" + task + "] pid ", 20000), launch.output());
    }
    std::map<std::string, pid_t> pids;
    auto deadline = Clock::now() + std::chrono::seconds(20);
    while (pids.size() < 3 && Clock::now() < deadline) {
      launch.wait_for("\x01never printed", 100);  // reads what comes in 100 ms
      for (std::sregex_iterator it(launch.output().begin(), launch.output().end(), pid_line), end;
           it != end; ++it) {
        pids[(*it)[1]] = std::stoi((*it)[2]);
      }
    }
    BOOST_REQUIRE_MESSAGE(pids.size() == 3u, launch.output());
    auto result = launch.stop(signal, 20000);
    BOOST_TEST(result.exit_code == 130, result.out);
    BOOST_TEST(!result.timed_out);
    BOOST_TEST(contains(result.out, "troupe launch: interrupted\n"), result.out);
    BOOST_TEST(!contains(result.out, "failed"), result.out);
    for (const auto& [task, pid] : pids) {
      BOOST_TEST(!process_exists(pid), task << " survived " << strsignal(signal));
    }
  }
}

// The ps tasks serve the others (the chief's final checkpoint reads every variable), so they
// are stopped only once the workers have exited.
BOOST_AUTO_TEST_CASE(the_ps_tasks_are_stopped_after_the_workers) {
  ChildProcess launch({TROUPE_CLI, "launch", "--ps=1", "--workers=2", "--", "/bin/sh", "-c",
                       R"(case "$TF_CONFIG" in
                            *'"type": "ps"'*) trap 'echo ps-stopped; exit 0' TERM ;;
                            *) trap 'sleep 1; echo worker-stopped; exit 0' TERM ;;
                          esac
                          echo started
                          while :; do sleep 0.1; done)"});
  BOOST_REQUIRE_MESSAGE(launch.wait_for_count("started", 3, 20000), launch.output());
  auto result = launch.stop(SIGTERM, 20000);
  BOOST_TEST(result.exit_code == 130, result.out);
  size_t ps_stopped = result.out.find("[ps0] ps-stopped");
  size_t last_worker = result.out.rfind("] worker-stopped");
  BOOST_REQUIRE_MESSAGE(ps_stopped != std::string::npos, result.out);
  BOOST_REQUIRE_MESSAGE(last_worker != std::string::npos, result.out);
  BOOST_TEST(testing::count_of(result.out, "worker-stopped") == 2u, result.out);
  BOOST_TEST(last_worker < ps_stopped, result.out);
}

BOOST_AUTO_TEST_CASE(troupe_is_this_binary) {
  auto result =
      run_process({TROUPE_CLI, "launch", "--ps=0", "--workers=1", "--", "troupe", "version"},
                  kTimeoutMs, {"PATH=/nonexistent"});
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(contains(result.out, "[worker0] troupe 0."), result.out);
  BOOST_TEST(contains(result.out, "troupe launch: cluster {\"worker\":"), result.out);
  BOOST_TEST(contains(result.out, "troupe launch: done\n"), result.out);
}

BOOST_AUTO_TEST_CASE(usage_errors_are_one_line) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--ps=1", "/bin/true"}, "missing '--' before the program '/bin/true'"},
      {{"--ps=1"}, "missing '--' and the program"},
      {{"--ps=1", "--"}, "missing the program after '--'"},
      {{"--ps=-1", "--", "/bin/true"}, "--ps=-1 --workers=2: expected ps >= 0"},
      {{"--workers=0", "--", "/bin/true"}, "--ps=1 --workers=0: expected ps >= 0, workers >= 1"},
      {{"--bogus", "--", "/bin/true"}, "unknown flag --bogus"},
      {{"--workers=two", "--", "/bin/true"}, "flag --workers: 'two' is not an integer"},
      {{"--grace_ms=-1", "--", "/bin/true"}, "--grace_ms=-1 must be in 0..86400000"},
      {{"--host=no host", "--", "/bin/true"}, "--host='no host' is not a host"},
      {{"extra", "--", "/bin/true"}, "unexpected argument 'extra' before '--'"},
  };
  for (const auto& [args, needle] : cases) {
    std::vector<std::string> argv = {TROUPE_CLI, "launch"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_process(argv, kTimeoutMs);
    BOOST_TEST(result.exit_code == 2, result.out);
    BOOST_TEST(result.out.rfind("troupe launch: " + needle, 0) == 0u,
               "'" << needle << "' not in: " << result.out);
    BOOST_TEST(std::count(result.out.begin(), result.out.end(), '\n') == 1, result.out);
  }
  auto help = run_process({TROUPE_CLI, "launch", "--help"}, kTimeoutMs);
  BOOST_TEST(help.exit_code == 0);
  BOOST_TEST(
      help.out.find("usage: troupe launch [flags] -- <program> [args...]") != std::string::npos,
      help.out);
  BOOST_TEST(contains(help.out, "--grace_ms=10000"), help.out);
}

BOOST_AUTO_TEST_CASE(on_a_terminal_progress_is_one_bar_redrawn_in_place) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  BOOST_REQUIRE(master >= 0);
  BOOST_REQUIRE(grantpt(master) == 0 && unlockpt(master) == 0);
  std::string slave_name = ptsname(master);
  std::string script = R"(
echo "troupe-progress 250 1000 warming up"
sleep 0.2
echo "a line"
sleep 0.2
echo "troupe-progress 500 1000"
)";
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name.c_str(), O_RDWR);
    dup2(slave, STDOUT_FILENO);
    dup2(slave, STDERR_FILENO);
    execl(TROUPE_CLI, TROUPE_CLI, "launch", "--ps=0", "--workers=1", "--", "/bin/sh", "-c",
          script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  auto deadline = Clock::now() + std::chrono::milliseconds(kTimeoutMs);
  while (Clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) {
      if (waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        break;
      }
      continue;
    }
    char buffer[4096];
    ssize_t n = read(master, buffer, sizeof(buffer));
    if (n <= 0) break;  // EIO once the last slave fd is closed
    out.append(buffer, n);
  }
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  close(master);
  // Drawn, cleared for the task's line, redrawn, updated in place (with the rate and ETA that a
  // second report gives), ended with a newline.
  std::string bar25 =
      R"(\r\[#####---------------\]  25% 250/1000 \[\d+:\d\d<\?, \? steps/s\] warming up\x1b\[K)";
  std::regex expected(
      bar25 + R"(\r\x1b\[K\[worker0\] a line\r\n)" + bar25 +
      R"(\r\[##########----------\]  50% 500/1000 \[\d+:\d\d<\d+:\d\d, [0-9.]+[kMG]? steps/s\]\x1b\[K\r\n)");
  BOOST_TEST(std::regex_search(out, expected), out);
  BOOST_TEST(!contains(out, "progress:"), out);
  BOOST_TEST(contains(out, "troupe launch: done"), out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(launch_output)

BOOST_AUTO_TEST_CASE(progress_lines_parse_strictly) {
  BOOST_TEST(
      (parse_progress("troupe-progress 450 1000 epoch 3") == Progress{450, 1000, "epoch 3"}));
  BOOST_TEST((parse_progress("troupe-progress 0 1") == Progress{0, 1, ""}));
  BOOST_TEST((parse_progress("troupe-progress  7  7   done\r") == Progress{7, 7, "done"}));
  BOOST_TEST((parse_progress("troupe-progress 9223372036854775806 9223372036854775807") ==
              Progress{INT64_MAX - 1, INT64_MAX, ""}));
  for (const char* bad :
       {"troupe-progress", "troupe-progress 1", "troupe-progress 1 x", "troupe-progress x 10",
        "troupe-progress 11 10", "troupe-progress -1 10", "troupe-progress 0 0",
        "troupe-progress 1 10x", "troupe-progress 1 99999999999999999999", "troupe-progress1 2",
        " troupe-progress 1 2", "progress 1 2"}) {
    BOOST_TEST(!parse_progress(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_CASE(progress_renders_as_a_bar_or_a_log_line) {
  Progress p{450, 1000, "epoch 3"};
  BOOST_TEST(cli::progress_bar(p, "", 200) == "[#########-----------]  45% 450/1000 epoch 3");
  BOOST_TEST(cli::progress_bar({1000, 1000, ""}, "", 200) ==
             "[####################] 100% 1000/1000");
  BOOST_TEST(cli::progress_bar({0, 5, ""}, "", 200) == "[--------------------]   0% 0/5");
  BOOST_TEST(cli::progress_bar(p, "", 25) == "[#########-----------]  4");
  // Cut before a multi-byte character, not inside it.
  BOOST_TEST(cli::progress_bar({1, 2, "\u00e9t\u00e9"}, "", 33) ==
             "[##########----------]  50% 1/2 ");
  std::string timing = "[0:12<0:14, 37.5 steps/s]";
  BOOST_TEST(cli::progress_bar(p, timing, 200) ==
             "[#########-----------]  45% 450/1000 [0:12<0:14, 37.5 steps/s] epoch 3");
  BOOST_TEST(cli::progress_log_line(p, "") == "progress: 450/1000 (45%) epoch 3");
  BOOST_TEST(cli::progress_log_line(p, timing) ==
             "progress: 450/1000 (45%) [0:12<0:14, 37.5 steps/s] epoch 3");
  BOOST_TEST(cli::progress_log_line({INT64_MAX, INT64_MAX, ""}, "") ==
             "progress: 9223372036854775807/9223372036854775807 (100%)");
}

BOOST_AUTO_TEST_CASE(the_log_gets_one_line_per_10_percent_step_and_per_phase) {
  cli::ProgressThrottle throttle;
  std::vector<int64_t> printed;
  for (int64_t i = 0; i <= 100; i += 3) {
    if (throttle.should_print({i, 100, ""})) printed.push_back(i);
  }
  BOOST_TEST(printed == (std::vector<int64_t>{0, 12, 21, 30, 42, 51, 60, 72, 81, 90}),
             boost::test_tools::per_element());
  BOOST_TEST(!throttle.should_print({99, 100, "same step"}));
  BOOST_TEST(throttle.should_print({0, 5, "a new phase"}));
}

BOOST_AUTO_TEST_CASE(output_splits_into_whole_lines) {
  cli::LineSplitter splitter;
  BOOST_TEST(splitter.append("a").empty());
  BOOST_TEST((splitter.append("b\nc\n\nd") == std::vector<std::string>{"ab", "c", ""}));
  BOOST_TEST(splitter.take_rest().value() == "d");
  BOOST_TEST(!splitter.take_rest().has_value());
  // A line that never ends comes in pieces of kMaxLine.
  auto pieces = splitter.append(std::string(cli::LineSplitter::kMaxLine * 2 + 3, 'x'));
  BOOST_TEST(pieces.size() == 2u);
  BOOST_TEST(pieces[0].size() == cli::LineSplitter::kMaxLine);
  BOOST_TEST(splitter.take_rest().value() == "xxx");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
