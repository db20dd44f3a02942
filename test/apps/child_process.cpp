// Child processes for tests: fork/exec with a pipe, poll loops and deadlines.
#include "apps/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace troupe::testing {
namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
            int& read_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    for (const std::string& kv : extra_env)
      putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  read_fd = fds[0];
  return pid;
}

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, int timeout_ms,
                          const std::vector<std::string>& extra_env) {
  ChildProcess child(argv, extra_env);
  child.wait_for(std::string(1, '\0'),
                 timeout_ms);  // reads until the output closes or the deadline
  if (!child.output_closed()) {
    ProcessResult killed = child.stop(SIGKILL, 1000);
    killed.timed_out = true;
    return killed;
  }
  return child.stop(0, timeout_ms);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extra_env) {
  pid_ = spawn(argv, extra_env, fd_);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

void ChildProcess::read_available(int timeout_ms) {
  if (fd_ < 0) return;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return;
  char buffer[4096];
  ssize_t n = read(fd_, buffer, sizeof(buffer));
  if (n <= 0) {
    close(fd_);
    fd_ = -1;
    return;
  }
  out_.append(buffer, n);
}

bool ChildProcess::wait_for(const std::string& needle, int timeout_ms) {
  return wait_for_count(needle, 1, timeout_ms);
}

bool ChildProcess::wait_for_count(const std::string& needle, size_t times, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (count_of(out_, needle) < times) {
    if (fd_ < 0 || ms_left(deadline) == 0) return false;
    read_available(ms_left(deadline));
  }
  return true;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

ProcessResult ChildProcess::stop(int signal, int timeout_ms) {
  ProcessResult result;
  if (pid_ <= 0) return result;
  if (!exited_) kill(pid_, signal);
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  while (!exited_) {
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exited_ = true;
      result.exit_code = exit_code_of(status);
      break;
    }
    if (ms_left(deadline) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      exited_ = true;
      result.timed_out = true;
      break;
    }
    read_available(20);
  }
  while (fd_ >= 0)
    read_available(100);
  result.out = out_;
  return result;
}

}  // namespace troupe::testing
