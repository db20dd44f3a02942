// Builders for optimizer update ops. Each updates its variable (and slot variables) in place,
// on the device that holds them, and outputs the variable reference — TensorFlow's
// ApplyGradientDescent, ApplyMomentum, ApplyAdagrad and ApplyAdam.
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

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

// Whether the variable has been assigned (bool scalar).
Output IsVariableInitialized(const Scope& scope, const Input& ref);

}  // namespace troupe::ops
