// CPU kernels for variables: Variable (a reference to the device's variable), Assign,
// AssignAdd, AssignSub (copy-on-write in place updates), CountUpTo.
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"

namespace troupe {
namespace {

// The variable behind reference input 0, or nullptr after recording the error.
Variable* variable_input(OpKernelContext& ctx) {
  auto* var = ctx.input_resource<Variable>(0);
  if (var == nullptr) {
    ctx.fail_invalid("input 0 is {}, not a variable", ctx.input_ref_ptr(0)->debug_name());
  }
  return var;
}

class VariableKernel : public OpKernel {
 public:
  explicit VariableKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        dtype_(c.attr<DataType>("dtype")),
        shape_(c.attr<PartialShape>("shape")) {}

  void compute(OpKernelContext& ctx) override {
    // A node-level container wins; otherwise the session's.
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto var = ctx.device().resources().lookup_or_create_variable(container, name_, dtype_, shape_);
    if (!var.ok()) {
      ctx.fail_invalid("{}", var.status().message());
      return;
    }
    ctx.set_output_ref(0, std::move(var).value());
  }

 private:
  std::string name_;
  std::string container_;
  DataType dtype_;
  PartialShape shape_;
};

class AssignKernel : public OpKernel {
 public:
  explicit AssignKernel(const OpKernelConstruction& c)
      : OpKernel(c), validate_shape_(c.attr<bool>("validate_shape")) {}

  void compute(OpKernelContext& ctx) override {
    Variable* var_ptr = variable_input(ctx);
    if (var_ptr == nullptr) return;
    Variable& var = *var_ptr;
    const Tensor& value = ctx.input(1);
    if (validate_shape_) {
      if (!var.declared_shape().matches(value.shape())) {
        ctx.fail_invalid("value of shape {} does not fit variable '{}' of shape {}",
                         value.shape().to_string(), var.name(), var.declared_shape().to_string());
        return;
      }
      if (var.is_initialized() && var.value().shape() != value.shape()) {
        ctx.fail_invalid("value of shape {} does not match variable '{}', which holds shape {}",
                         value.shape().to_string(), var.name(), var.value().shape().to_string());
        return;
      }
    }
    var.assign(value);
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  bool validate_shape_;
};

template <class T, bool kSubtract>
class AssignUpdateKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    Variable* var_ptr = initialized_variable_input(ctx, 0);
    if (var_ptr == nullptr) return;
    Variable& var = *var_ptr;
    const Tensor& delta = ctx.input(1);
    if (var.value().shape() != delta.shape()) {
      ctx.fail_invalid("update of shape {} does not match variable '{}' of shape {}",
                       delta.shape().to_string(), var.name(), var.value().shape().to_string());
      return;
    }
    Tensor& value = var.mutable_value();
    T* out = value.data<T>();
    const T* in = delta.data<T>();
    parallel_for(ctx.device(), value.num_elements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if constexpr (kSubtract) {
          out[i] -= in[i];
        } else {
          out[i] += in[i];
        }
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
using AssignAddKernel = AssignUpdateKernel<T, false>;
template <class T>
using AssignSubKernel = AssignUpdateKernel<T, true>;

template <class T>
class CountUpToKernel : public OpKernel {
 public:
  explicit CountUpToKernel(const OpKernelConstruction& c)
      : OpKernel(c), limit_(c.attr<int64_t>("limit")) {}

  void compute(OpKernelContext& ctx) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return;
    T before = var->value().scalar<T>();
    if (static_cast<int64_t>(before) >= limit_) {
      ctx.set_status(
          errors::OutOfRange("node '{}' (CountUpTo): reached limit of {}", node().name(), limit_));
      return;
    }
    *var->mutable_value().data<T>() = before + 1;
    *ctx.allocate_output(0, TensorShape{}).data<T>() = before;
  }

 private:
  int64_t limit_;
};

}  // namespace

void register_state_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Variable", kCpu, simple_kernel<VariableKernel>());
  must_add_kernel(r, "Assign", kCpu, simple_kernel<AssignKernel>());
  must_add_kernel(r, "AssignAdd", kCpu, numeric_kernel<AssignAddKernel>());
  must_add_kernel(r, "AssignSub", kCpu, numeric_kernel<AssignSubKernel>());
  must_add_kernel(r, "CountUpTo", kCpu, numeric_kernel<CountUpToKernel>());
}

}  // namespace troupe
