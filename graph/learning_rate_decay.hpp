// TensorFlow 1.x's learning-rate schedules (tf.train.exponential_decay and its siblings): ops
// that compute a rate from the global step at every step. Give the result to an optimizer as its
// learning rate (a Hyperparameter):
//
//   TROUPE_ASSIGN_OR_RETURN(Output lr, exponential_decay(root, 0.1, global_step.ref, 1000, 0.96));
//   GradientDescentOptimizer optimizer(lr);
//
// The rate has the learning rate's dtype: float32 for a number, the tensor's own for a floating
// tensor. The step is cast to it; p = global_step / decay_steps, floor(p) with `staircase`.
// Errors (InvalidArgument, naming the schedule and the argument): an invalid or non-number
// global step, decay_steps <= 0, piecewise_constant's boundaries not one fewer than its values.
#pragma once

#include <vector>

#include "troupe/graph/hyperparameter.hpp"

namespace troupe {

// learning_rate * decay_rate ^ p
StatusOr<Output> exponential_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                   const Output& global_step, double decay_steps, double decay_rate,
                                   bool staircase = false);
// learning_rate * exp(-decay_rate * p)
StatusOr<Output> natural_exp_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                   const Output& global_step, double decay_steps, double decay_rate,
                                   bool staircase = false);
// learning_rate / (1 + decay_rate * p)
StatusOr<Output> inverse_time_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                    const Output& global_step, double decay_steps,
                                    double decay_rate, bool staircase = false);

struct PolynomialDecayOptions {
  double end_learning_rate = 0.0001;
  double power = 1.0;
  // Restart the decay every decay_steps (decay_steps grows to the next multiple of the step)
  // instead of holding end_learning_rate after decay_steps.
  bool cycle = false;
};
// (learning_rate - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end
StatusOr<Output> polynomial_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                  const Output& global_step, double decay_steps,
                                  PolynomialDecayOptions options = {});
// learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps))
//                  + alpha)
StatusOr<Output> cosine_decay(const Scope& scope, const Hyperparameter& learning_rate,
                              const Output& global_step, double decay_steps, double alpha = 0.0);
// values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i],
// values.back() after the last boundary; float32 (the boundaries are compared in x's dtype).
StatusOr<Output> piecewise_constant(const Scope& scope, const Output& x,
                                    const std::vector<double>& boundaries,
                                    const std::vector<double>& values);

}  // namespace troupe
