// numpy <-> Tensor (tensor_conversion.hpp).
#include "tensor_conversion.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "python_errors.hpp"

namespace py = pybind11;

namespace troupe::python {
namespace {

TensorShape shape_of(const py::array& array) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  return TensorShape(dims);
}

std::string string_element(py::handle item, const char* what) {
  if (py::isinstance<py::bytes>(item)) return item.cast<std::string>();
  if (py::isinstance<py::str>(item)) return item.cast<std::string>();  // UTF-8
  throw py::type_error(std::string(what) + ": a string tensor holds bytes or str, not " +
                       py::str(py::type::of(item)).cast<std::string>());
}

}  // namespace

py::dtype numpy_dtype(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return py::dtype::of<float>();
    case DataType::kDouble:
      return py::dtype::of<double>();
    case DataType::kInt32:
      return py::dtype::of<int32_t>();
    case DataType::kInt64:
      return py::dtype::of<int64_t>();
    case DataType::kBool:
      return py::dtype::of<bool>();
    case DataType::kUint8:
      return py::dtype::of<uint8_t>();
    default:
      return py::dtype("O");
  }
}

Tensor tensor_from_numpy(const py::array& array, const char* what) {
  char kind = array.dtype().kind();
  if (kind == 'O' || kind == 'S' || kind == 'U') {
    Tensor tensor(DataType::kString, shape_of(array));
    auto out = tensor.flat<std::string>();
    py::object flat = array.attr("ravel")();
    size_t i = 0;
    for (py::handle item : flat)
      out[i++] = string_element(item, what);
    return tensor;
  }
  DataType dtype = DataType::kInvalid;
  if (array.dtype().is(py::dtype::of<float>()))
    dtype = DataType::kFloat;
  else if (array.dtype().is(py::dtype::of<double>()))
    dtype = DataType::kDouble;
  else if (array.dtype().is(py::dtype::of<int32_t>()))
    dtype = DataType::kInt32;
  else if (array.dtype().is(py::dtype::of<int64_t>()))
    dtype = DataType::kInt64;
  else if (array.dtype().is(py::dtype::of<bool>()))
    dtype = DataType::kBool;
  else if (array.dtype().is(py::dtype::of<uint8_t>()))
    dtype = DataType::kUint8;
  if (dtype == DataType::kInvalid) {
    throw py::type_error(std::string(what) + ": troupe has no tensors of numpy dtype " +
                         py::str(array.dtype()).cast<std::string>() +
                         " (float32, float64, int32, int64, bool, uint8 and strings)");
  }
  auto contiguous = py::array::ensure(array, py::array::c_style);
  Tensor tensor(dtype, shape_of(contiguous));
  if (tensor.total_bytes() > 0) {
    std::memcpy(tensor.raw_data(), contiguous.data(), tensor.total_bytes());
  }
  return tensor;
}

py::object tensor_to_numpy(Tensor tensor) {
  std::vector<ssize_t> shape(tensor.shape().dims().begin(), tensor.shape().dims().end());
  if (tensor.dtype() == DataType::kString) {
    auto values = tensor.flat<std::string>();
    if (tensor.rank() == 0) return py::bytes(values[0]);
    py::array result(py::dtype("O"), shape);
    auto* out = static_cast<PyObject**>(result.mutable_data());
    for (size_t i = 0; i < values.size(); ++i) {
      out[i] = py::bytes(values[i]).release().ptr();
    }
    return result;
  }
  py::dtype dtype = numpy_dtype(tensor.dtype());
  if (tensor.rank() == 0) {  // a numpy scalar (np.float32, ...), as TensorFlow returns
    py::array scalar(dtype, shape);
    std::memcpy(scalar.mutable_data(), tensor.raw_data(), tensor.total_bytes());
    return scalar.attr("__getitem__")(py::tuple());
  }
  if (tensor.buffer() == nullptr || tensor.buffer().use_count() > 1) {
    py::array copy(dtype, shape);
    if (tensor.total_bytes() > 0) {
      std::memcpy(copy.mutable_data(), tensor.raw_data(), tensor.total_bytes());
    }
    return copy;
  }
  void* data = tensor.raw_data();
  auto* owner = new Tensor(std::move(tensor));
  py::capsule keep(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, data, keep);
}

}  // namespace troupe::python
