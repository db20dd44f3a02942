// troupe._troupe's MonitoredTrainingSession, and hooks written in Python.
//
// A Python hook is an object with the methods _begin(), _after_create_session(session),
// _before_run(session) -> ([Output] fetches, [(Output, array)] feeds, [Operation] targets,
// (trace level, timeout in ms, partition graphs) of its options), _after_run(values, session,
// serialized RunMetadata or None) -> bool (stop requested) and _end(session), each session lent for
// the call (troupe/train/hooks.py adapts tf.train.SessionRunHook subclasses to them). The session
// runs its steps without the GIL; each hook call takes it. An exception a hook raises ends
// training: the session's call fails, and the binding raises that exception.
#include <pybind11/stl.h>

#include <mutex>
#include <stop_token>

#include "bindings.hpp"
#include "blocking_call.hpp"
#include "python_errors.hpp"
#include "session_handle.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/sync_replicas_hook.hpp"

namespace py = pybind11;

namespace troupe::python {
namespace {

// The first exception a Python hook of one session raised.
struct HookError {
  std::mutex mutex;
  std::optional<py::error_already_set> error;

  // Raises it, if any (the GIL held).
  void raise_pending() {
    std::optional<py::error_already_set> pending;
    {
      std::lock_guard lock(mutex);
      pending.swap(error);
    }
    if (pending) throw std::move(*pending);
  }
};

// Runs body with the GIL; a Python exception it raises is kept in `sink` (the first one
// wins) and becomes an Unknown status.
template <class Body>
Status call_python(HookError& sink, const char* what, Body body) {
  py::gil_scoped_acquire gil;
  try {
    body();
    return Status::OK();
  } catch (py::error_already_set& raised) {
    std::string message = raised.what();
    std::lock_guard lock(sink.mutex);
    if (!sink.error) sink.error.emplace(std::move(raised));
    return errors::Unknown("{} raised: {}", what, message);
  } catch (const std::exception& raised) {
    return errors::Internal("{} failed: {}", what, raised.what());
  }
}

// Calls body(handle) with `session` lent as a SessionHandle, cut off afterwards (the GIL held).
template <class Body>
void with_lent(Session& session, Body body) {
  py::object handle = py::cast(SessionHandle{nullptr, &session});
  try {
    body(handle);
  } catch (...) {
    handle.cast<SessionHandle&>().session = nullptr;
    throw;
  }
  handle.cast<SessionHandle&>().session = nullptr;
}

class PythonHook : public SessionRunHook {
 public:
  PythonHook(py::object hook, std::shared_ptr<HookError> errors)
      : hook_(std::move(hook)), errors_(std::move(errors)) {}

  ~PythonHook() override {
    py::gil_scoped_acquire gil;
    hook_ = py::object();
  }

  Status begin(const Scope& scope) override {
    return call([&] { hook_.attr("_begin")(); });
  }

  Status after_create_session(Session& session) override {
    return lend("_after_create_session", session);
  }

  std::vector<Output> before_run(RunContext& context) override {
    std::vector<Output> fetches;
    Status s = call([&] {
      with_lent(context.session(), [&](py::object handle) {
        py::tuple args = hook_.attr("_before_run")(handle);
        fetches = args[0].cast<std::vector<Output>>();
        // (trace level, timeout in ms, partition graphs) of the hook's SessionRunArgs.options.
        auto [trace_level, timeout_ms, graphs] = args[3].cast<std::tuple<int, int64_t, bool>>();
        context.merge_options(
            RunOptions{timeout_ms, 0, trace_level_from_python(trace_level), graphs});
        for (auto& [output, value] :
             feeds_from_python(args[1].cast<std::vector<std::pair<Output, py::array>>>())) {
          context.add_feed(output, std::move(value));
        }
        for (const Operation& target : args[2].cast<std::vector<Operation>>())
          context.add_target(target);
      });
    });
    // A hook that raised fails the step before it runs: an invalid fetch is InvalidArgument
    // at once, and the binding then raises the hook's exception.
    if (!s.ok()) return {Output()};
    return fetches;
  }

  Status after_run(RunContext& context, const std::vector<Tensor>& values) override {
    bool stop = false;
    Status s = call([&] {
      py::list arrays = fetches_to_python(values);
      with_lent(context.session(), [&](py::object handle) {
        py::object metadata = run_metadata_to_python(context.run_options(), context.run_metadata());
        stop = hook_.attr("_after_run")(arrays, handle, metadata).cast<bool>();
      });
    });
    if (stop) context.request_stop();
    return s;
  }

