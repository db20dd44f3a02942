// CPU kernels for Switch, Merge, Assert and CheckNumerics (graph/ops/control_flow_ops.hpp). Switch
// forwards its data to the taken side and marks the other dead. Merge never runs as a kernel: the
// executor forwards its live input itself (devices/executor.hpp), so this kernel only reports a
// misuse.
#include <cmath>

#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

class SwitchKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& pred = ctx.input(1);
    if (pred.rank() != 0) {
      ctx.fail_invalid("pred must be a scalar, got shape {}", pred.shape().to_string());
      return;
    }
    const bool taken = pred.scalar<bool>();
    ctx.set_output(taken ? 1 : 0, ctx.input(0));
    ctx.set_output_dead(taken ? 0 : 1);
  }
};

class MergeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    ctx.set_status(
        errors::Internal("node '{}' (Merge) ran as a kernel: the executor forwards "
                         "Merge's live input",
                         node().name()));
  }
};

class AssertKernel : public OpKernel {
 public:
  explicit AssertKernel(const OpKernelConstruction& c)
      : OpKernel(c), summarize_(static_cast<int>(c.attr<int64_t>("summarize"))) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& condition = ctx.input(0);
    if (condition.rank() != 0) {
      ctx.fail_invalid("condition must be a scalar, got shape {}", condition.shape().to_string());
      return;
    }
    if (condition.scalar<bool>()) return;
    // As TensorFlow's: each data tensor in brackets; a string scalar as it is.
    std::string message = "assertion failed:";
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      message += " [";
      message += t.dtype() == DataType::kString && t.rank() == 0 ? t.scalar<std::string>()
                                                                 : t.summarize(summarize_);
      message += "]";
    }
    ctx.set_status(errors::InvalidArgument("node '{}' (Assert): {}", node().name(), message));
  }

 private:
  int summarize_;
};

class CheckNumericsKernel : public OpKernel {
 public:
  explicit CheckNumericsKernel(const OpKernelConstruction& c)
      : OpKernel(c), message_(c.attr<std::string>("message")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& t = ctx.input(0);
    bool nan = false, inf = false;
    if (t.dtype() == DataType::kFloat) {
      scan(t.flat<float>(), &nan, &inf);
    } else if (t.dtype() == DataType::kDouble) {
      scan(t.flat<double>(), &nan, &inf);
    } else {
      ctx.fail_invalid("CheckNumerics takes a floating-point tensor, got {}",
                       dtype_name(t.dtype()));
      return;
    }
    if (nan || inf) {
      // TensorFlow's wording.
      ctx.set_status(errors::InvalidArgument("node '{}' (CheckNumerics): {} : Tensor had {} values",
                                             node().name(), message_,
                                             nan && inf ? "NaN and Inf"
                                             : nan      ? "NaN"
                                                        : "Inf"));
      return;
    }
    ctx.set_output(0, t);
  }

 private:
  template <class Values>
  static void scan(const Values& values, bool* nan, bool* inf) {
    for (auto v : values) {
      if (std::isnan(v)) *nan = true;
      if (std::isinf(v)) *inf = true;
    }
  }

  std::string message_;
};

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Switch", kCpu, simple_kernel<SwitchKernel>());
  must_add_kernel(r, "Merge", kCpu, simple_kernel<MergeKernel>());
  must_add_kernel(r, "Assert", kCpu, simple_kernel<AssertKernel>());
  must_add_kernel(r, "CheckNumerics", kCpu, simple_kernel<CheckNumericsKernel>());
}

}  // namespace troupe
