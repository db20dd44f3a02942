// troupe._troupe's summaries: the event file writer TensorFlow's FileWriter writes through,
// a graph as TensorFlow's GraphDef bytes (for FileWriter.add_graph), and TFRecord framing.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "blocking_call.hpp"
#include "python_errors.hpp"
#include "troupe/graph/formats/event_writer.hpp"
#include "troupe/graph/tensorflow_graph_def.hpp"

namespace py = pybind11;

namespace troupe::python {

void bind_summaries(py::module_& m) {
  py::class_<EventWriter, std::shared_ptr<EventWriter>>(m, "EventWriter")
      .def_static(
          "create",
          [](const std::string& log_dir, const std::string& suffix) {
            return std::shared_ptr<EventWriter>(check(EventWriter::create(log_dir, suffix)));
          })
      .def("add_event",
           [](EventWriter& writer, const py::bytes& event) {
             std::string bytes = event;
             Status status;
             without_gil([&] { status = writer.add_event(bytes); });
             check(status);
           })
      .def("flush",
           [](EventWriter& writer) {
             Status status;
             without_gil([&] { status = writer.flush(); });
             check(status);
           })
      .def_property_readonly("path", &EventWriter::path);
  m.def("tfrecord_frame",
        [](const py::bytes& data) { return py::bytes(tfrecord_frame(std::string(data))); });
  m.def("masked_crc32c", [](const py::bytes& data) {
    std::string bytes = data;
    return mask_crc32c(crc32c(bytes.data(), bytes.size()));
  });
  m.def("tensorflow_graph_def",
        [](const Scope& scope) { return py::bytes(encode_tensorflow_graph_def(scope.graph())); });
}

}  // namespace troupe::python
