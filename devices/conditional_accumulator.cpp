// ConditionalAccumulator: stale-gradient filtering, summing, averaging takes.
#include "troupe/devices/conditional_accumulator.hpp"

namespace troupe {

ConditionalAccumulator::ConditionalAccumulator(std::string name, DataType dtype, PartialShape shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

StatusOr<bool> ConditionalAccumulator::apply(int64_t local_step, const Tensor& gradient) {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument("{} takes {} gradients, got {}", debug_name(),
                                   dtype_name(dtype_), dtype_name(gradient.dtype()));
  }
  if (!shape_.matches(gradient.shape()) || (count_ > 0 && sum_.shape() != gradient.shape())) {
    return errors::InvalidArgument("{} takes gradients of shape {}, got {}", debug_name(),
                                   count_ > 0 ? sum_.shape().to_string() : shape_.to_string(),
                                   gradient.shape().to_string());
  }
  if (local_step < global_step_) return false;  // stale
  if (count_ == 0) {
    sum_ = Tensor(DataType::kDouble, gradient.shape());
    std::fill_n(sum_.data<double>(), sum_.num_elements(), 0.0);
  }
  double* sum = sum_.data<double>();
  TROUPE_SWITCH_FLOATING(dtype_, T, {
    const T* g = gradient.data<T>();
    for (int64_t i = 0; i < gradient.num_elements(); ++i)
      sum[i] += static_cast<double>(g[i]);
  });
  ++count_;
  serve();
  return true;
}

ConditionalAccumulator::Waiter ConditionalAccumulator::take(
    int64_t num_required, std::function<void(const Status&, Tensor)> done) {
  Waiter id = next_waiter_++;
  takers_.emplace(id, std::make_pair(std::max<int64_t>(num_required, 1), std::move(done)));
  serve();
  return takers_.count(id) > 0 ? id : kServed;
}

bool ConditionalAccumulator::cancel(Waiter waiter, const Status& reason) {
  auto it = takers_.find(waiter);
  if (it == takers_.end()) return false;
  auto done = std::move(it->second.second);
  takers_.erase(it);
  done(reason, Tensor());
  return true;
}

void ConditionalAccumulator::serve() {
  while (!takers_.empty() && count_ >= takers_.begin()->second.first) {
    auto node = takers_.extract(takers_.begin());
    Tensor average(dtype_, sum_.shape());
    const double* sum = sum_.data<double>();
    TROUPE_SWITCH_FLOATING(dtype_, T, {
      T* out = average.data<T>();
      for (int64_t i = 0; i < average.num_elements(); ++i) {
        out[i] = static_cast<T>(sum[i] / static_cast<double>(count_));
      }
    });
    count_ = 0;
    sum_ = Tensor();
    ++global_step_;
    node.mapped().second(Status::OK(), std::move(average));
  }
}

}  // namespace troupe
