// CPU kernels for the optimizer updates (ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
// ApplyAdam) and IsVariableInitialized. Updates write the variable and its slots in place
// (copy on write: a step that read the old value keeps it).
#include <cmath>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

// The variables behind the reference inputs [0, count), checked to be initialized and of one
// shape; their values ready to be written. Empty after recording an error.
template <class T>
std::vector<T*> writable_refs(OpKernelContext& ctx, int count, const TensorShape** shape) {
  std::vector<Variable*> vars;
  for (int i = 0; i < count; ++i) {
    auto* var = ctx.input_resource<Variable>(i);
    if (var == nullptr) {
      ctx.fail_invalid("input {} is {}, not a variable", i, ctx.input_ref_ptr(i)->debug_name());
      return {};
    }
    if (!var->is_initialized()) {
      ctx.set_status(errors::FailedPrecondition(
          "node '{}' ({}): attempting to use uninitialized value '{}'; run the variable's "
          "initializer first",
          ctx.node().name(), ctx.node().op_name(), var->name()));
      return {};
    }
    if (i > 0 && var->value().shape() != vars[0]->value().shape()) {
      ctx.fail_invalid("slot '{}' has shape {}, variable '{}' has {}", var->name(),
                       var->value().shape().to_string(), vars[0]->name(),
                       vars[0]->value().shape().to_string());
      return {};
    }
    vars.push_back(var);
  }
  std::vector<T*> data;
  for (Variable* var : vars)
    data.push_back(var->mutable_value().template data<T>());
  *shape = &vars[0]->value().shape();
  return data;
}

// The scalar input `i`, or nullopt after recording an error.
template <class T>
std::optional<T> scalar_input(OpKernelContext& ctx, int i) {
  if (ctx.input(i).num_elements() != 1) {
    ctx.fail_invalid("input {} must be a scalar, got shape {}", i,
                     ctx.input(i).shape().to_string());
    return std::nullopt;
  }
  return *ctx.input(i).data<T>();
}

// The gradient input `i`, checked against the variable's shape.
template <class T>
const T* grad_input(OpKernelContext& ctx, int i, const TensorShape& shape) {
  if (ctx.input(i).shape() != shape) {
    ctx.fail_invalid("gradient has shape {}, the variable {}", ctx.input(i).shape().to_string(),
                     shape.to_string());
    return nullptr;
  }
  return ctx.input(i).data<T>();
}

template <class T>
class ApplyGradientDescentKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 1, &shape);
    if (refs.empty()) return;
    auto alpha = scalar_input<T>(ctx, 1);
    const T* delta = alpha ? grad_input<T>(ctx, 2, *shape) : nullptr;
    if (delta == nullptr) return;
    T* var = refs[0];
    const T a = *alpha;
    parallel_for(ctx.device(), shape->num_elements(), 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        var[i] -= a * delta[i];
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyMomentumKernel : public OpKernel {
 public:
  explicit ApplyMomentumKernel(const OpKernelConstruction& c)
      : OpKernel(c), nesterov_(c.attr<bool>("use_nesterov")) {}
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 2, &shape);
    if (refs.empty()) return;
    auto lr = scalar_input<T>(ctx, 2);
    auto momentum = lr ? scalar_input<T>(ctx, 4) : std::nullopt;
    const T* grad = momentum ? grad_input<T>(ctx, 3, *shape) : nullptr;
    if (grad == nullptr) return;
    T* var = refs[0];
    T* accum = refs[1];
    const T l = *lr, m = *momentum;
    parallel_for(ctx.device(), shape->num_elements(), 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        accum[i] = accum[i] * m + grad[i];
        var[i] -= nesterov_ ? l * grad[i] + l * m * accum[i] : l * accum[i];
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  bool nesterov_;
};

template <class T>
class ApplyAdagradKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 2, &shape);
    if (refs.empty()) return;
    auto lr = scalar_input<T>(ctx, 2);
    const T* grad = lr ? grad_input<T>(ctx, 3, *shape) : nullptr;
    if (grad == nullptr) return;
    T* var = refs[0];
    T* accum = refs[1];
    const T l = *lr;
    parallel_for(ctx.device(), shape->num_elements(), 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        accum[i] += grad[i] * grad[i];
        var[i] -= l * grad[i] / std::sqrt(accum[i]);
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyAdamKernel : public OpKernel {
 public:
  explicit ApplyAdamKernel(const OpKernelConstruction& c)
      : OpKernel(c), nesterov_(c.attr<bool>("use_nesterov")) {}
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 3, &shape);
    if (refs.empty()) return;
    std::optional<T> scalars[6];
    for (int i = 0; i < 6; ++i) {
      scalars[i] = scalar_input<T>(ctx, 3 + i);
      if (!scalars[i]) return;
    }
    const T* grad = grad_input<T>(ctx, 9, *shape);
    if (grad == nullptr) return;
    const T beta1_power = *scalars[0], beta2_power = *scalars[1], lr = *scalars[2];
    const T beta1 = *scalars[3], beta2 = *scalars[4], epsilon = *scalars[5];
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    T* var = refs[0];
    T* m = refs[1];
    T* v = refs[2];
    parallel_for(ctx.device(), shape->num_elements(), 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        m[i] += (grad[i] - m[i]) * (T(1) - beta1);
        v[i] += (grad[i] * grad[i] - v[i]) * (T(1) - beta2);
        T step = nesterov_ ? (m[i] * beta1 + (T(1) - beta1) * grad[i]) : m[i];
        var[i] -= lr_t * step / (std::sqrt(v[i]) + epsilon);
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  bool nesterov_;
};

class IsVariableInitializedKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    auto* var = ctx.input_resource<Variable>(0);
    ctx.set_output(0, Tensor(var != nullptr && var->is_initialized()));
  }
};

}  // namespace

void register_training_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ApplyGradientDescent", kCpu, floating_kernel<ApplyGradientDescentKernel>());
  must_add_kernel(r, "ApplyMomentum", kCpu, floating_kernel<ApplyMomentumKernel>());
  must_add_kernel(r, "ApplyAdagrad", kCpu, floating_kernel<ApplyAdagradKernel>());
  must_add_kernel(r, "ApplyAdam", kCpu, floating_kernel<ApplyAdamKernel>());
  must_add_kernel(r, "IsVariableInitialized", kCpu, simple_kernel<IsVariableInitializedKernel>());
}

}  // namespace troupe
