// ConditionalAccumulator: sums dense gradients for one variable (TensorFlow's
// ConditionalAccumulator); a take gets their average (or sum, with reduction kSum).
#pragma once

#include "troupe/devices/gradient_accumulator.hpp"

namespace troupe {

class ConditionalAccumulator : public GradientAccumulator {
 public:
  ConditionalAccumulator(std::string name, DataType dtype, PartialShape shape,
                         AccumulatorReduction reduction = AccumulatorReduction::kMean);

  // Adds `gradient` unless `local_step` < global_step() (stale: returns false, nothing added,
  // nothing checked). InvalidArgument for a dtype or shape that does not fit.
  StatusOr<bool> apply(int64_t local_step, const Tensor& gradient);

 private:
  std::vector<Tensor> take_result(int64_t count) override;

  Tensor sum_;  // float64 running sum, in the gradient's shape
};

}  // namespace troupe
