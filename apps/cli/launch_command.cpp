// `troupe launch`: a local cluster as processes, as TensorFlow users start one by hand on
// several machines, in one command. It picks a free port per task, starts `<program> [args...]`
// once per ps and worker task with TF_CONFIG naming the cluster and the task, prefixes every
// line the tasks write with the task ("[worker1] "), shows "troupe-progress" lines as one
// progress bar (apps/cli/launch_output.hpp), and ends the job when the chief (worker 0) exits 0,
// when a task fails (after --max_restarts restarts of it), or on SIGINT/SIGTERM: it stops every
// other task (SIGTERM, a grace period, SIGKILL) and reaps it before exiting. The ps tasks are
// stopped last, once every other task has exited, because the others may still need them (the
// chief's final checkpoint reads every variable). Each task runs in a process group of its own,
// so a Ctrl-C at the terminal reaches launch, which stops the tasks in that order. A failed
// task is restarted with the same TF_CONFIG (same address) while it has restarts left.
//
// The tasks talk TLS: with the credentials in TROUPE_TLS_CERT/KEY/CA if launch has them, else
// with throwaway ones it makes for the job (apps/deploy/throwaway_credentials.hpp) and passes on in
// those variables; --insecure (TROUPE_INSECURE=1 for the tasks) runs them without.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <system_error>

#include "troupe/actors/free_ports.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/cli/launch_output.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/apps/cli/runtime_flags.hpp"
#include "troupe/apps/cli/stop_signals.hpp"
#include "troupe/apps/deploy/throwaway_credentials.hpp"
#include "troupe/apps/training/progress_meter.hpp"
#include "troupe/devices/device.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/cluster/server_def.hpp"

extern char** environ;

namespace troupe::cli {
namespace {

using Clock = std::chrono::steady_clock;
using deploy::ThrowawayCredentials;

constexpr int64_t kMaxTasks = 1000;
constexpr int64_t kMaxGraceMs = 24 * 3600 * 1000;  // a day: no deadline arithmetic overflows
constexpr int kExecFailed = 127;       // a task's exit code when its program cannot be executed
constexpr int kExitInterrupted = 130;  // launch's exit code after SIGINT/SIGTERM
constexpr int kReadsPerWakeup = 16;    // reads of one pipe per poll, so no task starves others
constexpr int kReadsToDrain = 64;      // reads of one pipe when its task has exited

// Writes all of `data` to `fd`; what a closed or failing fd does not take is dropped.
void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Launch's own output: task lines to stdout or stderr, and the job's progress on stderr —
// a bar redrawn in place when stderr is a terminal, else throttled log lines. Unbuffered, so
// what reaches one stream and the other keeps its order.
class Console {
 public:
  Console() : terminal_(::isatty(STDERR_FILENO) == 1) {}

  // Writes whole lines to `fd`, clearing the bar first.
  void print(int fd, std::string_view lines) {
    clear();
    write_all(fd, lines);
  }

  void progress(const Progress& progress) {
    meter_.update(progress.current);
    if (!terminal_) {
      if (throttle_.should_print(progress)) {
        print(STDERR_FILENO, progress_log_line(progress, meter_.summary(progress.total)) + "\n");
      }
      return;
    }
    last_ = progress;
    draw();
  }

  // Puts the bar back after print() cleared it; called once per batch of output.
  void redraw() {
    if (last_ && shown_.empty()) draw();
  }

  // Leaves the bar, if shown, on a line of its own, and draws no more.
  void finish() {
    if (!shown_.empty()) write_all(STDERR_FILENO, "\n");
    shown_.clear();
    last_.reset();
  }

 private:
  void draw() {
    std::string bar = progress_bar(*last_, meter_.summary(last_->total), terminal_width() - 1);
    if (bar == shown_) return;
    write_all(STDERR_FILENO, "\r" + bar + "\033[K");
    shown_ = std::move(bar);
  }

  void clear() {
    if (shown_.empty()) return;
    write_all(STDERR_FILENO, "\r\033[K");
    shown_.clear();
  }

