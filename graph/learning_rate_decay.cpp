// Learning-rate schedules (learning_rate_decay.hpp), built from element-wise ops as TensorFlow's
// python/training/learning_rate_decay.py builds them.
#include "troupe/graph/learning_rate_decay.hpp"

#include <numbers>

#include <fmt/format.h>

#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

bool is_number(DataType dtype) {
  return dtype_is_floating(dtype) || dtype == DataType::kInt32 || dtype == DataType::kInt64;
}

// The schedule's common inputs, in the rate's dtype.
struct DecayInputs {
  Scope scope;
  DataType dtype;
  Output learning_rate;
  Output step;         // the global step, cast
  Output decay_steps;  // as a constant
};

StatusOr<DecayInputs> decay_inputs(const Scope& scope, const char* schedule,
                                   const Hyperparameter& learning_rate, const Output& global_step,
                                   double decay_steps) {
  TROUPE_RETURN_IF_ERROR(scope.status());
  if (!global_step.valid()) {
    return errors::InvalidArgument("global_step is required for {}", schedule);
  }
  if (!is_number(global_step.dtype())) {
    return errors::InvalidArgument("{}: global_step '{}' must be a number, got {}", schedule,
                                   global_step.name(), dtype_name(global_step.dtype()));
  }
  if (!(decay_steps > 0)) {
    return errors::InvalidArgument("{}: decay_steps must be > 0, got {}", schedule, decay_steps);
  }
  const Output* tensor = learning_rate.tensor();
  if (tensor != nullptr && !dtype_is_floating(tensor->dtype())) {
    return errors::InvalidArgument("{}: learning_rate '{}' must be float32 or float64, got {}",
                                   schedule, tensor->name(), dtype_name(tensor->dtype()));
  }
  DecayInputs in{scope.sub_scope(schedule), tensor != nullptr ? tensor->dtype() : DataType::kFloat,
                 Output(), Output(), Output()};
  in.learning_rate = learning_rate.as_scalar(in.scope, in.dtype, "learning_rate");
  in.step = ops::Cast(in.scope, global_step, in.dtype);
  in.decay_steps = Hyperparameter(decay_steps).as_scalar(in.scope, in.dtype, "decay_steps");
  TROUPE_RETURN_IF_ERROR(in.scope.status());
  return in;
}

Output constant(const DecayInputs& in, double value) {
  return Hyperparameter(value).as_scalar(in.scope, in.dtype, "a constant");
}

// global_step / decay_steps, floored with `staircase`.
Output progress(const DecayInputs& in, bool staircase) {
  Output p = ops::Div(in.scope, in.step, in.decay_steps);
  return staircase ? ops::Floor(in.scope, p) : p;
}

StatusOr<Output> finished(const DecayInputs& in, const Output& rate) {
  TROUPE_RETURN_IF_ERROR(in.scope.status());
  return rate;
}

}  // namespace

StatusOr<Output> exponential_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                   const Output& global_step, double decay_steps, double decay_rate,
                                   bool staircase) {
  TROUPE_ASSIGN_OR_RETURN(DecayInputs in, decay_inputs(scope, "ExponentialDecay", learning_rate,
                                                       global_step, decay_steps));
  const Output p = progress(in, staircase);
  return finished(
      in, ops::Mul(in.scope, in.learning_rate, ops::Pow(in.scope, constant(in, decay_rate), p)));
}

StatusOr<Output> natural_exp_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                   const Output& global_step, double decay_steps, double decay_rate,
                                   bool staircase) {
  TROUPE_ASSIGN_OR_RETURN(DecayInputs in, decay_inputs(scope, "NaturalExpDecay", learning_rate,
                                                       global_step, decay_steps));
  const Output p = progress(in, staircase);
  return finished(in,
                  ops::Mul(in.scope, in.learning_rate,
                           ops::Exp(in.scope, ops::Mul(in.scope, constant(in, -decay_rate), p))));
}

StatusOr<Output> inverse_time_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                    const Output& global_step, double decay_steps,
                                    double decay_rate, bool staircase) {
  TROUPE_ASSIGN_OR_RETURN(DecayInputs in, decay_inputs(scope, "InverseTimeDecay", learning_rate,
                                                       global_step, decay_steps));
  const Output p = progress(in, staircase);
  const Output denominator =
      ops::Add(in.scope, constant(in, 1.0), ops::Mul(in.scope, constant(in, decay_rate), p));
  return finished(in, ops::Div(in.scope, in.learning_rate, denominator));
}

