// troupe._troupe's sessions: Session (create, run, close) and the Saver, plus the fetch
// conversion the monitored session shares (run_and_convert).
#include <pybind11/stl.h>

#include <atomic>

#include "bindings.hpp"
#include "blocking_call.hpp"
#include "python_errors.hpp"
#include "session_handle.hpp"
#include "tensor_conversion.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/devices/step_stats.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/tensorflow_graph_def.hpp"

namespace py = pybind11;

namespace troupe::python {

Session& SessionHandle::get() const {
  if (session == nullptr) {
    raise_status(errors::FailedPrecondition(
        "{}", owned ? "Attempted to use a closed Session."
                    : "this session was lent to a hook for one call, which has returned"));
  }
  return *session;
}

void keep_runtime_alive() {
  static std::shared_ptr<Runtime>* kept = nullptr;  // never released
  if (kept != nullptr) return;
  StatusOr<std::shared_ptr<Runtime>> runtime = Runtime::shared_default();
  if (runtime.ok()) kept = new std::shared_ptr<Runtime>(std::move(runtime).value());
}

int64_t next_step_tag() {
  static std::atomic<int64_t> next{1};
  return next++;
}

FeedDict feeds_from_python(const std::vector<std::pair<Output, py::array>>& feeds) {
  FeedDict result;
  for (const auto& [output, value] : feeds) {
    result.emplace_back(output, tensor_from_numpy(value, ("feed for " + output.name()).c_str()));
  }
  return result;
}

py::list fetches_to_python(std::vector<Tensor> values) {
  py::list result;
  for (Tensor& t : values)
    result.append(tensor_to_numpy(std::move(t)));
  return result;
}

py::object run_metadata_to_python(const RunOptions& options, const RunMetadata& metadata) {
  bool traced = options.trace_level != TraceLevel::kNoTrace;
  if (!traced && !options.output_partition_graphs) return py::none();
  // RunMetadata { StepStats step_stats = 1; repeated GraphDef partition_graphs = 3; }
  // (TensorFlow's config.proto).
  std::string bytes;
  if (traced) proto::put_bytes(bytes, 1, encode_step_stats(metadata.step_stats));
  for (const GraphDef& def : metadata.partition_graphs) {
    // The devices' own graphs: they were built from these nodes, so they build here too.
    proto::put_bytes(bytes, 3, encode_tensorflow_graph_def(check(Graph::create(def))));
  }
  return py::bytes(bytes);
}

TraceLevel trace_level_from_python(int level) {
  if (level < static_cast<int>(TraceLevel::kNoTrace) ||
      level > static_cast<int>(TraceLevel::kFullTrace)) {
    throw py::value_error(
        fmt::format("RunOptions.trace_level: expected NO_TRACE (0), SOFTWARE_TRACE (1), "
                    "HARDWARE_TRACE (2) or FULL_TRACE (3), got {}",
                    level));
  }
  return static_cast<TraceLevel>(level);
}

void bind_session(py::module_& m) {
  py::class_<SessionConfig>(m, "SessionConfig")
      .def(py::init<>())
      .def_readwrite("operation_timeout_ms", &SessionConfig::operation_timeout_ms)
      .def_readwrite("intra_op_threads", &SessionConfig::intra_op_threads)
      .def_readwrite("device_filters", &SessionConfig::device_filters)
      .def_readwrite("isolate_session_state", &SessionConfig::isolate_session_state)
      .def_readwrite("allow_soft_placement", &SessionConfig::allow_soft_placement)
      .def_readwrite("cpu_devices", &SessionConfig::cpu_devices);

  py::class_<SessionHandle>(m, "Session")
      .def_static("create",
                  [](const std::string& target, std::optional<SessionConfig> config) {
                    StatusOr<Session> session = Status::OK();
                    without_gil([&] { session = Session::create(target, config); });
                    auto owned = std::make_shared<Session>(check(std::move(session)));
                    keep_runtime_alive();
                    return SessionHandle{owned, owned.get()};
                  })
      .def(
          "run",
          [](const SessionHandle& handle, const std::vector<std::pair<Output, py::array>>& feeds,
             const std::vector<Output>& fetches, const std::vector<Operation>& targets,
             int64_t timeout_ms, int64_t step_tag, int trace_level, bool output_partition_graphs) {
            Session& session = handle.get();
            // The graph is read under the GIL, which guards it (Python threads build it):
            // its new nodes go to the server first, then the step runs by names without it.
            const Node* any = !fetches.empty()   ? fetches[0].node()
                              : !targets.empty() ? targets[0].node()
                                                 : nullptr;
            if (any == nullptr) raise_status(errors::InvalidArgument("nothing to fetch or run"));
            check(session.send_new_nodes(any->graph(), timeout_ms));
            std::vector<std::pair<std::string, Tensor>> named_feeds;
            for (auto& [output, value] : feeds_from_python(feeds)) {
              named_feeds.emplace_back(output.name(), std::move(value));
            }
            std::vector<std::string> fetch_names, target_names;
            for (const Output& o : fetches)
              fetch_names.push_back(o.name());
            for (const Operation& op : targets)
              target_names.push_back(op.name());
            // A tag of the caller's (a queue runner cancels its runs at a stop), or a new one.
            RunOptions options{timeout_ms, step_tag != 0 ? step_tag : next_step_tag(),
                               trace_level_from_python(trace_level), output_partition_graphs};
            std::vector<Tensor> outputs;
            RunMetadata metadata;
            Status ran;
            call_interruptibly(
                [&] {
                  ran = session.run(named_feeds, fetch_names, target_names, &outputs, options,
                                    &metadata);
                },
                [&] { (void)session.cancel_step(options.step_tag); });
            check(ran);
            return py::make_tuple(fetches_to_python(std::move(outputs)),
                                  run_metadata_to_python(options, metadata));
          },
          py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms"),
          py::arg("step_tag") = 0, py::arg("trace_level") = 0,
          py::arg("output_partition_graphs") = false)
      .def("cancel_step",
           [](const SessionHandle& handle, int64_t step_tag) {
             Session& session = handle.get();
             StatusOr<int> cancelled = Status::OK();
             without_gil([&] { cancelled = session.cancel_step(step_tag); });
             return check(std::move(cancelled));
           })
      .def_property_readonly("closed",
                             [](const SessionHandle& handle) { return handle.session == nullptr; })
      .def("close", [](SessionHandle& handle) {
        if (handle.session == nullptr || !handle.owned) return;
        Status closed;
        without_gil([&] { closed = handle.session->close(); });
        handle.session = nullptr;
        check(closed);
      });

  py::class_<Saver, std::shared_ptr<Saver>>(m, "Saver")
      .def_static(
          "create",
          [](const Scope& scope, int max_to_keep, double keep_every_n_hours,
             const std::vector<std::pair<std::string, std::string>>& var_list, bool sharded) {
            auto saver = Saver::create(scope, {.max_to_keep = max_to_keep,
                                               .keep_checkpoint_every_n_hours = keep_every_n_hours,
                                               .var_list = var_list,
                                               .sharded = sharded});
            raise_if_failed(scope);
            return std::make_shared<Saver>(check(std::move(saver)));
          })
      .def("save",
           [](Saver& saver, const SessionHandle& handle, const std::string& save_path,
              std::optional<int64_t> step) {
             Session& session = handle.get();
             StatusOr<std::string> path = Status::OK();
             without_gil([&] { path = saver.save(session, save_path, step); });
             return check(std::move(path));
           })
      .def_property_readonly("variable_names", &Saver::variable_names)
      .def("restore", [](const Saver& saver, const SessionHandle& handle, const std::string& path) {
        Session& session = handle.get();
        Status restored;
        without_gil([&] { restored = saver.restore(session, path); });
        check(restored);
      });
  m.def("latest_checkpoint", [](const std::string& dir) { return check(latest_checkpoint(dir)); });
  // The data files of a checkpoint (one .npz, or its shards); NotFoundError or DataLossError.
  m.def("checkpoint_data_files",
        [](const std::string& prefix) { return check(checkpoint_data_files(prefix)); });
  m.def("checkpoint_state",
        [](const std::string& dir)
            -> std::optional<std::pair<std::string, std::vector<std::string>>> {
          auto state = check(recover_checkpoint_state(dir));
          if (!state) return std::nullopt;
          return std::make_pair(state->model_checkpoint_path, state->all_model_checkpoint_paths);
        });
}

}  // namespace troupe::python