  static size_t terminal_width() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1) return size.ws_col;
    return 80;
  }

  bool terminal_;
  ProgressThrottle throttle_;
  ProgressMeter meter_;           // the job's elapsed time, rate and ETA
  std::optional<Progress> last_;  // the latest report (terminal only)
  std::string shown_;             // the bar as on screen; empty when not shown
};

// What every task executes.
struct Program {
  std::string file;  // the path or name to exec
  bool search_path;  // execvp-style PATH search for a name without '/'
  std::vector<std::string> argv;
};

// "troupe" is this binary, so `troupe launch -- troupe node` works without troupe in PATH.
Program resolve_program(const Args& command) {
  if (command[0] == "troupe") return {"/proc/self/exe", false, command};
  return {command[0], true, command};
}

struct Task {
  std::string job;
  int index = 0;
  std::string name;      // "/job:worker/replica:0/task:1"
  std::string prefix;    // "[worker1] "
  pid_t pid = -1;        // -1 until started
  int restarts = 0;      // times restarted after failing
  bool reaped = false;   // waited for: its pid may be reused, never signal it again
  int fd[2] = {-1, -1};  // read ends of its stdout and stderr pipes; -1 once closed
  LineSplitter lines[2];

  bool is_chief() const { return job == "worker" && index == 0; }
  bool running() const { return pid > 0 && !reaped; }
};

// TF_CONFIG exactly as TensorFlow defines it.
std::string tf_config(const ClusterSpec& cluster, const Task& task) {
  return fmt::format(R"({{"cluster": {}, "task": {{"type": "{}", "index": {}}}}})",
                     cluster.to_json(), task.job, task.index);
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void close_fds(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

// Starts `program` as `task`: stdout and stderr piped to launch (non-blocking read ends in
// task.fd), stdin from `dev_null`, this environment with TF_CONFIG set to `config`, killed
// when launch dies. Returns 0, or the errno of the pipe or fork that failed (nothing is left
// open then). A program that cannot be executed makes the task print why and exit 127.
int spawn(Task& task, const Program& program, const std::string& config, int dev_null) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("TF_CONFIG=", 0) != 0) env.push_back(*e);
  }
  env.push_back("TF_CONFIG=" + config);
  std::vector<std::string> argv_strings = program.argv;
  std::vector<char*> argv = c_strings(argv_strings), envp = c_strings(env);
  std::string exec_error = fmt::format("troupe launch: cannot execute '{}': ", program.argv[0]);

  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    int error = errno;
    close_fds({out[0], out[1], err[0], err[1]});
    return error;
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // The child. Launch is single-threaded, so everything is in a consistent state here.
    // Die with launch, even if it died before the prctl.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(kExecFailed);
    ::setpgid(0, 0);  // the terminal's Ctrl-C goes to launch, which stops tasks in order
    ::dup2(dev_null, STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);  // the pipes' own fds are close-on-exec
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // launch blocks SIGINT, SIGTERM and SIGCHLD
    if (program.search_path) {
      ::execvpe(program.file.c_str(), argv.data(), envp.data());
    } else {
      ::execve(program.file.c_str(), argv.data(), envp.data());
    }
    exec_error += std::strerror(errno);
    exec_error += "\n";
    write_all(STDERR_FILENO, exec_error);
    ::_exit(kExecFailed);
  }
  int error = errno;
  close_fds({out[1], err[1]});
  if (pid < 0) {
    close_fds({out[0], err[0]});
    return error;
  }
  for (int fd : {out[0], err[0]})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  task.pid = pid;
  task.fd[0] = out[0];
  task.fd[1] = err[0];
  return 0;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("exit code {}", WEXITSTATUS(status));
}

enum class Outcome { kRunning, kDone, kFailed, kInterrupted };

