// Status -> troupe.errors exceptions (python_errors.hpp).
#include "python_errors.hpp"

namespace py = pybind11;

namespace troupe::python {

void raise_status(const Status& status) {
  py::object make = py::module_::import("troupe.errors").attr("_error_from_code");
  py::object error = make(static_cast<int>(status.code()), status.message());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

}  // namespace troupe::python
