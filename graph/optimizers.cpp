// Optimizers: gradients, slot variables and update ops.
#include "troupe/graph/optimizers.hpp"

#include <algorithm>

#include "troupe/graph/gradients.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {

StatusOr<std::vector<GradientAndVariable>> Optimizer::compute_gradients(
    const Scope& scope, const Output& loss, std::vector<Output> variables) const {
  TROUPE_RETURN_IF_ERROR(scope.status());
  if (!loss.valid()) return errors::InvalidArgument("the loss is not a valid output");
  if (variables.empty()) {
    for (const VariableRecord& r : trainable_variables(scope.graph())) {
      variables.emplace_back(scope.graph().find(r.variable), 0);
    }
  }
  if (variables.empty()) {
    return errors::InvalidArgument("{}: there are no trainable variables to optimize", name_);
  }
  TROUPE_ASSIGN_OR_RETURN(std::vector<Gradient> grads,
                          add_gradients_or_slices(scope, {loss}, variables));
  std::vector<GradientAndVariable> out;
  for (size_t i = 0; i < variables.size(); ++i)
    out.push_back({grads[i], variables[i]});
  return out;
}

StatusOr<Operation> Optimizer::apply_gradients(
    const Scope& scope, const std::vector<GradientAndVariable>& grads_and_vars,
    const Output& global_step) {
  std::vector<GradientAndVariable> updates;
  for (const auto& gv : grads_and_vars) {
    if (gv.gradient.valid()) updates.push_back(gv);
  }
  if (updates.empty()) {
    return errors::InvalidArgument(
        "{}: no variable has a gradient (does the loss depend on "
        "them?)",
        name_);
  }
  Scope root = scope.sub_scope(name_);
  TROUPE_RETURN_IF_ERROR(prepare(root, updates));
  std::vector<Operation> applied;
  for (const auto& gv : updates) {
    Scope at_var =
        root.colocate_with(gv.variable.op()).with_op_name("update_" + gv.variable.node()->name());
    const Output update = gv.gradient.is_sparse()
                              ? apply_sparse(at_var, gv.gradient.slices(), gv.variable)
                              : apply_update(at_var, gv.gradient.dense(), Output(), gv.variable);
    applied.push_back(update.op());
  }
  std::vector<Operation> done = finish(root, applied);
  TROUPE_RETURN_IF_ERROR(scope.status());
  Operation step;
  if (global_step.valid()) {
    Scope at_step = root.colocate_with(global_step.op()).with_control_dependencies(done);
    step = ops::AssignAdd(at_step.with_op_name("increment_global_step"), global_step,
                          Tensor(int64_t{1}))
               .op();
  } else {
    step = ops::NoOp(root.with_control_dependencies(done).with_op_name("update"));
  }
  TROUPE_RETURN_IF_ERROR(scope.status());
  return step;
}

StatusOr<Operation> Optimizer::minimize(const Scope& scope, const Output& loss,
                                        const Output& global_step, std::vector<Output> variables) {
  TROUPE_ASSIGN_OR_RETURN(auto grads, compute_gradients(scope, loss, std::move(variables)));
  return apply_gradients(scope, grads, global_step);
}

Output Optimizer::apply_sparse(const Scope& scope, const IndexedSlices& grad, const Output& var) {
  const IndexedSlices distinct = deduplicate(scope, grad);
  return apply_update(scope, distinct.values, distinct.indices, var);
}

Output Optimizer::make_slot(const Scope& scope, const Output& var, const std::string& slot_name,
                            double initial_value) {
  std::string name = var.node()->name() + "/" + slot_name;
  // Slots live with their variable: colocation overrides the scope's device function.
  Scope at_var = scope.root().colocate_with(var.op());
  // Filled where the slot lives when it is initialised: no constant of the variable's size in
  // the graph (a 500,000 x 16 table's would be 31 MiB in every task's graph, and held by the
  // variable's task for the session).
  Scope init = at_var.sub_scope(name + "_initial_value");
  Tensor value(var.dtype(), TensorShape{});
  TROUPE_SWITCH_FLOATING(value.dtype(), T, *value.data<T>() = static_cast<T>(initial_value));
  Output filled = ops::Fill(init, ops::Const(init, Tensor::from_vector(var.shape().dims())),
                            ops::Const(init, value));
  ModelVariable slot = make_variable(at_var, name, filled, /*trainable=*/false);
  // The slot of a shard is a shard of the whole variable's slot, as TensorFlow's slot_creator
  // makes it: checkpoints hold "<whole>/<slot>" whole.
  const VariableRecord* record = scope.graph().variable_record(var.node()->name());
  if (record != nullptr && record->slice) {
    const VariableSlice& whole = *record->slice;
    scope.update_status(scope.graph().set_variable_slice(
        slot.ref.node()->name(),
        {whole.full_name + "/" + slot_name, whole.full_shape, whole.offset}));
  }
  slots_.emplace_back(name, slot.ref);
  return slot.ref;
}