// Runs the tasks of one job to its end. Owns the tasks' pids and pipes.
class Launcher {
 public:
  // `signal_fd`: a non-blocking signalfd for SIGINT, SIGTERM and SIGCHLD (blocked).
  Launcher(ClusterSpec cluster, Program program, std::chrono::milliseconds grace, int max_restarts,
           int signal_fd, int dev_null)
      : cluster_(std::move(cluster)),
        program_(std::move(program)),
        grace_(grace),
        max_restarts_(max_restarts),
        signal_fd_(signal_fd),
        dev_null_(dev_null) {
    for (const std::string job : {"ps", "worker"}) {
      if (!cluster_.has_job(job)) continue;
      for (int index : cluster_.task_indices(job).value()) {
        Task& task = tasks_.emplace_back();
        task.job = job;
        task.index = index;
        task.name = fmt::format("/job:{}/replica:0/task:{}", job, index);
        task.prefix = fmt::format("[{}{}] ", job, index);
      }
    }
  }

  // Starts every task and returns launch's exit code once all of them are reaped: 0 when the
  // chief exited 0, 1 when a task failed, 130 on SIGINT/SIGTERM.
  int run() {
    for (Task& task : tasks_) {
      if (!start(task)) break;
    }
    while (outcome_ == Outcome::kRunning ||
           std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.running(); })) {
      poll_once();
    }
    // What the tasks (or processes they started, which may keep the pipes) left unread, and the
    // last lines without '\n'.
    for (Task& task : tasks_) {
      for (int stream : {0, 1}) {
        read_output(task, stream, kReadsToDrain);
        if (auto rest = task.lines[stream].take_rest()) emit(task, stream, *rest);
        close_fds({task.fd[stream]});
        task.fd[stream] = -1;
      }
    }
    console_.finish();
    switch (outcome_) {
      case Outcome::kDone:
        console_.print(STDOUT_FILENO, "troupe launch: done\n");
        return 0;
      case Outcome::kInterrupted:
        console_.print(STDERR_FILENO, "troupe launch: interrupted\n");
        return kExitInterrupted;
      default:
        return 1;
    }
  }

 private:
  // Waits for output, a signal or the end of the grace period, and handles what came.
  void poll_once() {
    std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
    std::vector<std::pair<Task*, int>> owners = {{nullptr, 0}};
    for (Task& task : tasks_) {
      for (int stream : {0, 1}) {
        if (task.fd[stream] < 0) continue;
        fds.push_back({task.fd[stream], POLLIN, 0});
        owners.emplace_back(&task, stream);
      }
    }
    int timeout = -1;
    if (outcome_ != Outcome::kRunning && !killed_) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(left.count(), 0));
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) read_output(*owners[i].first, owners[i].second, kReadsPerWakeup);
    }
    if (fds[0].revents != 0) handle_signals();
    if (outcome_ != Outcome::kRunning && !killed_ && Clock::now() >= deadline_) {
      signal_running(SIGKILL);
    }
    console_.redraw();
  }

  void handle_signals() {
    signalfd_siginfo info;
    bool child_exited = false;
    while (::read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
      if (info.ssi_signo == SIGCHLD) {
        child_exited = true;
      } else if (outcome_ == Outcome::kRunning) {
        stop(Outcome::kInterrupted);
      } else {
        signal_running(SIGKILL);  // a second signal cuts the grace period short
      }
    }
    if (child_exited) {
      reap();
      stop_ps_when_alone();
    }
  }

  // Waits for every task that has exited (SIGCHLDs coalesce: check them all).
  void reap() {
    for (Task& task : tasks_) {
      if (!task.running()) continue;
      int status = 0;
      pid_t done = ::waitpid(task.pid, &status, WNOHANG);
      if (done == task.pid) {
        task.reaped = true;
        exited(task, status);
      } else if (done < 0 && errno == ECHILD) {
        // Not ours to wait for any more (cannot happen while SIGCHLD is not ignored): never
        // signal the pid again, and do not wait for a chief that can no longer be seen.
        task.reaped = true;
        if (outcome_ == Outcome::kRunning) {
          console_.print(STDERR_FILENO,
                         fmt::format("troupe launch: task {} was lost\n", task.name));
          stop(Outcome::kFailed);
        }
      }
    }
  }

  // Starts (or restarts) `task`; on failure ends the job and returns false.
  bool start(Task& task) {
    if (int error = spawn(task, program_, tf_config(cluster_, task), dev_null_); error != 0) {
      console_.print(STDERR_FILENO, fmt::format("troupe launch: cannot start task {}: {}\n",
                                                task.name, std::strerror(error)));
      stop(Outcome::kFailed);
      return false;
    }
    console_.print(STDOUT_FILENO,
                   fmt::format("troupe launch: {} is pid {}\n", task.name, task.pid));
    return true;
  }

  void exited(Task& task, int status) {
    // Everything it wrote before exiting is in its pipes: print that before judging the exit.
    for (int stream : {0, 1})
      read_output(task, stream, kReadsToDrain);
    if (outcome_ != Outcome::kRunning) return;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (task.restarts < max_restarts_ &&
          !(WIFEXITED(status) && WEXITSTATUS(status) == kExecFailed)) {
        ++task.restarts;
        console_.print(STDERR_FILENO,
                       fmt::format("troupe launch: task {} failed: {}; restarting it ({} of {})\n",
                                   task.name, describe_exit(status), task.restarts, max_restarts_));
        for (int stream : {0, 1}) {
          if (auto rest = task.lines[stream].take_rest()) emit(task, stream, *rest);
          close_fds({task.fd[stream]});
          task.fd[stream] = -1;
        }
        task.reaped = false;
        start(task);
        return;
      }
      console_.print(STDERR_FILENO, fmt::format("troupe launch: task {} failed: {}\n", task.name,
                                                describe_exit(status)));
      stop(Outcome::kFailed);
    } else if (task.is_chief()) {
      stop(Outcome::kDone);
    }
  }

  // Ends the job: SIGTERM to every running task but the ps tasks now, to the ps tasks once the
  // others have exited (stop_ps_when_alone), SIGKILL to all after the grace period.
  void stop(Outcome outcome) {
    outcome_ = outcome;
    deadline_ = Clock::now() + grace_;
    ps_stop_pending_ = true;
    signal_running(SIGTERM, /*ps=*/false);
    stop_ps_when_alone();
  }

  void stop_ps_when_alone() {
    if (!ps_stop_pending_) return;
    for (const Task& task : tasks_) {
      if (task.running() && task.job != "ps") return;
    }
    ps_stop_pending_ = false;
    signal_running(SIGTERM, /*ps=*/true);
  }

  // Sends `signal` to the running tasks of job ps (`ps`), or of the other jobs (`!ps`).
  void signal_running(int signal, bool ps) {
    for (const Task& task : tasks_) {
      if (task.running() && (task.job == "ps") == ps) ::kill(task.pid, signal);
    }
  }

  void signal_running(int signal) {
    signal_running(signal, /*ps=*/false);
    signal_running(signal, /*ps=*/true);
    if (signal == SIGKILL) killed_ = true;
  }

  // Reads what is available on one of the task's pipes (at most `max_reads` reads) and prints
  // the lines it completes; on end of file, also the last unterminated line.
  void read_output(Task& task, int stream, int max_reads) {
    char buffer[64 * 1024];
    for (int reads = 0; task.fd[stream] >= 0 && reads < max_reads; ++reads) {
      ssize_t n = ::read(task.fd[stream], buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        if (auto rest = task.lines[stream].take_rest()) emit(task, stream, *rest);
        close_fds({task.fd[stream]});
        task.fd[stream] = -1;
        return;
      }
      for (const std::string& line :
           task.lines[stream].append(std::string_view(buffer, static_cast<size_t>(n)))) {
        emit(task, stream, line);
      }
    }
  }

  void emit(const Task& task, int stream, const std::string& line) {
    if (auto progress = parse_progress(line)) {
      console_.progress(*progress);
      return;
    }
    console_.print(stream == 0 ? STDOUT_FILENO : STDERR_FILENO, task.prefix + line + "\n");
  }

  ClusterSpec cluster_;
  Program program_;
  std::chrono::milliseconds grace_;
  int max_restarts_;  // per task
  int signal_fd_;
  int dev_null_;
  std::vector<Task> tasks_;  // ps tasks, then workers; never resized after construction
  Console console_;
  Outcome outcome_ = Outcome::kRunning;
  Clock::time_point deadline_;    // end of the grace period, once stopping
  bool killed_ = false;           // SIGKILL sent to what was still running
  bool ps_stop_pending_ = false;  // stopping: the ps tasks get SIGTERM once they are alone
};

