// call_interruptibly (blocking_call.hpp): one helper thread serves the main thread's calls.
#include "blocking_call.hpp"

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace py = pybind11;

namespace troupe::python {
namespace {

// Runs one job at a time for the main thread. Never destroyed: it may still be blocked in a
// job when the interpreter exits.
class Helper {
 public:
  Helper() : thread_([this] { serve(); }) { thread_.detach(); }

  // Starts `job`; false when a job is running (a call from a signal handler that runs while
  // the main thread waits for its own call).
  bool start(const std::function<void()>* job) {
    std::lock_guard lock(mutex_);
    if (job_ != nullptr) return false;
    job_ = job;
    done_ = false;
    cv_.notify_all();
    return true;
  }

  // Whether the job has finished, waiting at most `timeout` for it.
  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return done_; });
  }

 private:
  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return job_ != nullptr; });
      const std::function<void()>* job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      job_ = nullptr;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool done_ = true;
  std::thread thread_;
};

unsigned long main_thread = 0;

bool in_main_thread() {
  return PyThread_get_thread_ident() == main_thread;
}

}  // namespace

void remember_main_thread() {
  main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

void call_interruptibly(const std::function<void()>& work, const std::function<void()>& cancel) {
  static Helper* helper = new Helper();
  if (!in_main_thread() || !helper->start(&work)) {
    without_gil(work);
    return;
  }
  for (;;) {
    bool done;
    without_gil([&] { done = helper->wait_for(std::chrono::milliseconds(50)); });
    if (done) return;
    if (PyErr_CheckSignals() == 0) continue;
    // A handler raised: cancel, and wait for the work to give up (it uses the caller's state).
    py::error_already_set raised;
    without_gil([&] {
      do {
        cancel();
      } while (!helper->wait_for(std::chrono::milliseconds(100)));
    });
    throw raised;
  }
}

}  // namespace troupe::python
