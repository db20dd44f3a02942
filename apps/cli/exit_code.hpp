// exit_code_of: the last guard of each `troupe` subcommand. Failures arrive as Status and the
// subcommands print them; what can still escape is an exception of the standard library
// (std::bad_alloc when memory runs out). A program that calls node_command() from its own main
// gets 1 and one line on stderr ("troupe node: internal error: ..."), never an exception.
// It also makes stderr write whole lines (whole_lines.hpp).
#pragma once

#include <exception>
#include <iostream>

#include "troupe/apps/cli/whole_lines.hpp"

namespace troupe::cli {

template <class Body>
int exit_code_of(const char* command, Body&& body) {
  write_stderr_in_whole_lines();  // tasks sharing a terminal never splice their lines
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << "troupe " << command << ": internal error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace troupe::cli
