// Model variables: creation, records, initialisation, the global step, initial values.
#include "troupe/graph/variables.hpp"

#include <cmath>
#include <random>

#include "troupe/graph/ops/ops.hpp"

namespace troupe {

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
  var.initializer = ops::Assign(scope.colocate_with(var.ref.op()).with_op_name(name + "/Assign"),
                                var.ref, init, {.validate_shape = validate_shape})
                        .op();
  if (!var.initializer.valid()) return {};
  scope.graph().add_variable_record(VariableRecord{var.ref.node()->name(), var.initializer.name(),
                                                   trainable,
                                                   collection == VariableCollection::kLocal});
  return var;
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
