// numpy arrays <-> troupe Tensors.
//
// To a Tensor: a numpy array of float32, float64, int32, int64 or bool is copied into a new
// tensor; an array of bytes, str (UTF-8) or objects holding them becomes a string tensor.
// The Python layer (troupe/_convert.py) first turns scalars and lists into arrays of the dtype
// the feed or op wants, as TensorFlow does with numpy.asarray.
//
// To numpy: a numeric or bool tensor whose buffer nothing else holds (what a step returns from
// another process, or computes for this fetch) becomes an array over that buffer, which the
// array keeps alive: no copy. A buffer still shared — a variable's value fetched from a device
// of this process, which later steps update in place — is copied, so an array never changes
// after run() returned it. A scalar becomes a numpy scalar (np.float32, ...), and string
// tensors arrays of objects holding `bytes` (a scalar: `bytes`), as TensorFlow returns them.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "troupe/graph/core/tensor.hpp"

namespace troupe::python {

// TypeError naming `what` for an array whose dtype troupe has no tensors of.
Tensor tensor_from_numpy(const pybind11::array& array, const char* what);

// As above; also a scalar or bytes object.
pybind11::object tensor_to_numpy(Tensor tensor);

// numpy's dtype for `dtype` (object for strings).
pybind11::dtype numpy_dtype(DataType dtype);

}  // namespace troupe::python
