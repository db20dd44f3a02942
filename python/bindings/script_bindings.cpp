// tf.py_func's handler (devices/py_func.hpp), installed at import: a PyFunc op of this process
// calls troupe.script_ops._call(token, arrays) under the GIL (the thread that waits in
// Session.run has released it). Python's exceptions become TensorFlow's codes for them:
// StopIteration OutOfRange, ValueError and TypeError InvalidArgument, MemoryError
// ResourceExhausted, NotImplementedError Unimplemented, any other Unknown.
#include "bindings.hpp"
#include "tensor_conversion.hpp"
#include "troupe/devices/py_func.hpp"

namespace py = pybind11;

namespace troupe::python {
namespace {

Status call_python(const std::string& token, std::vector<Tensor> args,
                   std::vector<Tensor>* results) {
  if (!Py_IsInitialized()) return errors::Cancelled("the Python interpreter has exited");
  py::gil_scoped_acquire gil;
  try {
    py::list arrays;
    for (Tensor& t : args)
      arrays.append(tensor_to_numpy(std::move(t)));
    py::object values = py::module_::import("troupe.script_ops").attr("_call")(token, arrays);
    int i = 0;
    for (py::handle value : values) {
      const std::string what = std::to_string(i++) + "-th value returned by " + token;
      results->push_back(tensor_from_numpy(py::array::ensure(value), what.c_str()));
    }
    return Status::OK();
  } catch (py::error_already_set& e) {
    std::string message = e.what();
    if (e.matches(PyExc_StopIteration)) return errors::OutOfRange("{}", message);
    if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) {
      return errors::InvalidArgument("{}", message);
    }
    if (e.matches(PyExc_MemoryError)) return errors::ResourceExhausted("{}", message);
    if (e.matches(PyExc_NotImplementedError)) return errors::Unimplemented("{}", message);
    return errors::Unknown("{}", message);
  }
}

}  // namespace

void bind_script(py::module_& m) {
  (void)m;
  set_py_func_handler(call_python);
}

}  // namespace troupe::python
