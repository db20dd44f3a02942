// The parts of troupe._troupe, one function each, called by module.cpp; and the conversions
// they share.
#pragma once

#include <pybind11/pybind11.h>

#include <pybind11/numpy.h>

#include "troupe/actors/session.hpp"
#include "troupe/graph/output.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe::python {

void bind_graph(pybind11::module_& m);      // graph_bindings.cpp: Scope, ops, gradients, ...
void bind_server(pybind11::module_& m);     // server_bindings.cpp: Server
void bind_session(pybind11::module_& m);    // session_bindings.cpp: Session, Saver
void bind_training(pybind11::module_& m);   // training_bindings.cpp: MonitoredTrainingSession
void bind_summaries(pybind11::module_& m);  // summary_bindings.cpp: EventWriter, GraphDef
void bind_script(pybind11::module_& m);     // script_bindings.cpp: tf.py_func's handler

// An op's input from Python: an Output, an Operation (its first output) or a numpy array.
Input to_input(pybind11::handle value, const char* what);

// After a builder call on `scope`: raises the Python error a device function raised, else the
// scope's error (cleared, so the graph stays usable), as troupe.errors exceptions.
void raise_if_failed(const Scope& scope);

}  // namespace troupe::python

namespace troupe::python {

// Keeps the process's shared runtime alive until the process exits (module.cpp): called once a
// server or session exists.
void keep_runtime_alive();

// Shared by the session and monitored-session bindings (session_bindings.cpp).
int64_t next_step_tag();
FeedDict feeds_from_python(const std::vector<std::pair<Output, pybind11::array>>& feeds);
pybind11::list fetches_to_python(std::vector<Tensor> values);
// What a step run with `options` reported, as TensorFlow's serialized RunMetadata (its
// step_stats) for tf.RunMetadata.ParseFromString; None when the step was not traced.
pybind11::object run_metadata_to_python(const RunOptions& options, const RunMetadata& metadata);
// RunOptions::trace_level from TensorFlow's number; ValueError for any other.
TraceLevel trace_level_from_python(int level);

}  // namespace troupe::python