  Status end(Session& session) override { return lend("_end", session); }

 private:
  template <class Body>
  Status call(Body body) {
    return call_python(*errors_, "a Python hook", body);
  }

  Status lend(const char* method, Session& session) {
    return call(
        [&] { with_lent(session, [&](py::object handle) { hook_.attr(method)(handle); }); });
  }

  py::object hook_;
  std::shared_ptr<HookError> errors_;
};

// A SyncReplicasHook that keeps its optimizer alive.
class OwningSyncReplicasHook : public SyncReplicasHook {
 public:
  OwningSyncReplicasHook(std::shared_ptr<SyncReplicasOptimizer> optimizer, bool is_chief,
                         std::string master, std::optional<Operation> init_tokens,
                         std::optional<SessionConfig> config)
      : SyncReplicasHook(*optimizer, is_chief, std::move(master), init_tokens.value_or(Operation()),
                         std::move(config)),
        optimizer_(std::move(optimizer)) {}

 private:
  std::shared_ptr<SyncReplicasOptimizer> optimizer_;
};

// A Python callable the C++ side may outlive the GIL with: released with the GIL held.
struct PythonCallable {
  py::object function;
  ~PythonCallable() {
    py::gil_scoped_acquire gil;
    function = py::object();
  }
};

// Scaffold::init_fn from a Python callable f(session) (troupe/train/monitored_session.py adapts
// TensorFlow's init_fn(scaffold, session) to it).
std::function<Status(Session&)> init_fn_from_python(py::object function,
                                                    std::shared_ptr<HookError> sink) {
  if (function.is_none()) return {};
  auto callable = std::make_shared<PythonCallable>();
  callable->function = std::move(function);
  return [callable, sink](Session& session) {
    return call_python(*sink, "the scaffold's init_fn", [&] {
      with_lent(session, [&](py::object handle) { callable->function(handle); });
    });
  };
}

struct MonitoredSession {
  std::unique_ptr<MonitoredTrainingSession> session;
  std::shared_ptr<HookError> errors = std::make_shared<HookError>();

