// StopSignals: SIGINT and SIGTERM as an event a command waits for. Construct it before
// starting any thread (threads inherit the blocked mask), so the signal reaches wait() and no
// thread is interrupted by it.
#pragma once

#include <csignal>

namespace troupe::cli {

class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  }

  // Blocks until SIGINT or SIGTERM arrives; returns it.
  int wait() {
    int signal = 0;
    sigwait(&signals_, &signal);
    return signal;
  }

 private:
  sigset_t signals_;
};

}  // namespace troupe::cli
