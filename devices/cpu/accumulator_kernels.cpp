// CPU kernels for gradient accumulators: ConditionalAccumulator and
// SparseConditionalAccumulator (find or create), AccumulatorApplyGradient,
// SparseAccumulatorApplyGradient, AccumulatorTakeGradient and SparseAccumulatorTakeGradient
// (async: wait for enough gradients, and a cancelled step ends the wait),
// AccumulatorSetGlobalStep and AccumulatorNumAccumulated (either kind).
#include "troupe/devices/conditional_accumulator.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/sparse_conditional_accumulator.hpp"

namespace troupe {
namespace {

// The accumulator of kind `Accumulator` behind input 0, or nullptr after recording the error.
template <class Accumulator>
Accumulator* accumulator_input(OpKernelContext& ctx) {
  auto* acc = ctx.input_resource<Accumulator>(0);
  if (acc == nullptr) {
    ctx.fail_invalid("input 0 is {}, not {}", ctx.input_ref_ptr(0)->debug_name(),
                     std::is_same_v<Accumulator, SparseConditionalAccumulator>
                         ? "a sparse accumulator"
                         : "an accumulator");
  }
  return acc;
}

template <class Accumulator>
class AccumulatorKernel : public OpKernel {
 public:
  explicit AccumulatorKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        dtype_(c.attr<DataType>("dtype")),
        shape_(c.attr<PartialShape>("shape")),
        reduction_(parse_accumulator_reduction(c.attr<std::string>("reduction_type"))) {}

  void compute(OpKernelContext& ctx) override {
    if (!reduction_.ok()) return ctx.fail_invalid("{}", reduction_.status().message());
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto acc = ctx.device().resources().lookup_or_create<Accumulator>(
        container, name_,
        [&]() -> StatusOr<std::shared_ptr<Accumulator>> {
          return std::make_shared<Accumulator>(name_, dtype_, shape_, *reduction_);
        },
        [&](const Accumulator& existing) -> Status {
          if (existing.dtype() == dtype_ && existing.shape().compatible_with(shape_) &&
              existing.reduction() == *reduction_) {
            return Status::OK();
          }
          return errors::InvalidArgument(
              "{} already exists with another dtype, shape or reduction_type",
              existing.debug_name());
        });
    if (!acc.ok()) return ctx.fail_invalid("{}", acc.status().message());
    ctx.set_output_ref(0, std::move(acc).value());
  }

 private:
  std::string name_;
  std::string container_;
  DataType dtype_;
  PartialShape shape_;
  StatusOr<AccumulatorReduction> reduction_;
};

class ApplyGradientKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    auto* acc = accumulator_input<ConditionalAccumulator>(ctx);
    if (acc == nullptr) return;
    auto applied = acc->apply(ctx.input(1).scalar<int64_t>(), ctx.input(2));
    if (!applied.ok()) ctx.fail_invalid("{}", applied.status().message());
  }
};

class SparseApplyGradientKernel : public OpKernel {
 public:
  explicit SparseApplyGradientKernel(const OpKernelConstruction& c)
      : OpKernel(c), has_known_shape_(c.attr<bool>("has_known_shape")) {}
  void compute(OpKernelContext& ctx) override {
    auto* acc = accumulator_input<SparseConditionalAccumulator>(ctx);
    if (acc == nullptr) return;
    auto applied = acc->apply(ctx.input(1).scalar<int64_t>(), ctx.input(2), ctx.input(3),
                              has_known_shape_ ? &ctx.input(4) : nullptr);
    if (!applied.ok()) ctx.fail_invalid("{}", applied.status().message());
  }

 private:
  bool has_known_shape_;
};

// Waits for the accumulator's take; its tensors become the outputs.
template <class Accumulator>
class TakeGradientKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    auto* acc = accumulator_input<Accumulator>(ctx);
    if (acc == nullptr) return done();
    CancellationManager& cancellation = ctx.step().cancellation;
    if (cancellation.is_cancelled()) {
      ctx.set_status(cancellation.reason());
      return done();
    }
    auto token =
        std::make_shared<CancellationManager::Token>(CancellationManager::kAlreadyCancelled);
    auto waiter =
        acc->take(ctx.input(1).scalar<int32_t>(),
                  [&ctx, &cancellation, token, done](const Status& s, std::vector<Tensor> result) {
                    if (*token != CancellationManager::kAlreadyCancelled)
                      cancellation.deregister(*token);
                    if (s.ok()) {
                      for (size_t i = 0; i < result.size(); ++i)
                        ctx.set_output(static_cast<int>(i), std::move(result[i]));
                    } else {
                      ctx.set_status(s);
                    }
                    done();
                  });
    if (waiter == GradientAccumulator::kServed) return;
    auto keep_alive = ctx.input_ref_ptr(0);
    *token = cancellation.register_callback(
        [keep_alive, acc, waiter](const Status& reason) { acc->cancel(waiter, reason); });
  }
};

class SetGlobalStepKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (auto* acc = accumulator_input<GradientAccumulator>(ctx)) {
      acc->set_global_step(ctx.input(1).scalar<int64_t>());
    }
  }
};

class NumAccumulatedKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (auto* acc = accumulator_input<GradientAccumulator>(ctx)) {
      ctx.set_output(0, Tensor(static_cast<int32_t>(acc->num_accumulated())));
    }
  }
};

}  // namespace

void register_accumulator_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ConditionalAccumulator", kCpu,
                  simple_kernel<AccumulatorKernel<ConditionalAccumulator>>());
  must_add_kernel(r, "SparseConditionalAccumulator", kCpu,
                  simple_kernel<AccumulatorKernel<SparseConditionalAccumulator>>());
  must_add_kernel(r, "AccumulatorApplyGradient", kCpu, simple_kernel<ApplyGradientKernel>());
  must_add_kernel(r, "SparseAccumulatorApplyGradient", kCpu,
                  simple_kernel<SparseApplyGradientKernel>());
  must_add_kernel(r, "AccumulatorTakeGradient", kCpu,
                  simple_kernel<TakeGradientKernel<ConditionalAccumulator>>());
  must_add_kernel(r, "SparseAccumulatorTakeGradient", kCpu,
                  simple_kernel<TakeGradientKernel<SparseConditionalAccumulator>>());
  must_add_kernel(r, "AccumulatorSetGlobalStep", kCpu, simple_kernel<SetGlobalStepKernel>());
  must_add_kernel(r, "AccumulatorNumAccumulated", kCpu, simple_kernel<NumAccumulatedKernel>());
}

}  // namespace troupe