StatusOr<Output> polynomial_decay(const Scope& scope, const Hyperparameter& learning_rate,
                                  const Output& global_step, double decay_steps,
                                  PolynomialDecayOptions options) {
  TROUPE_ASSIGN_OR_RETURN(DecayInputs in, decay_inputs(scope, "PolynomialDecay", learning_rate,
                                                       global_step, decay_steps));
  const Scope& s = in.scope;
  Output step = in.step;
  Output steps = in.decay_steps;
  if (options.cycle) {
    // decay_steps * ceil(step / decay_steps), with step 0 counting as the first cycle.
    const Output cycles = ops::Ceil(s, ops::Div(s, step, steps));
    steps =
        ops::Mul(s, steps,
                 ops::Select(s, ops::Equal(s, step, constant(in, 0.0)), constant(in, 1.0), cycles));
  } else {
    step = ops::Minimum(s, step, steps);
  }
  const Output end = constant(in, options.end_learning_rate);
  const Output fraction = ops::Sub(s, constant(in, 1.0), ops::Div(s, step, steps));
  return finished(in, ops::Add(s,
                               ops::Mul(s, ops::Sub(s, in.learning_rate, end),
                                        ops::Pow(s, fraction, constant(in, options.power))),
                               end));
}

StatusOr<Output> cosine_decay(const Scope& scope, const Hyperparameter& learning_rate,
                              const Output& global_step, double decay_steps, double alpha) {
  TROUPE_ASSIGN_OR_RETURN(
      DecayInputs in, decay_inputs(scope, "CosineDecay", learning_rate, global_step, decay_steps));
  const Scope& s = in.scope;
  const Output step = ops::Minimum(s, in.step, in.decay_steps);
  const Output angle =
      ops::Mul(s, constant(in, std::numbers::pi), ops::Div(s, step, in.decay_steps));
  const Output cosine =
      ops::Mul(s, constant(in, 0.5), ops::Add(s, constant(in, 1.0), ops::Cos(s, angle)));
  const Output decayed =
      ops::Add(s, ops::Mul(s, constant(in, 1.0 - alpha), cosine), constant(in, alpha));
  return finished(in, ops::Mul(s, in.learning_rate, decayed));
}

StatusOr<Output> piecewise_constant(const Scope& scope, const Output& x,
                                    const std::vector<double>& boundaries,
                                    const std::vector<double>& values) {
  TROUPE_RETURN_IF_ERROR(scope.status());
  if (!x.valid() || !is_number(x.dtype())) {
    return errors::InvalidArgument("piecewise_constant: x must be a number tensor{}",
                                   x.valid() ? fmt::format(", got {}", dtype_name(x.dtype())) : "");
  }
  if (x.shape().rank_known() && x.shape().rank() != 0) {
    return errors::InvalidArgument("piecewise_constant: x '{}' must be a scalar, got shape {}",
                                   x.name(), x.shape().to_string());
  }
  if (values.empty() || boundaries.size() + 1 != values.size()) {
    return errors::InvalidArgument(
        "piecewise_constant: the length of boundaries should be 1 less than the length of "
        "values; got {} boundaries and {} values",
        boundaries.size(), values.size());
  }
  for (size_t i = 1; i < boundaries.size(); ++i) {
    if (!(boundaries[i - 1] < boundaries[i])) {
      return errors::InvalidArgument(
          "piecewise_constant: boundaries must increase; boundaries[{}] = {} follows {}", i,
          boundaries[i], boundaries[i - 1]);
    }
  }
  Scope s = scope.sub_scope("PiecewiseConstant");
  auto in_x_dtype = [&](double boundary) -> Tensor {
    switch (x.dtype()) {
      case DataType::kInt32:
        return Tensor(static_cast<int32_t>(boundary));
      case DataType::kInt64:
        return Tensor(static_cast<int64_t>(boundary));
      case DataType::kDouble:
        return Tensor(boundary);
      default:
        return Tensor(static_cast<float>(boundary));
    }
  };
  // From the last interval back: values[i] where x <= boundaries[i], else what follows.
  Output rate = ops::Const(s, Tensor(static_cast<float>(values.back())));
  for (size_t i = boundaries.size(); i-- > 0;) {
    rate = ops::Select(s, ops::LessEqual(s, x, ops::Const(s, in_x_dtype(boundaries[i]))),
                       ops::Const(s, Tensor(static_cast<float>(values[i]))), rate);
  }
  TROUPE_RETURN_IF_ERROR(s.status());
  return rate;
}

}  // namespace troupe
