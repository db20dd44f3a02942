// GradientAccumulator: what TensorFlow's ConditionalAccumulator and SparseConditionalAccumulator
// share, for synchronous training on the variable's device. Each keeps a global step: a
// gradient computed at an older local step is stale and dropped. A take waits until enough
// gradients have arrived, gets their average (the subclass's, which then starts over) and
// advances the step. Used only from the device's thread; callbacks run synchronously.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// How the accumulated gradients combine (TensorFlow's reduction_type).
enum class AccumulatorReduction { kMean, kSum };
// "MEAN" or "SUM"; InvalidArgument naming the value otherwise.
StatusOr<AccumulatorReduction> parse_accumulator_reduction(std::string_view name);

class GradientAccumulator : public Resource {
 public:
  using Waiter = int64_t;
  static constexpr Waiter kServed = -1;
  // Gets the take's outputs (one tensor, or indices, values and shape), or the error.
  using TakeCallback = std::function<void(const Status&, std::vector<Tensor>)>;

  GradientAccumulator(std::string kind, std::string name, DataType dtype, PartialShape shape,
                      AccumulatorReduction reduction);

  std::string debug_name() const override { return kind_ + " '" + name_ + "'"; }
  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  AccumulatorReduction reduction() const { return reduction_; }
  int64_t global_step() const { return global_step_; }
  int64_t num_accumulated() const { return count_; }

  // Once `num_required` gradients are in: `done` gets their average. Returns kServed or the
  // id of the waiting take.
  Waiter take(int64_t num_required, TakeCallback done);
  bool cancel(Waiter waiter, const Status& reason);
  // Sets the step (never backwards).
  void set_global_step(int64_t step) { global_step_ = std::max(global_step_, step); }

 protected:
  bool is_stale(int64_t local_step) const { return local_step < global_step_; }
  // Counts a gradient the subclass has added, and serves the takes it completes.
  void count_gradient();
  // The result of a take of the count_ gradients added since the last; resets the sums.
  virtual std::vector<Tensor> take_result(int64_t count) = 0;

 private:
  void serve();

  std::string kind_;
  std::string name_;
  DataType dtype_;
  PartialShape shape_;
  AccumulatorReduction reduction_;
  int64_t global_step_ = 0;
  int64_t count_ = 0;
  std::map<Waiter, std::pair<int64_t, TakeCallback>> takers_;
  Waiter next_waiter_ = 0;
};

}  // namespace troupe
