// exit_code_of: the last guard of each `troupe` subcommand. Failures arrive as Status and the
// subcommands print them; what can still escape is an exception of the standard library
// (std::bad_alloc when memory runs out). A program that calls node_command() from its own main
// gets 1 and one line on stderr ("troupe node: internal error: ..."), never an exception.
#pragma once

#include <exception>
#include <iostream>

namespace troupe::cli {

template <class Body>
int exit_code_of(const char* command, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << "troupe " << command << ": internal error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace troupe::cli