Output Optimizer::slot(const Output& var, const std::string& slot_name) const {
  std::string name = var.node()->name() + "/" + slot_name;
  for (const auto& [n, ref] : slots_) {
    if (n == name) return ref;
  }
  return Output();
}

Output Optimizer::scalar_like(const Scope& scope, const Output& var, const Hyperparameter& value,
                              const std::string& what) {
  return value.as_scalar(scope, var.dtype(), what);
}

Output GradientDescentOptimizer::apply_update(const Scope& scope, const Output& grad,
                                              const Output& indices, const Output& var) {
  const Output lr = scalar_like(scope, var, learning_rate_, "learning_rate");
  if (indices.valid()) return ops::ScatterSub(scope, var, indices, ops::Mul(scope, grad, lr));
  return ops::ApplyGradientDescent(scope, var, lr, grad);
}

// ScatterSub sums duplicate indices itself, as TensorFlow's GradientDescent.
Output GradientDescentOptimizer::apply_sparse(const Scope& scope, const IndexedSlices& grad,
                                              const Output& var) {
  return apply_update(scope, grad.values, grad.indices, var);
}

Status MomentumOptimizer::prepare(const Scope& scope,
                                  const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates)
    make_slot(scope, gv.variable, name(), 0);
  return scope.status();
}

Output MomentumOptimizer::apply_update(const Scope& scope, const Output& grad,
                                       const Output& indices, const Output& var) {
  return ops::ApplyUpdate(
      scope, "Momentum",
      {var, slot(var, name()), scalar_like(scope, var, learning_rate_, "learning_rate"), grad,
       scalar_like(scope, var, momentum_, "momentum")},
      indices, use_nesterov_);
}

Status AdagradOptimizer::prepare(const Scope& scope,
                                 const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates)
    make_slot(scope, gv.variable, name(), initial_accumulator_value_);
  return scope.status();
}

Output AdagradOptimizer::apply_update(const Scope& scope, const Output& grad, const Output& indices,
                                      const Output& var) {
  return ops::ApplyUpdate(
      scope, "Adagrad",
      {var, slot(var, name()), scalar_like(scope, var, learning_rate_, "learning_rate"), grad},
      indices);
}

Status AdamOptimizer::prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Adam", 0);
    make_slot(scope, gv.variable, "Adam_1", 0);
  }
  // The beta powers live with the first variable, as in TensorFlow.
  const Output& first = updates.front().variable;
  Scope at_first = scope.root().colocate_with(first.op());
  auto power = [&](const char* name, double beta) {
    Tensor value =
        first.dtype() == DataType::kDouble ? Tensor(beta) : Tensor(static_cast<float>(beta));
    return make_variable(at_first, name, value, /*trainable=*/false).ref;
  };
  beta1_power_ = power("beta1_power", beta1_);
  beta2_power_ = power("beta2_power", beta2_);
  return scope.status();
}

Output AdamOptimizer::apply_update(const Scope& scope, const Output& grad, const Output& indices,
                                   const Output& var) {
  const Output lr = scalar_like(scope, var, learning_rate_, "learning_rate");
  const Output beta1 = scalar_like(scope, var, beta1_), beta2 = scalar_like(scope, var, beta2_);
  const Output epsilon = scalar_like(scope, var, epsilon_);
  const Output m = slot(var, "Adam"), v = slot(var, "Adam_1");
  if (!indices.valid() || lazy_) {
    return ops::ApplyUpdate(
        scope, "Adam", {var, m, v, beta1_power_, beta2_power_, lr, beta1, beta2, epsilon, grad},
        indices, false);
  }
  // TensorFlow's AdamOptimizer._apply_sparse: the moments decay everywhere, the gradient is
  // added to its rows, and every row of the variable moves.
  const Output one = scalar_like(scope, var, 1.0);
  const Output lr_t =
      ops::Div(scope, ops::Mul(scope, lr, ops::Sqrt(scope, ops::Sub(scope, one, beta2_power_))),
               ops::Sub(scope, one, beta1_power_));
  const Output m_decayed = ops::Assign(scope, m, ops::Mul(scope, m, beta1));
  const Output m_t = ops::ScatterAdd(scope.with_control_dependencies({m_decayed.op()}), m, indices,
                                     ops::Mul(scope, grad, ops::Sub(scope, one, beta1)));
  const Output v_decayed = ops::Assign(scope, v, ops::Mul(scope, v, beta2));
  const Output v_t =
      ops::ScatterAdd(scope.with_control_dependencies({v_decayed.op()}), v, indices,
                      ops::Mul(scope, ops::Square(scope, grad), ops::Sub(scope, one, beta2)));
  return ops::AssignSub(
      scope, var,
      ops::Div(scope, ops::Mul(scope, lr_t, m_t), ops::Add(scope, ops::Sqrt(scope, v_t), epsilon)));
}