int usage_error(const std::string& message) {
  std::cerr << "troupe launch: " << message << "\n";
  return 2;
}

// Puts the tasks' TLS settings in launch's environment, which they inherit; the throwaway
// credentials made for them, if any, land in `made` and live as long as it.
Status set_up_task_tls(bool insecure, std::unique_ptr<ThrowawayCredentials>& made) {
  TlsOptions given = TlsOptions::from_environment();
  if (insecure) {
    if (given.enabled()) {
      return errors::InvalidArgument(
          "--insecure, but TROUPE_TLS_CERT/KEY/CA are set: unset them or drop --insecure");
    }
    ::setenv("TROUPE_INSECURE", "1", 1);
    std::cout << "troupe launch: --insecure: the tasks run without TLS" << std::endl;
    return Status::OK();
  }
  ::unsetenv("TROUPE_INSECURE");
  if (given.enabled()) {
    TROUPE_RETURN_IF_ERROR(given.validate(TlsOptions::environment_names()));
    std::cout << "troupe launch: TLS with the credentials in TROUPE_TLS_CERT/KEY/CA" << std::endl;
    return Status::OK();
  }
  TROUPE_ASSIGN_OR_RETURN(made, ThrowawayCredentials::create());
  TlsOptions tls = made->tls();
  ::setenv("TROUPE_TLS_CERT", tls.certificate_file.c_str(), 1);
  ::setenv("TROUPE_TLS_KEY", tls.key_file.c_str(), 1);
  ::setenv("TROUPE_TLS_CA", tls.ca_file.c_str(), 1);
  std::cout << "troupe launch: TLS with throwaway credentials in " << made->directory()
            << " (removed when the job ends)" << std::endl;
  return Status::OK();
}

