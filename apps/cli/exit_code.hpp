// exit_code_of: how each `troupe` subcommand turns a failure into an exit code. Library calls
// return Status; a few of the CLI's own helpers still throw StatusError. Nothing escapes a
// subcommand: a program that calls node_command() from its own main gets 1 and one line on
// stderr ("troupe node: NotFound: ..."), never an exception.
#pragma once

#include <exception>
#include <iostream>

#include "troupe/graph/core/status.hpp"

namespace troupe::cli {

template <class Body>
int exit_code_of(const char* command, Body&& body) {
  try {
    return body();
  } catch (const StatusError& e) {
    std::cerr << "troupe " << command << ": " << e.status().to_string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "troupe " << command << ": internal error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace troupe::cli
