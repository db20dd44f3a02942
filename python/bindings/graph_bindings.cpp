// troupe._troupe's graph building: Scope, Output, Operation, the ops, gradients, variables,
// optimizers and device functions. The Python layer (troupe/framework.py, troupe/ops.py, ...)
// gives them TensorFlow's names and signatures; here each is a thin call into graph/.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>

#include "bindings.hpp"
#include "python_errors.hpp"
#include "tensor_conversion.hpp"
#include "troupe/graph/device_setter.hpp"
#include "troupe/graph/gradient_registry.hpp"
#include "troupe/graph/gradients.hpp"
#include "troupe/graph/graph_def_codec.hpp"
#include "troupe/graph/learning_rate_decay.hpp"
#include "troupe/graph/node_builder.hpp"
#include "troupe/graph/node_signature.hpp"
#include "troupe/graph/op_registry.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/optimizers.hpp"
#include "troupe/graph/sync_replicas_optimizer.hpp"
#include "troupe/graph/variables.hpp"

namespace py = pybind11;

namespace troupe::python {
namespace {

// The Python error a device function raised while the current builder call ran, if any.
thread_local std::optional<py::error_already_set> device_function_error;

// A device function made in C++ (replica_device_setter), handed to Python as an object.
struct NativeDeviceFunction {
  DeviceFunction function;
  std::string worker_device;
};

// A Python callable as a device function: called as fn(name, op_type, device) -> str.
DeviceFunction python_device_function(py::function fn) {
  return [fn = std::move(fn)](const NodeDef& node) -> std::string {
    // After a Python error the node gets a malformed device, so it fails and is not added;
    // raise_if_failed then raises the Python error.
    constexpr const char* kFailed = "(the device function raised)";
    py::gil_scoped_acquire gil;
    if (device_function_error) return kFailed;
    try {
      py::object device = fn(node.name, node.op, node.device);
      if (device.is_none()) return "";
      if (!py::isinstance<py::str>(device)) {
        throw py::type_error("the device function given to device() returned " +
                             py::repr(device).cast<std::string>() + " for node '" + node.name +
                             "': expected a device string or None");
      }
      return device.cast<std::string>();
    } catch (py::error_already_set& raised) {
      device_function_error.emplace(std::move(raised));
    } catch (py::builtin_exception& raised) {
      raised.set_error();
      device_function_error.emplace();
    }
    return kFailed;
  };
}

template <class T>
T built(const Scope& scope, T result) {
  raise_if_failed(scope);
  return result;
}

std::vector<Output> outputs_of(const std::vector<py::handle>& values, const char* what) {
  std::vector<Output> outputs;
  for (py::handle value : values) {
    if (value.is_none()) {
      outputs.emplace_back();
      continue;
    }
    outputs.push_back(value.cast<Output>());
  }
  return outputs;
}

py::object shape_to_python(const PartialShape& shape) {
  if (!shape.rank_known()) return py::none();
  py::list dims;
  for (int64_t d : shape.dims())
    dims.append(d < 0 ? py::object(py::none()) : py::int_(d));
  return dims;
}

PartialShape shape_from_python(py::handle value) {
  if (value.is_none()) return PartialShape::unknown();
  std::vector<int64_t> dims;
  for (py::handle d : value)
    dims.push_back(d.is_none() ? -1 : d.cast<int64_t>());
  return PartialShape(dims);
}

DataType dtype_from_int(int value) {
  return static_cast<DataType>(value);
}

py::object attr_to_python(const AttrValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, DataType>) {
          return py::int_(static_cast<int>(v));
        } else if constexpr (std::is_same_v<T, PartialShape>) {
          return shape_to_python(v);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return tensor_to_numpy(v);
        } else if constexpr (std::is_same_v<T, std::vector<DataType>>) {
          py::list out;
          for (DataType d : v)
            out.append(static_cast<int>(d));
          return out;
        } else if constexpr (std::is_same_v<T, std::vector<PartialShape>>) {
          py::list out;
          for (const auto& s : v)
            out.append(shape_to_python(s));
          return out;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return py::bytes(v);
        } else {
          return py::cast(v);
        }
      },
      value.storage());
}