// The intra-op threads each task takes by default (ServerDef::intra_op_threads): the tasks all
// run on this host, so they share its cores.
void print_threads_per_task(const ClusterSpec& cluster) {
  std::optional<ServerDef> def;
  for (const auto& [job, job_tasks] : cluster.as_map()) {
    if (job_tasks.empty()) continue;
    auto created = ServerDef::create(cluster, job, job_tasks.begin()->first);
    if (created.ok()) def = std::move(created).value();
    break;
  }
  if (!def) return;
  const int tasks = def->tasks_on_this_host(), cores = Device::available_cores(),
            threads = def->intra_op_threads(cores);
  std::cout << "troupe launch: " << tasks << " task" << (tasks == 1 ? "" : "s")
            << " on this host's " << cores << " core" << (cores == 1 ? "" : "s") << ": " << threads
            << " intra-op thread" << (threads == 1 ? "" : "s")
            << " each unless a task sets --intra_op_threads" << std::endl;
}

}  // namespace

static int run_launch(const Args& args) {
  FlagSet flags(*find_command_help("launch"));
  flags.add_int("ps", 1, "number of ps tasks (>= 0)");
  flags.add_int("workers", 2, "number of worker tasks (>= 1); worker 0 is the chief");
  flags.add_int("grace_ms", 10000, "how long stopped tasks get after SIGTERM, then SIGKILL");
  flags.add_string("host", "127.0.0.1", "the host in every task's address");
  flags.add_int("max_restarts", 0, "how many times a failed task is restarted (each task)");
  flags.add_bool("insecure", insecure_by_environment(),
                 "run the tasks without TLS (default: $TROUPE_INSECURE=1); else they use "
                 "TROUPE_TLS_CERT/KEY/CA, or throwaway credentials made for the job");
  add_log_level_flag(flags);
  flags.add_bool("help", false, "show this help");  // so that --help=false parses; not listed
  auto dash = std::find(args.begin(), args.end(), "--");
  Status parsed = flags.parse(Args(args.begin(), dash));
  if (parsed.ok() && !flags.positional().empty()) {
    parsed = dash == args.end() ? errors::InvalidArgument("missing '--' before the program '{}'",
                                                          flags.positional()[0])
                                : errors::InvalidArgument("unexpected argument '{}' before '--'",
                                                          flags.positional()[0]);
  }
  if (FlagSet::asks_for_help(args)) {
    std::cout << flags.help();
    return 0;
  }
  if (!parsed.ok()) return usage_error(parsed.message());
  if (auto exit_code = apply_log_level_flag(flags, "launch")) return *exit_code;
  if (dash == args.end()) {
    return usage_error("missing '--' and the program to run (troupe launch [flags] -- <program>)");
  }
  Args command(dash + 1, args.end());
  if (command.empty()) return usage_error("missing the program after '--'");
  int64_t num_ps = flags.get_int("ps"), num_workers = flags.get_int("workers");
  if (num_ps < 0 || num_workers < 1 || num_ps + num_workers > kMaxTasks) {
    return usage_error(
        fmt::format("--ps={} --workers={}: expected ps >= 0, workers >= 1 and at most {} tasks",
                    num_ps, num_workers, kMaxTasks));
  }
  int64_t grace_ms = flags.get_int("grace_ms");
  if (grace_ms < 0 || grace_ms > kMaxGraceMs) {
    return usage_error(fmt::format("--grace_ms={} must be in 0..{}", grace_ms, kMaxGraceMs));
  }
  int64_t max_restarts = flags.get_int("max_restarts");
  if (max_restarts < 0 || max_restarts > 1000) {
    return usage_error(fmt::format("--max_restarts={} must be in 0..1000", max_restarts));
  }
  std::string host = flags.get_string("host");
  if (auto checked = parse_host_port(host + ":1"); !checked.ok()) {
    return usage_error(fmt::format("--host='{}' is not a host name or address", host));
  }

  auto cluster = free_port_cluster(
      {{"ps", static_cast<int>(num_ps)}, {"worker", static_cast<int>(num_workers)}}, host);
  if (!cluster.ok()) {
    std::cerr << "troupe launch: " << cluster.status().message() << "\n";
    return 1;
  }
  std::unique_ptr<ThrowawayCredentials> credentials;
  if (Status tls = set_up_task_tls(flags.get_bool("insecure"), credentials); !tls.ok()) {
    std::cerr << "troupe launch: " << tls.to_string() << "\n";
    return tls.code() == Code::kInvalidArgument ? 2 : 1;
  }

  // SIGINT and SIGTERM are blocked from here on (and SIGCHLD below), before any fork; launch
  // reads all three from a signalfd so its one poll loop sees them. Children unblock them.
  StopSignals stop_signals;
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGINT, SIGTERM, SIGCHLD})
    sigaddset(&signals, signal);
  std::signal(SIGCHLD, SIG_DFL);  // an inherited SIG_IGN would reap children behind our back
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  int signal_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (signal_fd < 0 || dev_null < 0) {
    std::cerr << "troupe launch: cannot set up: " << std::strerror(errno) << "\n";
    close_fds({signal_fd, dev_null});
    return 1;
  }
  // The tasks report progress as protocol lines, which become the bar (docs/cli.md).
  ::setenv("TROUPE_PROGRESS_PROTOCOL", "1", 1);
  // The tasks share this host: one health port for all would let only one of them start.
  ::unsetenv("TROUPE_HEALTH_PORT");
  std::cout << "troupe launch: cluster " << cluster->to_json() << std::endl;
  print_threads_per_task(*cluster);
  Launcher launcher(*cluster, resolve_program(command), std::chrono::milliseconds(grace_ms),
                    static_cast<int>(max_restarts), signal_fd, dev_null);
  int exit_code = launcher.run();
  close_fds({signal_fd, dev_null});
  return exit_code;
}

int launch_command(const Args& args) {
  return exit_code_of("launch", [&] { return run_launch(args); });
}

}  // namespace troupe::cli
