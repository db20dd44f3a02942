// SparseConditionalAccumulator: sums sparse gradients (IndexedSlices: indices, values, dense
// shape) for one variable, as TensorFlow's: only the rows gradients touch are held, and a take
// gets each row's sum over the gradients that had it divided by their number (reduction kMean,
// TensorFlow's element-wise average) or the sum (kSum), with the rows in increasing order.
// Duplicate indices within one gradient sum into one row, counted once.
#pragma once

#include <map>
#include <vector>

#include "troupe/devices/gradient_accumulator.hpp"

namespace troupe {

class SparseConditionalAccumulator : public GradientAccumulator {
 public:
  SparseConditionalAccumulator(std::string name, DataType dtype, PartialShape shape,
                               AccumulatorReduction reduction = AccumulatorReduction::kMean);

  // Adds the gradient (indices: int64 vector; values: [n] + row shape; dense_shape: int64
  // vector, or nullptr when unknown) unless `local_step` < global_step() (stale: returns false,
  // nothing checked).
  // InvalidArgument, with TensorFlow's messages, for a dtype, rank, shape or index that does
  // not fit the accumulator or the gradients before it.
  StatusOr<bool> apply(int64_t local_step, const Tensor& indices, const Tensor& values,
                       const Tensor* dense_shape);

 private:
  struct Row {
    std::vector<double> sum;
    int64_t count = 0;  // gradients that had this row
  };
  Status check(const Tensor& indices, const Tensor& values, const Tensor* dense_shape) const;
  std::vector<Tensor> take_result(int64_t count) override;

  std::vector<int64_t> row_dims_;  // values.shape[1:] of the gradients so far
  std::map<int64_t, Row> rows_;
};

}  // namespace troupe
