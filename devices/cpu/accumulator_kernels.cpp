// CPU kernels for gradient accumulators: ConditionalAccumulator (find or create),
// AccumulatorApplyGradient, AccumulatorTakeGradient (async: waits for enough gradients, and a
// cancelled step ends the wait), AccumulatorSetGlobalStep, AccumulatorNumAccumulated.
#include "troupe/devices/conditional_accumulator.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

ConditionalAccumulator* accumulator_input(OpKernelContext& ctx) {
  auto* acc = ctx.input_resource<ConditionalAccumulator>(0);
  if (acc == nullptr) {
    ctx.fail_invalid("input 0 is {}, not an accumulator", ctx.input_ref_ptr(0)->debug_name());
  }
  return acc;
}

class ConditionalAccumulatorKernel : public OpKernel {
 public:
  explicit ConditionalAccumulatorKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        dtype_(c.attr<DataType>("dtype")),
        shape_(c.attr<PartialShape>("shape")) {}

  void compute(OpKernelContext& ctx) override {
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto acc = ctx.device().resources().lookup_or_create<ConditionalAccumulator>(
        container, name_,
        [&]() -> StatusOr<std::shared_ptr<ConditionalAccumulator>> {
          return std::make_shared<ConditionalAccumulator>(name_, dtype_, shape_);
        },
        [&](const ConditionalAccumulator& existing) -> Status {
          if (existing.dtype() == dtype_ && existing.shape().compatible_with(shape_)) {
            return Status::OK();
          }
          return errors::InvalidArgument("{} already exists with another dtype or shape",
                                         existing.debug_name());
        });
    if (!acc.ok()) {
      ctx.fail_invalid("{}", acc.status().message());
      return;
    }
    ctx.set_output_ref(0, std::move(acc).value());
  }

 private:
  std::string name_;
  std::string container_;
  DataType dtype_;
  PartialShape shape_;
};

class ApplyGradientKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    ConditionalAccumulator* acc = accumulator_input(ctx);
    if (acc == nullptr) return;
    auto applied = acc->apply(ctx.input(1).scalar<int64_t>(), ctx.input(2));
    if (!applied.ok()) ctx.fail_invalid("{}", applied.status().message());
  }
};

class TakeGradientKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    ConditionalAccumulator* acc = accumulator_input(ctx);
    if (acc == nullptr) return done();
    CancellationManager& cancellation = ctx.step().cancellation;
    if (cancellation.is_cancelled()) {
      ctx.set_status(cancellation.reason());
      return done();
    }
    auto token =
        std::make_shared<CancellationManager::Token>(CancellationManager::kAlreadyCancelled);
    auto waiter = acc->take(ctx.input(1).scalar<int32_t>(),
                            [&ctx, &cancellation, token, done](const Status& s, Tensor average) {
                              if (*token != CancellationManager::kAlreadyCancelled) {
                                cancellation.deregister(*token);
                              }
                              if (s.ok()) {
                                ctx.set_output(0, std::move(average));
                              } else {
                                ctx.set_status(s);
                              }
                              done();
                            });
    if (waiter == ConditionalAccumulator::kServed) return;
    auto keep_alive = ctx.input_ref_ptr(0);
    *token = cancellation.register_callback(
        [keep_alive, acc, waiter](const Status& reason) { acc->cancel(waiter, reason); });
  }
};

class SetGlobalStepKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (ConditionalAccumulator* acc = accumulator_input(ctx)) {
      acc->set_global_step(ctx.input(1).scalar<int64_t>());
    }
  }
};

class NumAccumulatedKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (ConditionalAccumulator* acc = accumulator_input(ctx)) {
      ctx.set_output(0, Tensor(static_cast<int32_t>(acc->num_accumulated())));
    }
  }
};

}  // namespace

void register_accumulator_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ConditionalAccumulator", kCpu, simple_kernel<ConditionalAccumulatorKernel>());
  must_add_kernel(r, "AccumulatorApplyGradient", kCpu, simple_kernel<ApplyGradientKernel>());
  must_add_kernel(r, "AccumulatorTakeGradient", kCpu, simple_kernel<TakeGradientKernel>());
  must_add_kernel(r, "AccumulatorSetGlobalStep", kCpu, simple_kernel<SetGlobalStepKernel>());
  must_add_kernel(r, "AccumulatorNumAccumulated", kCpu, simple_kernel<NumAccumulatedKernel>());
}

}  // namespace troupe
