// HostKernel and its async twin: host copies of the inputs, then the CPU kernel.
#include "troupe/devices/gpu/host_kernel.hpp"

#include <vector>

#include "troupe/devices/gpu/gpu_context.hpp"

namespace troupe {
namespace {

// Host copies of the inputs of ctx that are in GPU memory, and the input list that points at
// them; the original list comes back with restore().
class HostInputs {
 public:
  explicit HostInputs(OpKernelContext& ctx) : original_(ctx.inputs()) {}

  // Copies; false after recording the error in ctx.
  bool copy(OpKernelContext& ctx) {
    copies_.resize(original_.size());
    pointers_.assign(original_.begin(), original_.end());
    for (size_t i = 0; i < original_.size(); ++i) {
      if (pointers_[i] == nullptr || !pointers_[i]->is_initialized() || pointers_[i]->on_host()) {
        continue;  // nothing to copy (a dead _Send's input has no value)
      }
      auto host = ctx.device().gpu()->to_host(*pointers_[i]);
      if (!host.ok()) {
        ctx.set_status(host.status());
        return false;
      }
      copies_[i] = std::move(host).value();
      pointers_[i] = &copies_[i];
    }
    ctx.set_inputs(pointers_);
    return true;
  }
  void restore(OpKernelContext& ctx) const { ctx.set_inputs(original_); }

 private:
  std::span<const Tensor* const> original_;
  std::vector<Tensor> copies_;
  std::vector<const Tensor*> pointers_;
};

class HostKernel final : public OpKernel {
 public:
  HostKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> cpu)
      : OpKernel(c), cpu_(std::move(cpu)) {}
  void compute(OpKernelContext& ctx) override { compute_on_host(*cpu_, ctx); }

 private:
  std::unique_ptr<OpKernel> cpu_;
};

class AsyncHostKernel final : public AsyncOpKernel {
 public:
  AsyncHostKernel(const OpKernelConstruction& c, std::unique_ptr<AsyncOpKernel> cpu)
      : AsyncOpKernel(c), cpu_(std::move(cpu)) {}
  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    auto inputs = std::make_shared<HostInputs>(ctx);
    if (!inputs->copy(ctx)) {
      inputs->restore(ctx);
      done();
      return;
    }
    cpu_->compute_async(ctx, [inputs, &ctx, done = std::move(done)] {
      inputs->restore(ctx);
      done();
    });
  }

 private:
  std::unique_ptr<AsyncOpKernel> cpu_;
};

}  // namespace

void compute_on_host(OpKernel& kernel, OpKernelContext& ctx) {
  HostInputs inputs(ctx);
  if (inputs.copy(ctx)) kernel.compute(ctx);
  inputs.restore(ctx);
}

StatusOr<std::unique_ptr<OpKernel>> make_host_kernel(const OpKernelConstruction& c) {
  TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> cpu,
                          KernelRegistry::global().create(c.node(), c.device(), "CPU"));
  if (auto* async = dynamic_cast<AsyncOpKernel*>(cpu.get())) {
    cpu.release();
    return std::unique_ptr<OpKernel>(new AsyncHostKernel(c, std::unique_ptr<AsyncOpKernel>(async)));
  }
  return std::unique_ptr<OpKernel>(new HostKernel(c, std::move(cpu)));
}

KernelFactory host_kernel() {
  return make_host_kernel;
}

KernelFactory cpu_kernel_as_is() {
  return [](const OpKernelConstruction& c) {
    return KernelRegistry::global().create(c.node(), c.device(), "CPU");
  };
}

}  // namespace troupe
