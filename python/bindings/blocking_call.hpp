// Blocking calls from Python: the GIL is released while C++ waits, and Ctrl-C interrupts.
//
// Python runs signal handlers in the main thread only, between bytecodes; a main thread
// blocked in C++ would notice Ctrl-C only once the call returned. So a call from the main
// thread runs its work on a helper thread while the main thread waits, checking for signals
// every 50 ms. When a handler raises (Ctrl-C: KeyboardInterrupt), `cancel` is called — again
// every 100 ms until the work has returned (the work's own deadlines bound that) — and the
// exception propagates. Calls from other threads, and calls a signal handler makes while the
// main thread waits for one, run their work on the calling thread with the GIL released.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>

namespace troupe::python {

// Runs `work` with the GIL released, for every call that may block. The GIL is taken back
// by a plain call, not by a destructor as pybind11's gil_scoped_release does: a daemon thread
// (a queue runner's, a Supervisor's) that takes it back while the interpreter finalizes is
// ended by forced unwinding, which ends the process (std::terminate) when it meets a noexcept
// frame such as a destructor, and passes through plain frames (pybind11 lets it through).
template <class Work>
void without_gil(Work&& work) {
  PyThreadState* state = PyEval_SaveThread();
  try {
    work();
  } catch (...) {
    PyEval_RestoreThread(state);
    throw;
  }
  PyEval_RestoreThread(state);
}

// Records the interpreter's main thread (the module does at import).
void remember_main_thread();

// Runs `work` as described above. `work` must not touch Python objects (it may acquire the GIL).
// Throws pybind11::error_already_set when a signal handler raised.
void call_interruptibly(const std::function<void()>& work, const std::function<void()>& cancel);

}  // namespace troupe::python
