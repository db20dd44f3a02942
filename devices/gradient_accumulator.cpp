// GradientAccumulator: stale steps, counting, and takes waiting for enough gradients.
#include "troupe/devices/gradient_accumulator.hpp"

namespace troupe {

StatusOr<AccumulatorReduction> parse_accumulator_reduction(std::string_view name) {
  if (name == "MEAN") return AccumulatorReduction::kMean;
  if (name == "SUM") return AccumulatorReduction::kSum;
  return errors::InvalidArgument("reduction_type is '{}', expected 'MEAN' or 'SUM'", name);
}

GradientAccumulator::GradientAccumulator(std::string kind, std::string name, DataType dtype,
                                         PartialShape shape, AccumulatorReduction reduction)
    : kind_(std::move(kind)),
      name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      reduction_(reduction) {}

GradientAccumulator::Waiter GradientAccumulator::take(int64_t num_required, TakeCallback done) {
  Waiter id = next_waiter_++;
  takers_.emplace(id, std::make_pair(std::max<int64_t>(num_required, 1), std::move(done)));
  serve();
  return takers_.count(id) > 0 ? id : kServed;
}

bool GradientAccumulator::cancel(Waiter waiter, const Status& reason) {
  auto it = takers_.find(waiter);
  if (it == takers_.end()) return false;
  auto done = std::move(it->second.second);
  takers_.erase(it);
  done(reason, {});
  return true;
}

void GradientAccumulator::count_gradient() {
  ++count_;
  serve();
}

void GradientAccumulator::serve() {
  while (!takers_.empty() && count_ >= takers_.begin()->second.first) {
    auto node = takers_.extract(takers_.begin());
    std::vector<Tensor> result = take_result(count_);
    count_ = 0;
    ++global_step_;
    node.mapped().second(Status::OK(), std::move(result));
  }
}

}  // namespace troupe