std::vector<Operation> AdamOptimizer::finish(const Scope& scope,
                                             const std::vector<Operation>& updates) {
  Scope after = scope.colocate_with(beta1_power_.op()).with_control_dependencies(updates);
  auto advance = [&](const Output& power, double beta) {
    return ops::Assign(after, power, ops::Mul(after, power, scalar_like(after, power, beta))).op();
  };
  return {advance(beta1_power_, beta1_), advance(beta2_power_, beta2_)};
}

Status RMSPropOptimizer::prepare(const Scope& scope,
                                 const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "RMSProp", 1);
    make_slot(scope, gv.variable, "RMSProp_1", 0);
    if (options_.centered) make_slot(scope, gv.variable, "RMSProp_2", 0);
  }
  return scope.status();
}

Output RMSPropOptimizer::apply_update(const Scope& scope, const Output& grad, const Output& indices,
                                      const Output& var) {
  const Output lr = scalar_like(scope, var, learning_rate_, "learning_rate");
  const Output rho = scalar_like(scope, var, options_.decay);
  const Output momentum = scalar_like(scope, var, options_.momentum);
  const Output epsilon = scalar_like(scope, var, options_.epsilon);
  if (options_.centered) {
    return ops::ApplyUpdate(scope, "CenteredRMSProp",
                            {var, slot(var, "RMSProp_2"), slot(var, "RMSProp"),
                             slot(var, "RMSProp_1"), lr, rho, momentum, epsilon, grad},
                            indices);
  }
  return ops::ApplyUpdate(
      scope, "RMSProp",
      {var, slot(var, "RMSProp"), slot(var, "RMSProp_1"), lr, rho, momentum, epsilon, grad},
      indices);
}

Status AdadeltaOptimizer::prepare(const Scope& scope,
                                  const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Adadelta", 0);
    make_slot(scope, gv.variable, "Adadelta_1", 0);
  }
  return scope.status();
}

Output AdadeltaOptimizer::apply_update(const Scope& scope, const Output& grad,
                                       const Output& indices, const Output& var) {
  return ops::ApplyUpdate(scope, "Adadelta",
                          {var, slot(var, "Adadelta"), slot(var, "Adadelta_1"),
                           scalar_like(scope, var, learning_rate_, "learning_rate"),
                           scalar_like(scope, var, rho_), scalar_like(scope, var, epsilon_), grad},
                          indices);
}

Status FtrlOptimizer::prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Ftrl", options_.initial_accumulator_value);
    make_slot(scope, gv.variable, "Ftrl_1", 0);
  }
  return scope.status();
}

Output FtrlOptimizer::apply_update(const Scope& scope, const Output& grad, const Output& indices,
                                   const Output& var) {
  return ops::ApplyUpdate(scope, "FtrlV2",
                          {var, slot(var, "Ftrl"), slot(var, "Ftrl_1"), grad,
                           scalar_like(scope, var, learning_rate_, "learning_rate"),
                           scalar_like(scope, var, options_.l1_regularization_strength),
                           scalar_like(scope, var, options_.l2_regularization_strength),
                           scalar_like(scope, var, options_.l2_shrinkage_regularization_strength),
                           scalar_like(scope, var, options_.learning_rate_power)},
                          indices);
}

Output ProximalGradientDescentOptimizer::apply_update(const Scope& scope, const Output& grad,
                                                      const Output& indices, const Output& var) {
  return ops::ApplyUpdate(scope, "ProximalGradientDescent",
                          {var, scalar_like(scope, var, learning_rate_, "learning_rate"),
                           scalar_like(scope, var, l1_), scalar_like(scope, var, l2_), grad},
                          indices);
}

Status ProximalAdagradOptimizer::prepare(const Scope& scope,
                                         const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "ProximalAdagrad", initial_accumulator_value_);
  }
  return scope.status();
}

Output ProximalAdagradOptimizer::apply_update(const Scope& scope, const Output& grad,
                                              const Output& indices, const Output& var) {
  return ops::ApplyUpdate(
      scope, "ProximalAdagrad",
      {var, slot(var, "ProximalAdagrad"), scalar_like(scope, var, learning_rate_, "learning_rate"),
       scalar_like(scope, var, l1_), scalar_like(scope, var, l2_), grad},
      indices);
}

}  // namespace troupe