// A Python ps_strategy for replica_device_setter: called as
// fn(name, op_type, device, attrs, output_dtypes) -> task. After a Python error it returns -1,
// which fails the node; raise_if_failed then raises the Python error.
PsStrategy python_ps_strategy(py::function fn) {
  return [fn = std::move(fn)](const NodeDef& node) -> int {
    py::gil_scoped_acquire gil;
    if (device_function_error) return -1;
    try {
      py::dict attrs;
      for (const auto& [name, value] : node.attrs)
        attrs[py::str(name)] = attr_to_python(value);
      py::list output_dtypes;
      if (const OpDef* op = OpRegistry::global().find(node.op)) {
        for (DataType dtype : node_signature(*op, node).output_types)
          output_dtypes.append(static_cast<int>(dtype));
      }
      py::object task = fn(node.name, node.op, node.device, attrs, output_dtypes);
      if (!py::hasattr(task, "__index__")) {
        throw py::type_error("ps_strategy returned " + py::repr(task).cast<std::string>() +
                             " for node '" + node.name + "': expected a task index (an int)");
      }
      return task.attr("__index__")().cast<int>();
    } catch (py::error_already_set& raised) {
      device_function_error.emplace(std::move(raised));
    } catch (py::builtin_exception& raised) {
      raised.set_error();
      device_function_error.emplace();
    }
    return -1;
  };
}

// `value` as an attribute of kind `type` (what the op's definition declares), or a TypeError
// naming the op and the attribute.
AttrValue attr_from_python(py::handle value, AttrType type, const std::string& op,
                           const std::string& name) {
  try {
    switch (type) {
      case AttrType::kInt:
        return value.cast<int64_t>();
      case AttrType::kFloat:
        return value.cast<float>();
      case AttrType::kBool:
        return value.cast<bool>();
      case AttrType::kString:
        return value.cast<std::string>();
      case AttrType::kType:
        return dtype_from_int(value.cast<int>());
      case AttrType::kShape:
        return shape_from_python(value);
      case AttrType::kTensor:
        return tensor_from_numpy(py::array::ensure(value), "attribute");
      case AttrType::kListInt:
        return value.cast<std::vector<int64_t>>();
      case AttrType::kListFloat:
        return value.cast<std::vector<float>>();
      case AttrType::kListBool:
        return value.cast<std::vector<bool>>();
      case AttrType::kListString:
        return value.cast<std::vector<std::string>>();
      case AttrType::kListType: {
        std::vector<DataType> types;
        for (int t : value.cast<std::vector<int>>())
          types.push_back(dtype_from_int(t));
        return types;
      }
      case AttrType::kListShape: {
        std::vector<PartialShape> shapes;
        for (py::handle s : value)
          shapes.push_back(shape_from_python(s));
        return shapes;
      }
      case AttrType::kNone:
        break;
    }
  } catch (const py::cast_error&) {
  }
  throw py::type_error("op " + op + ": attribute '" + name + "' expects " +
                       std::string(attr_type_name(type)) + ", got " +
                       py::repr(value).cast<std::string>());
}

// A gradient for Python: None, an Output, or (values, indices, dense_shape) for IndexedSlices
// (python/troupe wraps that in tf.IndexedSlices).
py::object gradient_to_py(const Gradient& g) {
  if (!g.valid()) return py::none();
  if (!g.is_sparse()) return py::cast(g.dense());
  const IndexedSlices& slices = g.slices();
  return py::make_tuple(slices.values, slices.indices, slices.dense_shape);
}

// The reverse: None, an Output, or a (values, indices, dense_shape) tuple.
Gradient gradient_from_py(py::handle g) {
  if (g.is_none()) return Gradient();
  if (py::isinstance<py::tuple>(g)) {
    auto parts = g.cast<std::tuple<Output, Output, Output>>();
    return IndexedSlices{std::get<0>(parts), std::get<1>(parts), std::get<2>(parts)};
  }
  return g.cast<Output>();
}

}  // namespace

Input to_input(py::handle value, const char* what) {
  if (py::isinstance<Output>(value)) return Input(value.cast<Output>());
  if (py::isinstance<Operation>(value)) return Input(value.cast<Operation>());
  if (py::isinstance<py::array>(value)) {
    return Input(tensor_from_numpy(py::reinterpret_borrow<py::array>(value), what));
  }
  throw py::type_error(std::string(what) + ": expected a Tensor or a numpy array, got " +
                       py::repr(value).cast<std::string>());
}

void raise_if_failed(const Scope& scope) {
  if (device_function_error) {
    py::error_already_set raised = std::move(*device_function_error);
    device_function_error.reset();
    (void)scope.take_status();
    if (!raised.value()) {
      throw py::error_already_set();  // set by a builtin exception
    }
    throw raised;
  }
  if (!scope.ok()) raise_status(scope.take_status());
}

