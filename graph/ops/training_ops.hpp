// Builders for optimizer update ops. Each updates its variable (and slot variables) in place,
// on the device that holds them, and outputs the variable reference — TensorFlow's
// ApplyGradientDescent, ApplyMomentum, ApplyAdagrad, ApplyAdam, ApplyRMSProp,
// ApplyCenteredRMSProp, ApplyAdadelta, ApplyFtrlV2, ApplyProximalGradientDescent and
// ApplyProximalAdagrad, with TensorFlow's formulas.
#pragma once

#include <optional>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// The update of optimizer `kind` ("Momentum", "Adagrad", "Adam", "RMSProp", "CenteredRMSProp",
// "Adadelta", "FtrlV2", "ProximalGradientDescent", "ProximalAdagrad"; "GradientDescent" dense
// only): with `indices` invalid, Apply<kind> on `inputs`, in that op's order (below); with
// `indices` (int32 or int64, a vector), SparseApply<kind>, TensorFlow's input order (indices
// right after the gradient), whose gradient holds one row per index and which updates only
// those rows of the variable and its slots, with the same formula, one index after another (a
// duplicate index is applied twice). An index outside the variable's rows is InvalidArgument
// naming it, before anything is written. SparseApplyAdam is troupe's (TensorFlow has none): the
// update of tf.contrib.opt.LazyAdamOptimizer, the moments of untouched rows left as they are.
Output ApplyUpdate(const Scope& scope, std::string_view kind, const std::vector<Input>& inputs,
                   const Output& indices = Output(), std::optional<bool> use_nesterov = {});

// var -= alpha * delta
Output ApplyGradientDescent(const Scope& scope, const Input& var, const Input& alpha,
                            const Input& delta);
// accum = accum * momentum + grad; var -= lr * accum
// (Nesterov: var -= lr * grad + lr * momentum * accum)
Output ApplyMomentum(const Scope& scope, const Input& var, const Input& accum, const Input& lr,
                     const Input& grad, const Input& momentum, bool use_nesterov = false);
// accum += grad^2; var -= lr * grad / sqrt(accum)
Output ApplyAdagrad(const Scope& scope, const Input& var, const Input& accum, const Input& lr,
                    const Input& grad);
// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
// m = beta1 * m + (1 - beta1) * grad; v = beta2 * v + (1 - beta2) * grad^2
// var -= lr_t * m / (sqrt(v) + epsilon)
Output ApplyAdam(const Scope& scope, const Input& var, const Input& m, const Input& v,
                 const Input& beta1_power, const Input& beta2_power, const Input& lr,
                 const Input& beta1, const Input& beta2, const Input& epsilon, const Input& grad);

// ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / sqrt(ms + epsilon);
// var -= mom
Output ApplyRMSProp(const Scope& scope, const Input& var, const Input& ms, const Input& mom,
                    const Input& lr, const Input& rho, const Input& momentum, const Input& epsilon,
                    const Input& grad);
// As ApplyRMSProp, with the gradient's mean mg = rho * mg + (1 - rho) * grad subtracted:
// mom = momentum * mom + lr * grad / sqrt(ms - mg^2 + epsilon)
Output ApplyCenteredRMSProp(const Scope& scope, const Input& var, const Input& mg, const Input& ms,
                            const Input& mom, const Input& lr, const Input& rho,
                            const Input& momentum, const Input& epsilon, const Input& grad);
// accum = rho * accum + (1 - rho) * grad^2
// update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
// accum_update = rho * accum_update + (1 - rho) * update^2; var -= lr * update
Output ApplyAdadelta(const Scope& scope, const Input& var, const Input& accum,
                     const Input& accum_update, const Input& lr, const Input& rho,
                     const Input& epsilon, const Input& grad);
// Follow the regularized leader (McMahan et al. 2013), with L2 shrinkage:
// g' = grad + 2 * l2_shrinkage * var; new_accum = accum + grad^2
// linear += g' - (new_accum^-lr_power - accum^-lr_power) / lr * var
// var = |linear| > l1 ? (sign(linear) * l1 - linear) / (new_accum^-lr_power / lr + 2 * l2) : 0
// accum = new_accum
Output ApplyFtrlV2(const Scope& scope, const Input& var, const Input& accum, const Input& linear,
                   const Input& grad, const Input& lr, const Input& l1, const Input& l2,
                   const Input& l2_shrinkage, const Input& lr_power);
// prox = var - alpha * delta
// var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + alpha * l2)
Output ApplyProximalGradientDescent(const Scope& scope, const Input& var, const Input& alpha,
                                    const Input& l1, const Input& l2, const Input& delta);
// accum += grad^2; rate = lr / sqrt(accum); prox = var - rate * grad
// var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)
Output ApplyProximalAdagrad(const Scope& scope, const Input& var, const Input& accum,
                            const Input& lr, const Input& l1, const Input& l2, const Input& grad);

// Whether the variable has been assigned (bool scalar).
Output IsVariableInitialized(const Scope& scope, const Input& ref);

}  // namespace troupe::ops
