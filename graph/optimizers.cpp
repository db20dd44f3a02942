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
  TROUPE_ASSIGN_OR_RETURN(std::vector<Output> grads, add_gradients(scope, {loss}, variables));
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
    applied.push_back(apply_dense(at_var, gv.gradient, gv.variable).op());
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

Output Optimizer::make_slot(const Scope& scope, const Output& var, const std::string& slot_name,
                            const Tensor& initial_value) {
  std::string name = var.node()->name() + "/" + slot_name;
  // Slots live with their variable: colocation overrides the scope's device function.
  Scope at_var = scope.root().colocate_with(var.op());
  ModelVariable slot = make_variable(at_var, name, initial_value, /*trainable=*/false);
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

namespace {

// `var`'s shape filled with `value`, in its dtype.
Tensor filled_like(const Output& var, double value) {
  Tensor init = zeros(var.dtype(), var.shape().to_shape());
  TROUPE_SWITCH_FLOATING(init.dtype(), T,
                         std::fill_n(init.data<T>(), init.num_elements(), static_cast<T>(value)));
  return init;
}

}  // namespace

Output GradientDescentOptimizer::apply_dense(const Scope& scope, const Output& grad,
                                             const Output& var) {
  return ops::ApplyGradientDescent(scope, var,
                                   scalar_like(scope, var, learning_rate_, "learning_rate"), grad);
}

Status MomentumOptimizer::prepare(const Scope& scope,
                                  const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates)
    make_slot(scope, gv.variable, name(), filled_like(gv.variable, 0));
  return scope.status();
}

Output MomentumOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  return ops::ApplyMomentum(scope, var, slot(var, name()),
                            scalar_like(scope, var, learning_rate_, "learning_rate"), grad,
                            scalar_like(scope, var, momentum_, "momentum"), use_nesterov_);
}

Status AdagradOptimizer::prepare(const Scope& scope,
                                 const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates)
    make_slot(scope, gv.variable, name(), filled_like(gv.variable, initial_accumulator_value_));
  return scope.status();
}

Output AdagradOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  return ops::ApplyAdagrad(scope, var, slot(var, name()),
                           scalar_like(scope, var, learning_rate_, "learning_rate"), grad);
}

Status AdamOptimizer::prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Adam", filled_like(gv.variable, 0));
    make_slot(scope, gv.variable, "Adam_1", filled_like(gv.variable, 0));
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

Output AdamOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  return ops::ApplyAdam(scope, var, slot(var, "Adam"), slot(var, "Adam_1"), beta1_power_,
                        beta2_power_, scalar_like(scope, var, learning_rate_, "learning_rate"),
                        scalar_like(scope, var, beta1_), scalar_like(scope, var, beta2_),
                        scalar_like(scope, var, epsilon_), grad);
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
    make_slot(scope, gv.variable, "RMSProp", filled_like(gv.variable, 1));
    make_slot(scope, gv.variable, "RMSProp_1", filled_like(gv.variable, 0));
    if (options_.centered) make_slot(scope, gv.variable, "RMSProp_2", filled_like(gv.variable, 0));
  }
  return scope.status();
}

Output RMSPropOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  const Output lr = scalar_like(scope, var, learning_rate_, "learning_rate");
  const Output rho = scalar_like(scope, var, options_.decay);
  const Output momentum = scalar_like(scope, var, options_.momentum);
  const Output epsilon = scalar_like(scope, var, options_.epsilon);
  if (options_.centered) {
    return ops::ApplyCenteredRMSProp(scope, var, slot(var, "RMSProp_2"), slot(var, "RMSProp"),
                                     slot(var, "RMSProp_1"), lr, rho, momentum, epsilon, grad);
  }
  return ops::ApplyRMSProp(scope, var, slot(var, "RMSProp"), slot(var, "RMSProp_1"), lr, rho,
                           momentum, epsilon, grad);
}

Status AdadeltaOptimizer::prepare(const Scope& scope,
                                  const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Adadelta", filled_like(gv.variable, 0));
    make_slot(scope, gv.variable, "Adadelta_1", filled_like(gv.variable, 0));
  }
  return scope.status();
}

Output AdadeltaOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  return ops::ApplyAdadelta(scope, var, slot(var, "Adadelta"), slot(var, "Adadelta_1"),
                            scalar_like(scope, var, learning_rate_, "learning_rate"),
                            scalar_like(scope, var, rho_), scalar_like(scope, var, epsilon_), grad);
}

Status FtrlOptimizer::prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "Ftrl",
              filled_like(gv.variable, options_.initial_accumulator_value));
    make_slot(scope, gv.variable, "Ftrl_1", filled_like(gv.variable, 0));
  }
  return scope.status();
}

Output FtrlOptimizer::apply_dense(const Scope& scope, const Output& grad, const Output& var) {
  return ops::ApplyFtrlV2(scope, var, slot(var, "Ftrl"), slot(var, "Ftrl_1"), grad,
                          scalar_like(scope, var, learning_rate_, "learning_rate"),
                          scalar_like(scope, var, options_.l1_regularization_strength),
                          scalar_like(scope, var, options_.l2_regularization_strength),
                          scalar_like(scope, var, options_.l2_shrinkage_regularization_strength),
                          scalar_like(scope, var, options_.learning_rate_power));
}

Output ProximalGradientDescentOptimizer::apply_dense(const Scope& scope, const Output& grad,
                                                     const Output& var) {
  return ops::ApplyProximalGradientDescent(
      scope, var, scalar_like(scope, var, learning_rate_, "learning_rate"),
      scalar_like(scope, var, l1_), scalar_like(scope, var, l2_), grad);
}

Status ProximalAdagradOptimizer::prepare(const Scope& scope,
                                         const std::vector<GradientAndVariable>& updates) {
  for (const auto& gv : updates) {
    make_slot(scope, gv.variable, "ProximalAdagrad",
              filled_like(gv.variable, initial_accumulator_value_));
  }
  return scope.status();
}

Output ProximalAdagradOptimizer::apply_dense(const Scope& scope, const Output& grad,
                                             const Output& var) {
  return ops::ApplyProximalAdagrad(scope, var, slot(var, "ProximalAdagrad"),
                                   scalar_like(scope, var, learning_rate_, "learning_rate"),
                                   scalar_like(scope, var, l1_), scalar_like(scope, var, l2_),
                                   grad);
}

}  // namespace troupe
