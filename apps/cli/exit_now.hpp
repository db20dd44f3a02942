// exit_now: ends the process once a command's work is done and its output written, without
// tearing down its actor system. CAF 0.17 waits forever at shutdown for a connection stuck in
// its TLS handshake (a process that connected to a node's port and said nothing), so a
// stopped node would otherwise never exit. Nothing is lost: the server has stopped, and files
// are closed, before this is called.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace troupe::cli {

[[noreturn]] inline void exit_now(int exit_code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(exit_code);
}

}  // namespace troupe::cli
