// Model variables: creation, records, initialisation, the global step, initial values.
#include "troupe/graph/variables.hpp"

#include <cmath>
#include <random>

#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

// `ref` with an Assign of `init` beside it as its initializer, recorded in the graph.
ModelVariable initialized(const Scope& scope, const std::string& name, Output ref, Output init,
                          bool trainable, VariableCollection collection, bool validate_shape) {
  ModelVariable var;
  var.ref = ref;
  var.initializer = ops::Assign(scope.colocate_with(ref.op()).with_op_name(name + "/Assign"), ref,
                                init, {.validate_shape = validate_shape})
                        .op();
  if (!var.initializer.valid()) return {};
  scope.graph().add_variable_record(VariableRecord{ref.node()->name(), var.initializer.name(),
                                                   trainable,
                                                   collection == VariableCollection::kLocal});
  return var;
}

}  // namespace

ModelVariable make_variable(const Scope& scope, const std::string& name, const Input& initial_value,
                            bool trainable, VariableCollection collection, bool validate_shape) {
  if (!scope.ok()) return {};
  Output init = initial_value.is_value()
                    ? ops::Const(scope.with_op_name(name + "/initial_value"), initial_value)
                    : initial_value.output();
  if (!init.valid()) return {};
  if (validate_shape && !init.shape().is_fully_defined()) {
    scope.update_status(
        errors::InvalidArgument("variable '{}': the initial value's shape {} is not fully known",
                                name, init.shape().to_string()));
    return {};
  }
  ModelVariable var;
  var.ref = ops::Variable(scope.with_op_name(name),
                          validate_shape ? init.shape() : PartialShape::unknown(), init.dtype());
  if (!var.ref.valid()) return {};
  return initialized(scope, name, var.ref, init, trainable, collection, validate_shape);
}

ModelVariable make_variable(const Scope& scope, const std::string& name, const TensorShape& shape,
                            DataType dtype, const InitialValueFn& initial_value, bool trainable,
                            VariableCollection collection) {
  if (!scope.ok()) return {};
  Output ref = ops::Variable(scope.with_op_name(name), PartialShape(shape), dtype);
  if (!ref.valid()) return {};
  Output init = initial_value(scope.on_device_of(ref.op()));
  if (!scope.ok()) return {};
  if (!init.valid()) {
    scope.update_status(errors::InvalidArgument(
        "variable '{}': the initial value function built no output", ref.node()->name()));
    return {};
  }
  if (init.dtype() != dtype || init.shape() != PartialShape(shape)) {
    scope.update_status(errors::InvalidArgument(
        "variable '{}': the initial value is {} {}, expected {} {}", ref.node()->name(),
        dtype_name(init.dtype()), init.shape().to_string(), dtype_name(dtype), shape.to_string()));
    return {};
  }
  return initialized(scope, name, ref, init, trainable, collection, /*validate_shape=*/true);
}

namespace {

std::vector<VariableRecord> variables_if(const Graph& graph, bool local) {
  std::vector<VariableRecord> out;
  for (const VariableRecord& r : graph.variable_records()) {
    if (r.local == local) out.push_back(r);
  }
  return out;
}

Operation initializer_of(const Scope& scope, const std::vector<VariableRecord>& variables,
                         const std::string& name) {
  std::vector<Operation> inits;
  for (const VariableRecord& r : variables) {
    inits.push_back(Operation(scope.graph().find(r.initializer)));
  }
  return ops::NoOp(scope.with_op_name(name).with_control_dependencies(inits));
}

}  // namespace

std::vector<VariableRecord> global_variables(const Graph& graph) {
  return variables_if(graph, /*local=*/false);
}

std::vector<VariableRecord> local_variables(const Graph& graph) {
  return variables_if(graph, /*local=*/true);
}

std::vector<VariableRecord> trainable_variables(const Graph& graph) {
  std::vector<VariableRecord> out;
  for (const VariableRecord& r : graph.variable_records()) {
    if (r.trainable) out.push_back(r);
  }
  return out;
}

StatusOr<ModelVariable> find_variable(const Graph& graph, const std::string& name) {
  for (const VariableRecord& r : graph.variable_records()) {
    if (r.variable != name) continue;
    return ModelVariable{Output(graph.find(r.variable), 0), Operation(graph.find(r.initializer))};
  }
  return errors::NotFound("no model variable named '{}'", name);
}

