// CPU kernels for the optimizer updates (ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
// ApplyAdam, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdadelta, ApplyFtrlV2,
// ApplyProximalGradientDescent, ApplyProximalAdagrad) and IsVariableInitialized. Updates write the
// variable and its slots in place (copy on write: a step that read the old value keeps it).
#include <algorithm>
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

// The scalar inputs `first`..`first + count - 1` into `out`; false after recording an error.
template <class T>
bool scalar_inputs(OpKernelContext& ctx, int first, int count, T* out) {
  for (int i = 0; i < count; ++i) {
    auto value = scalar_input<T>(ctx, first + i);
    if (!value) return false;
    out[i] = *value;
  }
  return true;
}

// sign(x) * max(|x| - threshold, 0) / denominator: the proximal step of L1 + L2.
template <class T>
T shrink(T x, T threshold, T denominator) {
  T magnitude = std::max(std::abs(x) - threshold, T(0));
  return (x > T(0) ? magnitude : -magnitude) / denominator;
}

template <class T>
class ApplyRMSPropKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 3, &shape);
    T h[4];  // lr, rho, momentum, epsilon
    if (refs.empty() || !scalar_inputs<T>(ctx, 3, 4, h)) return;
    const T* grad = grad_input<T>(ctx, 7, *shape);
    if (grad == nullptr) return;
    T *var = refs[0], *ms = refs[1], *mom = refs[2];
    parallel_for(ctx.device(), shape->num_elements(), 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ms[i] += (grad[i] * grad[i] - ms[i]) * (T(1) - h[1]);
        mom[i] = mom[i] * h[2] + h[0] * grad[i] / std::sqrt(ms[i] + h[3]);
        var[i] -= mom[i];
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyCenteredRMSPropKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 4, &shape);
    T h[4];  // lr, rho, momentum, epsilon
    if (refs.empty() || !scalar_inputs<T>(ctx, 4, 4, h)) return;
    const T* grad = grad_input<T>(ctx, 8, *shape);
    if (grad == nullptr) return;
    T *var = refs[0], *mg = refs[1], *ms = refs[2], *mom = refs[3];
    parallel_for(ctx.device(), shape->num_elements(), 20, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ms[i] += (grad[i] * grad[i] - ms[i]) * (T(1) - h[1]);
        mg[i] += (grad[i] - mg[i]) * (T(1) - h[1]);
        mom[i] = mom[i] * h[2] + h[0] * grad[i] / std::sqrt(ms[i] - mg[i] * mg[i] + h[3]);
        var[i] -= mom[i];
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyAdadeltaKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 3, &shape);
    T h[3];  // lr, rho, epsilon
    if (refs.empty() || !scalar_inputs<T>(ctx, 3, 3, h)) return;
    const T* grad = grad_input<T>(ctx, 6, *shape);
    if (grad == nullptr) return;
    T *var = refs[0], *accum = refs[1], *accum_update = refs[2];
    const T lr = h[0], rho = h[1], epsilon = h[2];
    parallel_for(ctx.device(), shape->num_elements(), 20, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        accum[i] = accum[i] * rho + grad[i] * grad[i] * (T(1) - rho);
        const T update =
            std::sqrt(accum_update[i] + epsilon) / std::sqrt(accum[i] + epsilon) * grad[i];
        accum_update[i] = accum_update[i] * rho + update * update * (T(1) - rho);
        var[i] -= update * lr;
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyFtrlV2Kernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 3, &shape);
    if (refs.empty()) return;
    const T* grad = grad_input<T>(ctx, 3, *shape);
    T h[5];  // lr, l1, l2, l2_shrinkage, lr_power
    if (grad == nullptr || !scalar_inputs<T>(ctx, 4, 5, h)) return;
    const T lr = h[0], l1 = h[1], l2 = h[2], shrinkage = h[3], lr_power = h[4];
    if (!(lr > T(0)) || l1 < T(0) || l2 < T(0) || shrinkage < T(0) || lr_power > T(0)) {
      ctx.fail_invalid(
          "Ftrl needs lr > 0, l1 >= 0, l2 >= 0, l2_shrinkage >= 0 and lr_power <= 0; got lr={}, "
          "l1={}, l2={}, l2_shrinkage={}, lr_power={}",
          lr, l1, l2, shrinkage, lr_power);
      return;
    }
    T *var = refs[0], *accum = refs[1], *linear = refs[2];
    // accum^-lr_power; the usual lr_power of -0.5 is a square root.
    auto power = [lr_power](T x) {
      return lr_power == T(-0.5) ? std::sqrt(x) : std::pow(x, -lr_power);
    };
    parallel_for(ctx.device(), shape->num_elements(), 40, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T shrunk_grad = grad[i] + T(2) * shrinkage * var[i];
        const T new_accum = accum[i] + grad[i] * grad[i];
        linear[i] += shrunk_grad - (power(new_accum) - power(accum[i])) / lr * var[i];
        const T quadratic = power(new_accum) / lr + T(2) * l2;
        var[i] = std::abs(linear[i]) > l1 ? ((linear[i] > T(0) ? l1 : -l1) - linear[i]) / quadratic
                                          : T(0);
        accum[i] = new_accum;
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyProximalGradientDescentKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 1, &shape);
    T h[3];  // alpha, l1, l2
    if (refs.empty() || !scalar_inputs<T>(ctx, 1, 3, h)) return;
    const T* delta = grad_input<T>(ctx, 4, *shape);
    if (delta == nullptr) return;
    T* var = refs[0];
    const T alpha = h[0], l1 = h[1], l2 = h[2];
    parallel_for(ctx.device(), shape->num_elements(), 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        var[i] = shrink(var[i] - alpha * delta[i], alpha * l1, T(1) + alpha * l2);
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

template <class T>
class ApplyProximalAdagradKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, 2, &shape);
    T h[3];  // lr, l1, l2
    if (refs.empty() || !scalar_inputs<T>(ctx, 2, 3, h)) return;
    const T* grad = grad_input<T>(ctx, 5, *shape);
    if (grad == nullptr) return;
    T *var = refs[0], *accum = refs[1];
    const T lr = h[0], l1 = h[1], l2 = h[2];
    parallel_for(ctx.device(), shape->num_elements(), 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        accum[i] += grad[i] * grad[i];
        const T rate = lr / std::sqrt(accum[i]);
        var[i] = shrink(var[i] - rate * grad[i], rate * l1, T(1) + rate * l2);
      }
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
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
  must_add_kernel(r, "ApplyRMSProp", kCpu, floating_kernel<ApplyRMSPropKernel>());
  must_add_kernel(r, "ApplyCenteredRMSProp", kCpu, floating_kernel<ApplyCenteredRMSPropKernel>());
  must_add_kernel(r, "ApplyAdadelta", kCpu, floating_kernel<ApplyAdadeltaKernel>());
  must_add_kernel(r, "ApplyFtrlV2", kCpu, floating_kernel<ApplyFtrlV2Kernel>());
  must_add_kernel(r, "ApplyProximalGradientDescent", kCpu,
                  floating_kernel<ApplyProximalGradientDescentKernel>());
  must_add_kernel(r, "ApplyProximalAdagrad", kCpu, floating_kernel<ApplyProximalAdagradKernel>());
  must_add_kernel(r, "IsVariableInitialized", kCpu, simple_kernel<IsVariableInitializedKernel>());
}

}  // namespace troupe
