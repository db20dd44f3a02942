// Hyperparameter: an optimizer's setting (learning rate, momentum, ...) given either as a number
// fixed when the graph is built, or as a scalar tensor the graph computes every step — a
// learning rate decayed with the global step (graph/learning_rate_decay.hpp), or a placeholder
// fed per run — as TensorFlow's optimizers take either.
#pragma once

#include <optional>
#include <string>

#include "troupe/graph/scope.hpp"

namespace troupe {

class Hyperparameter {
 public:
  Hyperparameter(double value) : value_(value) {}                // NOLINT: implicit, as a number
  Hyperparameter(Output tensor) : tensor_(std::move(tensor)) {}  // NOLINT: implicit

  bool is_tensor() const { return tensor_.has_value(); }
  // The number (0 for a tensor).
  double value() const { return value_; }
  // The tensor, or null for a number.
  const Output* tensor() const { return tensor_ ? &*tensor_ : nullptr; }

  // A scalar of `dtype` (float32 or float64) built in `scope`: a constant of the number, or the
  // tensor, cast when its dtype differs. A tensor that is not a number, or whose rank is known
  // and not 0, is InvalidArgument naming `what` in scope.status() (the result is then invalid).
  Output as_scalar(const Scope& scope, DataType dtype, const std::string& what) const;

 private:
  double value_ = 0;
  std::optional<Output> tensor_;
};

}  // namespace troupe
