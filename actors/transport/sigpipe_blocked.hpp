// SigpipeBlocked: while one lives, a write by this thread to a socket its peer has closed fails
// with EPIPE instead of ending the process with SIGPIPE.
//
// OpenSSL writes to its sockets with write(), which cannot be told MSG_NOSIGNAL; a handshake
// with a peer that has just closed the connection (a node's accept gate shutting it down, a
// task going away) would otherwise kill the program, unless it ignores SIGPIPE. The signal is
// blocked for this thread only, one raised meanwhile is taken off the thread's queue, and the
// thread's mask is restored. Not for the data path: two system calls each way.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace troupe {

class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &before_);
  }
  ~SigpipeBlocked() {
    sigset_t waiting;
    if (sigpending(&waiting) == 0 && sigismember(&waiting, SIGPIPE) == 1 &&
        sigismember(&before_, SIGPIPE) == 0) {
      timespec now{0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
  sigset_t before_;
};

}  // namespace troupe
