// Status -> Python: a troupe Status becomes the exception of troupe.errors whose class has its
// code (TensorFlow's tf.errors classes: InvalidArgumentError, NotFoundError, ...).
#pragma once

#include <pybind11/pybind11.h>

#include "troupe/graph/core/status.hpp"

namespace troupe::python {

// Raises the troupe.errors exception for `status` (not OK) as pybind11::error_already_set.
[[noreturn]] void raise_status(const Status& status);

inline void check(const Status& status) {
  if (!status.ok()) raise_status(status);
}

template <class T>
T check(StatusOr<T> result) {
  if (!result.ok()) raise_status(result.status());
  return std::move(result).value();
}

}  // namespace troupe::python
