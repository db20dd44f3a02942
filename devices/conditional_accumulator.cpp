// ConditionalAccumulator: a dense running sum, averaged when taken.
#include "troupe/devices/conditional_accumulator.hpp"

namespace troupe {

ConditionalAccumulator::ConditionalAccumulator(std::string name, DataType dtype, PartialShape shape,
                                               AccumulatorReduction reduction)
    : GradientAccumulator("accumulator", std::move(name), dtype, std::move(shape), reduction) {}

StatusOr<bool> ConditionalAccumulator::apply(int64_t local_step, const Tensor& gradient) {
  // As TensorFlow's, a stale gradient is dropped before it is checked.
  if (is_stale(local_step)) return false;
  if (gradient.dtype() != dtype()) {
    return errors::InvalidArgument("{} takes {} gradients, got {}", debug_name(),
                                   dtype_name(dtype()), dtype_name(gradient.dtype()));
  }
  const bool started = num_accumulated() > 0;
  if (!shape().matches(gradient.shape()) || (started && sum_.shape() != gradient.shape())) {
    return errors::InvalidArgument("{} takes gradients of shape {}, got {}", debug_name(),
                                   started ? sum_.shape().to_string() : shape().to_string(),
                                   gradient.shape().to_string());
  }
  if (!started) {
    sum_ = Tensor(DataType::kDouble, gradient.shape());
    std::fill_n(sum_.data<double>(), sum_.num_elements(), 0.0);
  }
  double* sum = sum_.data<double>();
  TROUPE_SWITCH_FLOATING(dtype(), T, {
    const T* g = gradient.data<T>();
    for (int64_t i = 0; i < gradient.num_elements(); ++i)
      sum[i] += static_cast<double>(g[i]);
  });
  count_gradient();
  return true;
}

std::vector<Tensor> ConditionalAccumulator::take_result(int64_t count) {
  Tensor average(dtype(), sum_.shape());
  const double* sum = sum_.data<double>();
  const double divisor =
      reduction() == AccumulatorReduction::kMean ? static_cast<double>(count) : 1.0;
  TROUPE_SWITCH_FLOATING(dtype(), T, {
    T* out = average.data<T>();
    for (int64_t i = 0; i < average.num_elements(); ++i)
      out[i] = static_cast<T>(sum[i] / divisor);
  });
  sum_ = Tensor();
  std::vector<Tensor> result;
  result.push_back(std::move(average));
  return result;
}

}  // namespace troupe
