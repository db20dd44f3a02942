// ConditionalAccumulator: sums gradients for one variable, on the variable's device, for
// synchronous training (TensorFlow's ConditionalAccumulator). A gradient computed at a local
// step older than the accumulator's global step is stale and dropped; a take waits until
// enough gradients have arrived, returns their average, resets the sum, and advances the
// accumulator's step. Used only from the device's thread; callbacks run synchronously.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class ConditionalAccumulator : public Resource {
 public:
  using Waiter = int64_t;
  static constexpr Waiter kServed = -1;

  ConditionalAccumulator(std::string name, DataType dtype, PartialShape shape);

  std::string debug_name() const override { return "accumulator '" + name_ + "'"; }
  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  int64_t global_step() const { return global_step_; }
  int64_t num_accumulated() const { return count_; }

  // Adds `gradient` unless `local_step` < global_step() (stale: returns false, nothing added).
  // InvalidArgument for a dtype or shape that does not fit.
  StatusOr<bool> apply(int64_t local_step, const Tensor& gradient);
  // Once `num_required` gradients are in: `done` gets their average (the sum is reset and the
  // step advanced). Returns kServed or the id of the waiting take.
  Waiter take(int64_t num_required, std::function<void(const Status&, Tensor)> done);
  bool cancel(Waiter waiter, const Status& reason);
  // Sets the step (never backwards).
  void set_global_step(int64_t step) { global_step_ = std::max(global_step_, step); }

 private:
  void serve();

  std::string name_;
  DataType dtype_;
  PartialShape shape_;
  int64_t global_step_ = 0;
  int64_t count_ = 0;
  Tensor sum_;  // float64 running sum, in the gradient's shape
  std::map<Waiter, std::pair<int64_t, std::function<void(const Status&, Tensor)>>> takers_;
  Waiter next_waiter_ = 0;
};

}  // namespace troupe