  MonitoredTrainingSession& get() const {
    if (!session) raise_status(errors::FailedPrecondition("the monitored session is closed"));
    return *session;
  }
};

}  // namespace

void bind_training(py::module_& m) {
  py::class_<SessionRunHook, std::shared_ptr<SessionRunHook>>(m, "SessionRunHook");

  py::class_<MonitoredSession>(m, "MonitoredTrainingSession")
      .def_static(
          "create",
          [](const Scope& scope, const std::string& master, bool is_chief,
             const std::string& checkpoint_dir, int64_t save_checkpoint_steps,
             double save_checkpoint_secs, int64_t save_summaries_steps,
             std::optional<SessionConfig> config, int64_t ready_timeout_ms,
             const std::vector<py::object>& python_hooks,
             const std::vector<std::shared_ptr<SessionRunHook>>& native_hooks,
             const std::string& summary_dir, double save_summaries_secs,
             std::optional<Output> summary_op, std::optional<Operation> init_op,
             const std::vector<std::pair<Output, py::array>>& init_feeds, py::object init_fn,
             std::optional<Output> ready_op, std::optional<Output> ready_for_local_init_op,
             std::optional<Operation> local_init_op, std::shared_ptr<Saver> saver,
             const std::string& checkpoint_filename_with_path, int64_t recovery_timeout_ms) {
            MonitoredSession result;
            MonitoredTrainingSessionOptions options;
            options.master = master;
            options.is_chief = is_chief;
            options.checkpoint_dir = checkpoint_dir;
            options.save_checkpoint_steps = save_checkpoint_steps;
            options.save_checkpoint_secs = save_checkpoint_secs;
            options.save_summaries_steps = save_summaries_steps;
            options.config = config;
            options.ready_timeout_ms = ready_timeout_ms;
            options.summary_dir = summary_dir;
            options.save_summaries_secs = save_summaries_secs;
            options.summary_op = std::move(summary_op);
            options.checkpoint_filename_with_path = checkpoint_filename_with_path;
            options.recovery_timeout_ms = recovery_timeout_ms;
            Scaffold& scaffold = options.scaffold;
            scaffold.init_op = init_op;
            scaffold.init_feed_dict = feeds_from_python(init_feeds);
            scaffold.init_fn = init_fn_from_python(std::move(init_fn), result.errors);
            scaffold.ready_op = std::move(ready_op);
            scaffold.ready_for_local_init_op = std::move(ready_for_local_init_op);
            scaffold.local_init_op = local_init_op;
            scaffold.saver = std::move(saver);
            for (const auto& hook : native_hooks)
              options.hooks.push_back(hook);
            for (const py::object& hook : python_hooks) {
              options.hooks.push_back(std::make_shared<PythonHook>(hook, result.errors));
            }
            // Ctrl-C ends a non-chief's wait for the chief; the other phases end by their
            // own deadlines.
            std::stop_source stop;
            options.stop = stop.get_token();
            StatusOr<std::unique_ptr<MonitoredTrainingSession>> created = Status::OK();
            call_interruptibly(
                [&] { created = MonitoredTrainingSession::create(scope, std::move(options)); },
                [&] { stop.request_stop(); });
            result.errors->raise_pending();
            raise_if_failed(scope);
            result.session = check(std::move(created));
            return result;
          })
      // -> (values, serialized RunMetadata or None): the caller's options merged with the hooks'
      // (RunContext::merge_options) decide whether the step is traced.
      .def(
          "run",
          [](const MonitoredSession& self, const std::vector<std::pair<Output, py::array>>& feeds,
             const std::vector<Output>& fetches, const std::vector<Operation>& targets,
             int64_t timeout_ms, int trace_level, bool output_partition_graphs) {
            MonitoredTrainingSession& session = self.get();
            FeedDict feed_dict = feeds_from_python(feeds);
            RunOptions options{timeout_ms, next_step_tag(), trace_level_from_python(trace_level),
                               output_partition_graphs};
            RunMetadata metadata;
            StatusOr<std::vector<Tensor>> result = Status::OK();
            call_interruptibly(
                [&] { result = session.run(fetches, feed_dict, targets, options, &metadata); },
                [&] { (void)session.cancel_step(options.step_tag); });
            self.errors->raise_pending();
            py::list values = fetches_to_python(check(std::move(result)));
            // The hooks may have asked for more than the caller.
            RunOptions asked = options;
            if (!metadata.step_stats.empty()) asked.trace_level = TraceLevel::kFullTrace;
            if (!metadata.partition_graphs.empty()) asked.output_partition_graphs = true;
            return py::make_tuple(values, run_metadata_to_python(asked, metadata));
          },
          py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms") = 0,
          py::arg("trace_level") = 0, py::arg("output_partition_graphs") = false)
      // A step on the session itself, without hooks or recovery (SingularMonitoredSession's
      // raw_session()).
      .def(
          "run_raw",
          [](const MonitoredSession& self, const std::vector<std::pair<Output, py::array>>& feeds,
             const std::vector<Output>& fetches, const std::vector<Operation>& targets,
             int64_t timeout_ms, int trace_level, bool output_partition_graphs) {
            Session& session = self.get().session();
            FeedDict feed_dict = feeds_from_python(feeds);
            RunOptions options{timeout_ms, next_step_tag(), trace_level_from_python(trace_level),
                               output_partition_graphs};
            RunMetadata metadata;
            StatusOr<std::vector<Tensor>> result = Status::OK();
            call_interruptibly(
                [&] { result = session.run(feed_dict, fetches, targets, options, &metadata); },
                [&] { (void)session.cancel_step(options.step_tag); });
            py::list values = fetches_to_python(check(std::move(result)));
            return py::make_tuple(values, run_metadata_to_python(options, metadata));
          },
          py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms") = 0,
          py::arg("trace_level") = 0, py::arg("output_partition_graphs") = false)
      .def("should_stop", [](const MonitoredSession& self) { return self.get().should_stop(); })
      .def("recoveries", [](const MonitoredSession& self) { return self.get().recoveries(); })
      .def("restored_from", [](const MonitoredSession& self) { return self.get().restored_from(); })
      .def("close", [](MonitoredSession& self, bool run_end_hooks) {
        if (!self.session) return;
        Status closed;
        call_interruptibly([&] { closed = self.session->close(run_end_hooks); }, [] {});
        without_gil([&] { self.session.reset(); });
        self.errors->raise_pending();
        check(closed);
      });

  m.def("sync_replicas_hook", [](std::shared_ptr<SyncReplicasOptimizer> optimizer, bool is_chief,
                                 const std::string& master, std::optional<Operation> init_tokens,
                                 std::optional<SessionConfig> config) {
    return std::shared_ptr<SessionRunHook>(std::make_shared<OwningSyncReplicasHook>(
        std::move(optimizer), is_chief, master, init_tokens, std::move(config)));
  });
}

}  // namespace troupe::python