namespace {

Tensor string_vector(const std::string& value) {
  Tensor t(DataType::kString, TensorShape{1});
  t.data<std::string>()[0] = value;
  return t;
}

StatusOr<ModelVariable> restore_initializer(const Scope& scope, const std::string& variable,
                                            const std::string& checkpoint,
                                            const std::string& tensor_name,
                                            const std::string& slice_spec) {
  TROUPE_ASSIGN_OR_RETURN(ModelVariable var, find_variable(scope.graph(), variable));
  // As TensorFlow: on the variable's task, on its CPU (a GPU variable's value is copied over).
  TROUPE_ASSIGN_OR_RETURN(DeviceName device, DeviceName::parse(var.ref.node()->requested_device()));
  TROUPE_ASSIGN_OR_RETURN(DeviceName cpu, DeviceName::parse("/device:CPU:0"));
  const Scope s = scope.sub_scope("checkpoint_initializer")
                      .with_device(DeviceName::merge_overriding(device, cpu).to_string());
  std::vector<Output> restored = ops::RestoreV2(
      s.with_op_name("RestoreV2"), ops::Const(s.with_op_name("prefix"), Tensor(checkpoint)),
      ops::Const(s.with_op_name("tensor_names"), string_vector(tensor_name)),
      ops::Const(s.with_op_name("shape_and_slices"), string_vector(slice_spec)), {var.ref.dtype()});
  TROUPE_RETURN_IF_ERROR(scope.status());
  const PartialShape& shape = var.ref.shape();
  if (slice_spec.empty() && shape.rank_known()) {  // TensorFlow's restore_op.set_shape
    TROUPE_RETURN_IF_ERROR(scope.graph().refine_output_shape(restored[0].node()->name(), 0, shape));
  }
  Output assign = ops::Assign(s.colocate_with(var.ref.op()).with_op_name("Assign"), var.ref,
                              restored[0], {.validate_shape = shape.is_fully_defined()});
  TROUPE_RETURN_IF_ERROR(scope.status());
  TROUPE_RETURN_IF_ERROR(scope.graph().set_variable_initializer(variable, assign.node()->name()));
  var.initializer = assign.op();
  return var;
}

}  // namespace

StatusOr<ModelVariable> initialize_from_checkpoint(const Scope& scope, const std::string& variable,
                                                   const std::string& checkpoint,
                                                   const std::string& tensor_name,
                                                   const std::string& slice_spec) {
  TROUPE_RETURN_IF_ERROR(scope.status());
  StatusOr<ModelVariable> var =
      restore_initializer(scope, variable, checkpoint, tensor_name, slice_spec);
  if (!var.ok()) scope.update_status(var.status());
  return var;
}

Operation global_variables_initializer(const Scope& scope) {
  return initializer_of(scope, global_variables(scope.graph()), "init");
}

Operation local_variables_initializer(const Scope& scope) {
  return initializer_of(scope, local_variables(scope.graph()), "init_local");
}

ModelVariable get_or_create_global_step(const Scope& scope) {
  for (const VariableRecord& r : global_variables(scope.graph())) {
    if (r.variable == "global_step" || r.variable.ends_with("/global_step")) {
      return *find_variable(scope.graph(), r.variable);
    }
  }
  return make_variable(scope, "global_step", Tensor(int64_t{0}), /*trainable=*/false);
}

Tensor glorot_uniform(const TensorShape& shape, uint64_t seed) {
  Tensor t(DataType::kFloat, shape);
  // As TensorFlow's fans: a convolution's filter [..., in, out] counts its window too.
  const int rank = shape.rank();
  int64_t receptive_field = 1;
  for (int d = 0; d + 2 < rank; ++d)
    receptive_field *= shape.dim(d);
  int64_t fan_in = rank >= 2 ? shape.dim(rank - 2) * receptive_field : shape.num_elements();
  int64_t fan_out = rank >= 1 ? shape.dim(rank - 1) * receptive_field : 1;
  double limit = std::sqrt(6.0 / static_cast<double>(std::max<int64_t>(fan_in + fan_out, 1)));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-limit, limit);
  for (float& v : t.flat<float>())
    v = static_cast<float>(uniform(rng));
  return t;
}

Tensor zeros(DataType dtype, const TensorShape& shape) {
  Tensor t(dtype, shape);
  if (dtype == DataType::kString) return t;
  if (t.total_bytes() > 0) std::memset(t.raw_data(), 0, t.total_bytes());
  return t;
}

}  // namespace troupe