void bind_graph(py::module_& m) {
  py::class_<Operation>(m, "Operation")
      .def_property_readonly("name", &Operation::name)
      .def_property_readonly("type", [](const Operation& op) { return op.node()->op_name(); })
      .def_property_readonly("device",
                             [](const Operation& op) { return op.node()->requested_device(); })
      .def_property_readonly("num_outputs", &Operation::num_outputs)
      // Nodes are numbered in the order they were added to their graph.
      .def_property_readonly("id", [](const Operation& op) { return op.node()->id(); })
      .def("output", [](const Operation& op, int i) { return Output(op, i); })
      .def_property_readonly("inputs",
                             [](const Operation& op) {
                               std::vector<Output> inputs;
                               const Graph& g = op.node()->graph();
                               for (const Edge& e : op.node()->inputs()) {
                                 inputs.emplace_back(&g.node(e.node), e.index);
                               }
                               return inputs;
                             })
      .def_property_readonly("control_inputs",
                             [](const Operation& op) {
                               std::vector<Operation> ops;
                               const Graph& g = op.node()->graph();
                               for (int id : op.node()->control_inputs()) {
                                 ops.emplace_back(&g.node(id));
                               }
                               return ops;
                             })
      .def("attr",
           [](const Operation& op, const std::string& name) -> py::object {
             const AttrMap& attrs = op.node()->def().attrs;
             auto it = attrs.find(name);
             if (it == attrs.end()) {
               throw py::value_error("Operation '" + op.name() + "' has no attr named '" + name +
                                     "'.");
             }
             return attr_to_python(it->second);
           })
      .def("attr_names",
           [](const Operation& op) {
             std::vector<std::string> names;
             for (const auto& [name, value] : op.node()->def().attrs)
               names.push_back(name);
             return names;
           })
      .def("__eq__", [](const Operation& a, const Operation& b) { return a.node() == b.node(); })
      .def("__hash__", [](const Operation& op) { return std::hash<const void*>()(op.node()); });

  py::class_<Output>(m, "Output")
      .def_property_readonly("op", &Output::op)
      .def_property_readonly("index", &Output::index)
      .def_property_readonly("dtype", [](const Output& o) { return static_cast<int>(o.dtype()); })
      .def_property_readonly("shape", [](const Output& o) { return shape_to_python(o.shape()); })
      .def_property_readonly("name", &Output::name)
      .def_property_readonly("is_ref",
                             [](const Output& o) { return o.node()->output_is_ref(o.index()); })
      .def("__eq__", [](const Output& a, const Output& b) { return a == b; })
      .def("__hash__", [](const Output& o) {
        return std::hash<const void*>()(o.node()) * 31 + static_cast<size_t>(o.index());
      });

  py::class_<NativeDeviceFunction>(m, "NativeDeviceFunction")
      .def_readonly("worker_device", &NativeDeviceFunction::worker_device);

  py::class_<Scope>(m, "Scope")
      .def_static("new_root", &Scope::new_root)
      .def("sub_scope", &Scope::sub_scope)
      .def("with_op_name", &Scope::with_op_name)
      .def("with_name_prefix", &Scope::with_name_prefix)
      .def("with_device", &Scope::with_device)
      .def("with_python_device_function",
           [](const Scope& s, py::function fn) {
             return s.with_device_function(python_device_function(std::move(fn)));
           })
      .def("with_native_device_function",
           [](const Scope& s, const NativeDeviceFunction& fn) {
             return s.with_device_function(fn.function);
           })
      .def("colocate_with",
           [](const Scope& s, const Operation& op) { return built(s, s.colocate_with(op)); })
      .def("with_control_dependencies", &Scope::with_control_dependencies)
      .def("without_control_dependencies", &Scope::without_control_dependencies)
      .def("root", &Scope::root)
      .def("same_graph", [](const Scope& a, const Scope& b) { return &a.graph() == &b.graph(); })
      .def("graph_owns",
           [](const Scope& s, const Operation& op) { return &op.node()->graph() == &s.graph(); })
      .def("num_nodes", [](const Scope& s) { return s.graph().num_nodes(); })
      .def("node", [](const Scope& s, int id) { return Operation(&s.graph().node(id)); })
      .def("find",
           [](const Scope& s, const std::string& name) -> std::optional<Operation> {
             const Node* node = s.graph().find(name);
             if (node == nullptr) return std::nullopt;
             return Operation(node);
           })
      .def("device", &Scope::device)
      .def_property_readonly("name_prefix", &Scope::name_prefix);

  // Ops. Inputs are Outputs or numpy arrays; dtypes are DataType numbers.
  auto in = [](py::handle v) { return to_input(v, "an op input"); };
  // Any registered op: inputs in its definition's order (a list for a list argument), attrs
  // by name, converted to the kinds its definition declares. The Python layer names the ops.
  m.def("make_op", [in](const Scope& s, const std::string& op_type, const py::list& inputs,
                        const py::dict& attrs) {
    const OpDef* def = s.graph().registry().find(op_type);
    if (def == nullptr) throw py::value_error("unknown op '" + op_type + "'");
    NodeBuilder builder(s, op_type);
    for (py::handle input : inputs) {
      if (py::isinstance<py::list>(input) || py::isinstance<py::tuple>(input)) {
        std::vector<Input> list;
        for (py::handle item : input)
          list.push_back(in(item));
        builder.input_list(list);
      } else {
        builder.input(in(input));
      }
    }
    for (auto [key, value] : attrs) {
      std::string name = key.cast<std::string>();
      const AttrDef* attr = def->find_attr(name);
      if (attr == nullptr) {
        throw py::type_error("op " + op_type + " has no attribute '" + name + "'");
      }
      builder.attr(name, attr_from_python(value, attr->type, op_type, name));
    }
    return built(s, builder.finalize());
  });
  // The scope's graph as graph_def_codec serializes it: a function body (tf.data's map).
  // Tensor.set_shape: narrows the static shape of `output` (ValueError if it conflicts).
  m.def("set_output_shape", [](const Scope& s, const Output& output, py::handle shape) {
    Status status = s.graph().refine_output_shape(output.node()->name(), output.index(),
                                                  shape_from_python(shape));
    if (status.code() == Code::kInvalidArgument) throw py::value_error(status.message());
    if (!status.ok()) raise_status(status);
  });
  m.def("serialize_graph", [](const Scope& s) {
    auto words = serialize_graph_def(s.graph().to_graph_def());
    auto bytes = words.asBytes();
    return py::bytes(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
  });
  m.def("const", [](const Scope& s, const py::array& value) {
    return built(s, ops::Const(s, tensor_from_numpy(value, "constant value")));
  });
  m.def("placeholder", [](const Scope& s, int dtype, py::handle shape) {
    return built(s, ops::Placeholder(s, dtype_from_int(dtype), shape_from_python(shape)));
  });
  m.def("identity",
        [in](const Scope& s, py::handle x) { return built(s, ops::Identity(s, in(x))); });
  m.def("no_op", [](const Scope& s) { return built(s, ops::NoOp(s)); });
  m.def("reshape", [in](const Scope& s, py::handle x, py::handle shape) {
    return built(s, ops::Reshape(s, in(x), in(shape)));
  });
  m.def("shape", [in](const Scope& s, py::handle x, int out_type) {
    return built(s, ops::Shape(s, in(x), dtype_from_int(out_type)));
  });
  m.def("fill", [in](const Scope& s, py::handle dims, py::handle value) {
    return built(s, ops::Fill(s, in(dims), in(value)));
  });
  using Binary = Output (*)(const Scope&, const Input&, const Input&);
  for (auto [name, fn] :
       std::initializer_list<std::pair<const char*, Binary>>{{"add", &ops::Add},
                                                             {"sub", &ops::Sub},
                                                             {"mul", &ops::Mul},
                                                             {"div", &ops::Div},
                                                             {"maximum", &ops::Maximum},
                                                             {"minimum", &ops::Minimum},
                                                             {"equal", &ops::Equal},
                                                             {"not_equal", &ops::NotEqual},
                                                             {"less", &ops::Less},
                                                             {"less_equal", &ops::LessEqual},
                                                             {"greater", &ops::Greater},
                                                             {"greater_equal", &ops::GreaterEqual},
                                                             {"bias_add", &ops::BiasAdd}}) {
    m.def(name, [in, fn = fn](const Scope& s, py::handle x, py::handle y) {
      return built(s, fn(s, in(x), in(y)));
    });
  }
  using Unary = Output (*)(const Scope&, const Input&);
  for (auto [name, fn] :
       std::initializer_list<std::pair<const char*, Unary>>{{"neg", &ops::Neg},
                                                            {"square", &ops::Square},
                                                            {"sqrt", &ops::Sqrt},
                                                            {"exp", &ops::Exp},
                                                            {"log", &ops::Log},
                                                            {"relu", &ops::Relu},
                                                            {"sigmoid", &ops::Sigmoid},
                                                            {"tanh", &ops::Tanh},
                                                            {"softmax", &ops::Softmax}}) {
    m.def(name, [in, fn = fn](const Scope& s, py::handle x) { return built(s, fn(s, in(x))); });
  }
  m.def("matmul", [in](const Scope& s, py::handle a, py::handle b, bool ta, bool tb) {
    return built(s, ops::MatMul(s, in(a), in(b), {ta, tb}));
  });
  using Reduce = Output (*)(const Scope&, const Input&, const Input&, ops::ReduceOptions);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, Reduce>>{
           {"sum", &ops::Sum}, {"mean", &ops::Mean}, {"min", &ops::Min}, {"max", &ops::Max}}) {
    m.def(name, [in, fn = fn](const Scope& s, py::handle x, py::handle axes, bool keep_dims) {
      return built(s, fn(s, in(x), in(axes), {keep_dims}));
    });
  }
  m.def("cast", [in](const Scope& s, py::handle x, int dtype) {
    return built(s, ops::Cast(s, in(x), dtype_from_int(dtype)));
  });
  m.def("argmax", [in](const Scope& s, py::handle x, py::handle axis, int output_type) {
    return built(s, ops::ArgMax(s, in(x), in(axis), dtype_from_int(output_type)));
  });
  m.def("sparse_softmax_cross_entropy_with_logits",
        [in](const Scope& s, py::handle logits, py::handle labels) {
          auto result = ops::SparseSoftmaxCrossEntropyWithLogits(s, in(logits), in(labels));
          return built(s, result.loss);
        });
  m.def("variable", [](const Scope& s, py::handle shape, int dtype) {
    return built(s, ops::Variable(s, shape_from_python(shape), dtype_from_int(dtype)));
  });
  m.def("assign", [in](const Scope& s, py::handle ref, py::handle value, bool validate_shape) {
    return built(s, ops::Assign(s, in(ref), in(value), {validate_shape}));
  });
  m.def("assign_add", [in](const Scope& s, py::handle ref, py::handle value) {
    return built(s, ops::AssignAdd(s, in(ref), in(value)));
  });
  m.def("assign_sub", [in](const Scope& s, py::handle ref, py::handle value) {
    return built(s, ops::AssignSub(s, in(ref), in(value)));
  });
  m.def("is_variable_initialized", [in](const Scope& s, py::handle ref) {
    return built(s, ops::IsVariableInitialized(s, in(ref)));
  });
  m.def("fifo_queue", [](const Scope& s, const std::vector<int>& dtypes, py::handle shapes,
                         int64_t capacity, const std::string& shared_name) {
    ops::FIFOQueueOptions options;
    if (!shapes.is_none()) {
      for (py::handle shape : shapes)
        options.shapes.push_back(shape_from_python(shape));
    }
    options.capacity = capacity;
    options.shared_name = shared_name;
    std::vector<DataType> types;
    for (int d : dtypes)
      types.push_back(dtype_from_int(d));
    return built(s, ops::FIFOQueue(s, types, options));
  });
  m.def("queue_enqueue",
        [in](const Scope& s, py::handle handle, const std::vector<py::handle>& values) {
          std::vector<Input> components;
          for (py::handle v : values)
            components.push_back(in(v));
          return built(s, ops::QueueEnqueue(s, in(handle), components));
        });
  m.def("queue_dequeue", [in](const Scope& s, py::handle handle, const std::vector<int>& dtypes) {
    std::vector<DataType> types;
    for (int d : dtypes)
      types.push_back(dtype_from_int(d));
    return built(s, ops::QueueDequeue(s, in(handle), types));
  });
  m.def("queue_close", [in](const Scope& s, py::handle handle, bool cancel_pending) {
    return built(s, ops::QueueClose(s, in(handle), cancel_pending));
  });
  m.def("queue_size", [in](const Scope& s, py::handle handle) {
    return built(s, ops::QueueSize(s, in(handle)));
  });

  // Automatic differentiation: one Output, (values, indices, dense_shape) or None per x.
  m.def("gradients",
        [](const Scope& s, const std::vector<py::handle>& ys, const std::vector<py::handle>& xs,
           const std::vector<py::handle>& grad_ys, const std::vector<py::handle>& stop_gradients) {
          auto grads = add_gradients_or_slices(s, outputs_of(ys, "ys"), outputs_of(xs, "xs"),
                                               outputs_of(grad_ys, "grad_ys"),
                                               outputs_of(stop_gradients, "stop_gradients"));
          raise_if_failed(s);
          std::vector<py::object> result;
          for (const Gradient& g : check(std::move(grads)))
            result.push_back(gradient_to_py(g));
          return result;
        });
  // Gradients built in Python, which knows what the graph does not hold: the body of a While
  // (tf.while_loop) and the predicate of a tf.cond's Merge (python/troupe/control_flow_ops.py).
  // The registry's entry for `op_type` calls `builder` with the op and its output gradients
  // (None for an integer output), and takes one gradient or None per input. An exception it
  // raises goes back to tf.gradients' caller. Once per op type.
  m.def("set_python_gradient", [](const std::string& op_type, py::function builder) {
    auto* installed = new py::object(std::move(builder));  // kept for the process
    check(GradientRegistry::global().register_gradient(
        op_type,
        [installed](const Scope& scope, const Operation& op,
                    const std::vector<Output>& grad_outputs,
                    std::vector<Output>* grad_inputs) -> Status {
          py::gil_scoped_acquire gil;
          py::list grads;
          for (const Output& g : grad_outputs)
            grads.append(g.valid() ? py::cast(g) : py::none());
          py::object result = (*installed)(op, grads);
          for (py::handle item : result)
            grad_inputs->push_back(item.is_none() ? Output() : item.cast<Output>());
          return scope.status();
        }));
  });
  // tf.convert_to_tensor of IndexedSlices: the dense tensor they stand for.
  m.def("indexed_slices_to_dense",
        [](const Scope& s, const Output& values, const Output& indices, const Output& shape) {
          return built(s, to_dense(s, Gradient(IndexedSlices{values, indices, shape})));
        });

  // Variables.
  m.def("make_variable", [](const Scope& s, const std::string& name, py::handle initial_value,
                            bool trainable, bool local, bool validate_shape) {
    ModelVariable v = make_variable(
        s, name, to_input(initial_value, "initial_value"), trainable,
        local ? VariableCollection::kLocal : VariableCollection::kGlobal, validate_shape);
    raise_if_failed(s);
    return std::pair(v.ref, v.initializer);
  });
  // get_variable's variable whose initializer builds its initial value beside it: `build` is
  // called with the variable's colocated scope and returns the value's Output.
  m.def("make_variable_built_beside",
        [](const Scope& s, const std::string& name, const std::vector<int64_t>& shape, int dtype,
           const py::function& build, bool trainable, bool local) {
          ModelVariable v = make_variable(
              s, name, TensorShape(shape), dtype_from_int(dtype),
              [&](const Scope& beside) { return build(beside).cast<Output>(); }, trainable,
              local ? VariableCollection::kLocal : VariableCollection::kGlobal);
          raise_if_failed(s);
          return std::pair(v.ref, v.initializer);
        });
  // tf.train.init_from_checkpoint for one variable: its new initializer.
  m.def("initialize_from_checkpoint",
        [](const Scope& s, const std::string& variable, const std::string& checkpoint,
           const std::string& tensor_name, const std::string& slice_spec) {
          StatusOr<ModelVariable> v =
              initialize_from_checkpoint(s, variable, checkpoint, tensor_name, slice_spec);
          raise_if_failed(s);
          return v->initializer;
        });
  m.def("set_variable_slice",
        [](const Scope& s, const std::string& variable, const std::string& full_name,
           const std::vector<int64_t>& full_shape, const std::vector<int64_t>& offset) {
          check(s.graph().set_variable_slice(variable, {full_name, full_shape, offset}));
        });
  m.def("variable_records", [](const Scope& s) {
    std::vector<std::tuple<std::string, std::string, bool, bool>> records;
    for (const auto& r : s.graph().variable_records()) {
      records.emplace_back(r.variable, r.initializer, r.trainable, r.local);
    }
    return records;
  });
  m.def("global_variables_initializer",
        [](const Scope& s) { return built(s, global_variables_initializer(s)); });
  m.def("get_or_create_global_step", [](const Scope& s) {
    ModelVariable v = get_or_create_global_step(s);
    raise_if_failed(s);
    return std::pair(v.ref, v.initializer);
  });
  m.def("glorot_uniform", [](const std::vector<int64_t>& shape, uint64_t seed) {
    return tensor_to_numpy(glorot_uniform(TensorShape(shape), seed));
  });

  // Device functions.
  m.def(
      "replica_device_setter",
      [](int ps_tasks, const std::string& ps_device, const std::string& worker_device,
         std::optional<std::map<std::string, std::map<int, std::string>>> cluster,
         std::optional<std::vector<std::string>> ps_ops, std::optional<py::function> ps_strategy) {
        ReplicaDeviceSetterOptions options;
        options.ps_tasks = ps_tasks;
        options.ps_device = ps_device;
        options.worker_device = worker_device;
        if (cluster) options.cluster = check(ClusterSpec::create_sparse(*cluster));
        if (ps_ops) options.ps_ops = std::set<std::string>(ps_ops->begin(), ps_ops->end());
        if (ps_strategy) options.ps_strategy = python_ps_strategy(std::move(*ps_strategy));
        return NativeDeviceFunction{check(replica_device_setter(options)), worker_device};
      });

  // Optimizers: each Python optimizer holds one.
  py::class_<Optimizer, std::shared_ptr<Optimizer>>(m, "Optimizer")
      .def_property_readonly("name", &Optimizer::name)
      .def("compute_gradients",
           [](Optimizer& o, const Scope& s, const Output& loss, const std::vector<Output>& vars) {
             auto grads = o.compute_gradients(s, loss, vars);
             raise_if_failed(s);
             std::vector<std::pair<py::object, Output>> result;
             for (const auto& gv : check(std::move(grads))) {
               result.emplace_back(gradient_to_py(gv.gradient), gv.variable);
             }
             return result;
           })
      .def("apply_gradients",
           [](Optimizer& o, const Scope& s, const std::vector<std::pair<py::handle, Output>>& gvs,
              std::optional<Output> global_step) {
             std::vector<GradientAndVariable> grads;
             for (const auto& [g, v] : gvs) {
               grads.push_back({gradient_from_py(g), v});
             }
             auto op = o.apply_gradients(s, grads, global_step.value_or(Output()));
             raise_if_failed(s);
             return check(std::move(op));
           })
      .def("minimize", [](Optimizer& o, const Scope& s, const Output& loss,
                          std::optional<Output> global_step, const std::vector<Output>& vars) {
        auto op = o.minimize(s, loss, global_step.value_or(Output()), vars);
        raise_if_failed(s);
        return check(std::move(op));
      });
  // A learning rate: a float, or an Output (a scalar tensor the graph computes each step).
  py::class_<Hyperparameter>(m, "Hyperparameter").def(py::init<double>()).def(py::init<Output>());
  py::implicitly_convertible<double, Hyperparameter>();
  py::implicitly_convertible<Output, Hyperparameter>();
  py::class_<GradientDescentOptimizer, Optimizer, std::shared_ptr<GradientDescentOptimizer>>(
      m, "GradientDescentOptimizer")
      .def(py::init<Hyperparameter>());
  py::class_<MomentumOptimizer, Optimizer, std::shared_ptr<MomentumOptimizer>>(m,
                                                                               "MomentumOptimizer")
      .def(py::init<Hyperparameter, Hyperparameter, bool>());
  py::class_<AdagradOptimizer, Optimizer, std::shared_ptr<AdagradOptimizer>>(m, "AdagradOptimizer")
      .def(py::init<Hyperparameter, double>());
  py::class_<AdamOptimizer, Optimizer, std::shared_ptr<AdamOptimizer>>(m, "AdamOptimizer")
      .def(py::init<Hyperparameter, double, double, double>())
      .def("set_lazy", &AdamOptimizer::set_lazy);
  py::class_<RMSPropOptimizer, Optimizer, std::shared_ptr<RMSPropOptimizer>>(m, "RMSPropOptimizer")
      .def(py::init(
          [](Hyperparameter lr, double decay, double momentum, double epsilon, bool centered) {
            return std::make_shared<RMSPropOptimizer>(
                std::move(lr), RMSPropOptimizer::Options{decay, momentum, epsilon, centered});
          }));
  py::class_<AdadeltaOptimizer, Optimizer, std::shared_ptr<AdadeltaOptimizer>>(m,
                                                                               "AdadeltaOptimizer")
      .def(py::init<Hyperparameter, double, double>());
  py::class_<FtrlOptimizer, Optimizer, std::shared_ptr<FtrlOptimizer>>(m, "FtrlOptimizer")
      .def(py::init([](Hyperparameter lr, double power, double initial, double l1, double l2,
                       double shrinkage) {
        return std::make_shared<FtrlOptimizer>(
            std::move(lr), FtrlOptimizer::Options{power, initial, l1, l2, shrinkage});
      }));
  py::class_<ProximalGradientDescentOptimizer, Optimizer,
             std::shared_ptr<ProximalGradientDescentOptimizer>>(m,
                                                                "ProximalGradientDescentOptimizer")
      .def(py::init<Hyperparameter, double, double>());
  py::class_<ProximalAdagradOptimizer, Optimizer, std::shared_ptr<ProximalAdagradOptimizer>>(
      m, "ProximalAdagradOptimizer")
      .def(py::init<Hyperparameter, double, double, double>());

  // Learning-rate schedules (graph/learning_rate_decay.hpp).
  using Decay = StatusOr<Output> (*)(const Scope&, const Hyperparameter&, const Output&, double,
                                     double, bool);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, Decay>>{
           {"exponential_decay", &exponential_decay},
           {"natural_exp_decay", &natural_exp_decay},
           {"inverse_time_decay", &inverse_time_decay}}) {
    m.def(name, [fn = fn](const Scope& s, Hyperparameter lr, const Output& step, double steps,
                          double rate, bool staircase) {
      auto out = fn(s, lr, step, steps, rate, staircase);
      raise_if_failed(s);
      return check(std::move(out));
    });
  }
  m.def("polynomial_decay", [](const Scope& s, Hyperparameter lr, const Output& step, double steps,
                               double end, double power, bool cycle) {
    auto out = polynomial_decay(s, lr, step, steps, {end, power, cycle});
    raise_if_failed(s);
    return check(std::move(out));
  });
  m.def("cosine_decay",
        [](const Scope& s, Hyperparameter lr, const Output& step, double steps, double alpha) {
          auto out = cosine_decay(s, lr, step, steps, alpha);
          raise_if_failed(s);
          return check(std::move(out));
        });
  m.def("piecewise_constant",
        [](const Scope& s, const Output& x, const std::vector<double>& boundaries,
           const std::vector<double>& values) {
          auto out = piecewise_constant(s, x, boundaries, values);
          raise_if_failed(s);
          return check(std::move(out));
        });

  py::class_<SyncReplicasOptimizer, std::shared_ptr<SyncReplicasOptimizer>>(m,
                                                                            "SyncReplicasOptimizer")
      .def(py::init<std::shared_ptr<Optimizer>, int, int>())
      .def("minimize",
           [](SyncReplicasOptimizer& o, const Scope& s, const Output& loss,
              const std::string& global_step_name, const std::string& worker_device) {
             ModelVariable step = check(find_variable(s.graph(), global_step_name));
             Status built_ops = o.minimize(s, loss, step, worker_device);
             raise_if_failed(s);
             check(built_ops);
             return o.train_op();
           })
      .def("apply_gradients",
           [](SyncReplicasOptimizer& o, const Scope& s,
              const std::vector<std::pair<py::handle, Output>>& gvs,
              const std::string& global_step_name, const std::string& worker_device) {
             ModelVariable step = check(find_variable(s.graph(), global_step_name));
             std::vector<GradientAndVariable> grads;
             for (const auto& [g, v] : gvs) {
               grads.push_back({gradient_from_py(g), v});
             }
             Status built_ops = o.apply_gradients(s, grads, step, worker_device);
             raise_if_failed(s);
             check(built_ops);
             return o.train_op();
           })
      .def("init_tokens",
           [](const SyncReplicasOptimizer& o, const Scope& s, int count) {
             auto op = o.init_tokens(s, count);
             raise_if_failed(s);
             return check(std::move(op));
           })
      .def_property_readonly("chief_update", &SyncReplicasOptimizer::chief_update)
      .def_property_readonly("local_step_init", &SyncReplicasOptimizer::local_step_init)
      .def_property_readonly("local_step", &SyncReplicasOptimizer::local_step)
      .def_property_readonly("token_queue", &SyncReplicasOptimizer::token_queue)
      .def_property_readonly("replicas_to_aggregate", &SyncReplicasOptimizer::replicas_to_aggregate)
      .def_property_readonly("total_num_replicas", &SyncReplicasOptimizer::total_num_replicas);
}

}  // namespace troupe::python
