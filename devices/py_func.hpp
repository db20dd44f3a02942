// tf.py_func on the device: the kernels of PyFunc and PyFuncStateless (graph/ops/script_ops.cpp)
// call the handler that an embedding interpreter installs — the Python module does at import —
// with the op's token and inputs. Without a handler (a process with no Python), or where the
// token names no function of the interpreter, the op fails naming the node, as TensorFlow's does
// when a py_func runs outside the process of the program that made it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "troupe/devices/kernel_registry.hpp"
#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// Calls the function registered as `token` with `args`; its results into *results. Its error
// (OutOfRange for Python's StopIteration) is the op's. Called from device threads, one call per
// op run; it must take its interpreter's lock itself.
using PyFuncHandler = std::function<Status(const std::string& token, std::vector<Tensor> args,
                                           std::vector<Tensor>* results)>;

// Installs (or, with nullptr, removes) the process's handler.
void set_py_func_handler(PyFuncHandler handler);

void register_py_func_kernels(KernelRegistry& registry);

}  // namespace troupe
