// troupe._troupe: the extension module under the `troupe` Python package.
//
// At import it takes over CAF's accept/recv/SSL_* calls for troupe, as a program's definitions
// do (troupe/actors/transport/caf_call_hooks.hpp): the module is loaded with private symbols,
// so CAF's libraries would otherwise call libc's and libssl's.
//
// Process exit: as the troupe programs do (apps/cli/exit_now.hpp), the process ends without
// tearing down its actor system, whose shutdown in CAF 0.17 can wait forever (for a connection
// stuck in a handshake, an actor that never finished). The runtime is kept alive through the
// interpreter's finalization (keep_runtime_alive), and once the interpreter has finished and
// exit() runs, the process flushes its output and ends with the interpreter's exit status.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "bindings.hpp"
#include "blocking_call.hpp"
#include "python_errors.hpp"
#include "troupe/actors/transport/caf_call_hooks.hpp"

namespace py = pybind11;

namespace {

void exit_without_teardown(int status, void*) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace

PYBIND11_MODULE(_troupe, m) {
  m.doc() = "troupe's C++ client; use the `troupe` package, not this module";
  troupe::python::check(troupe::caf_call_hooks::install_in_caf_libraries());
  troupe::python::remember_main_thread();
  on_exit(&exit_without_teardown, nullptr);
  troupe::python::bind_graph(m);
  troupe::python::bind_server(m);
  troupe::python::bind_session(m);
  troupe::python::bind_training(m);
  troupe::python::bind_summaries(m);
  troupe::python::bind_script(m);
}
