// CPU kernels for the optimizer updates: Apply<kind> (a dense gradient) and SparseApply<kind>
// (a gradient of some rows, with their indices) for GradientDescent (dense only), Momentum,
// Adagrad, Adam, RMSProp, CenteredRMSProp, Adadelta, FtrlV2, ProximalGradientDescent and
// ProximalAdagrad; and IsVariableInitialized. Each optimizer is one rule, the update of one
// element, which the dense kernel applies to every element and the sparse kernel to the elements
// of the given rows. Updates write the variable and its slots in place (copy on write: a step
// that read the old value keeps it).
#include <algorithm>
#include <cmath>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"

namespace troupe {
namespace {

// The variables behind the reference inputs [0, count), checked to be initialized and of one
// shape; their values ready to be written. Empty after recording an error.
template <class T>
std::vector<T*> writable_refs(OpKernelContext& ctx, int count, const TensorShape** shape) {
  std::vector<Variable*> vars;
  for (int i = 0; i < count; ++i) {
    Variable* var = initialized_variable_input(ctx, i);
    if (var == nullptr) return {};
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

// sign(x) * max(|x| - threshold, 0) / denominator: the proximal step of L1 + L2.
template <class T>
T shrink(T x, T threshold, T denominator) {
  T magnitude = std::max(std::abs(x) - threshold, T(0));
  return (x > T(0) ? magnitude : -magnitude) / denominator;
}

// Reads the scalar inputs of an update, numbered as in the Apply op (the SparseApply op has
// its indices after the gradient, so the inputs after it move one place).
template <class T>
class Scalars {
 public:
  Scalars(OpKernelContext& ctx, int grad, bool sparse) : ctx_(ctx), grad_(grad), sparse_(sparse) {}
  // The scalar at input `i` of the Apply op; 0 after recording an error (see ok()).
  T operator()(int i) {
    if (!ok_) return T(0);
    auto value = scalar_input<T>(ctx_, sparse_ && i > grad_ ? i + 1 : i);
    ok_ = value.has_value();
    return value.value_or(T(0));
  }
  bool ok() const { return ok_; }

 private:
  OpKernelContext& ctx_;
  int grad_;
  bool sparse_;
  bool ok_ = true;
};

// A rule: kRefs (the variable and its slots, the first inputs), kGrad (the gradient's input),
// kCost (cycles per element), a constructor from the kernel's attributes, load() reading the
// scalars (false after recording an error) and apply(refs, i, g) updating element i of each
// ref with gradient g. The formulas are TensorFlow's (graph/ops/training_ops.hpp).
template <class T>
struct GradientDescentRule {
  static constexpr int kRefs = 1, kGrad = 2, kCost = 2;
  explicit GradientDescentRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    alpha = in(1);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const { r[0][i] -= alpha * g; }
  T alpha{};
};

template <class T>
struct MomentumRule {
  static constexpr int kRefs = 2, kGrad = 3, kCost = 4;
  explicit MomentumRule(const OpKernelConstruction& c) : nesterov(c.attr<bool>("use_nesterov")) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(2);
    momentum = in(4);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& accum = r[1][i];
    accum = accum * momentum + g;
    r[0][i] -= nesterov ? lr * g + lr * momentum * accum : lr * accum;
  }
  bool nesterov;
  T lr{}, momentum{};
};

template <class T>
struct AdagradRule {
  static constexpr int kRefs = 2, kGrad = 3, kCost = 8;
  explicit AdagradRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(2);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& accum = r[1][i];
    accum += g * g;
    r[0][i] -= lr * g / std::sqrt(accum);
  }
  T lr{};
};

template <class T>
struct AdamRule {
  static constexpr int kRefs = 3, kGrad = 9, kCost = 16;
  explicit AdamRule(const OpKernelConstruction& c) : nesterov(c.attr<bool>("use_nesterov")) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    const T beta1_power = in(3), beta2_power = in(4), lr = in(5);
    beta1 = in(6);
    beta2 = in(7);
    epsilon = in(8);
    lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& m = r[1][i];
    T& v = r[2][i];
    m += (g - m) * (T(1) - beta1);
    v += (g * g - v) * (T(1) - beta2);
    const T step = nesterov ? (m * beta1 + (T(1) - beta1) * g) : m;
    r[0][i] -= lr_t * step / (std::sqrt(v) + epsilon);
  }
  bool nesterov;
  T lr_t{}, beta1{}, beta2{}, epsilon{};
};

template <class T>
struct RMSPropRule {
  static constexpr int kRefs = 3, kGrad = 7, kCost = 16;
  explicit RMSPropRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(3);
    rho = in(4);
    momentum = in(5);
    epsilon = in(6);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& ms = r[1][i];
    T& mom = r[2][i];
    ms += (g * g - ms) * (T(1) - rho);
    mom = mom * momentum + lr * g / std::sqrt(ms + epsilon);
    r[0][i] -= mom;
  }
  T lr{}, rho{}, momentum{}, epsilon{};
};

template <class T>
struct CenteredRMSPropRule {
  static constexpr int kRefs = 4, kGrad = 8, kCost = 20;
  explicit CenteredRMSPropRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(4);
    rho = in(5);
    momentum = in(6);
    epsilon = in(7);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& mg = r[1][i];
    T& ms = r[2][i];
    T& mom = r[3][i];
    ms += (g * g - ms) * (T(1) - rho);
    mg += (g - mg) * (T(1) - rho);
    mom = mom * momentum + lr * g / std::sqrt(ms - mg * mg + epsilon);
    r[0][i] -= mom;
  }
  T lr{}, rho{}, momentum{}, epsilon{};
};

template <class T>
struct AdadeltaRule {
  static constexpr int kRefs = 3, kGrad = 6, kCost = 20;
  explicit AdadeltaRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(3);
    rho = in(4);
    epsilon = in(5);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& accum = r[1][i];
    T& accum_update = r[2][i];
    accum = accum * rho + g * g * (T(1) - rho);
    const T update = std::sqrt(accum_update + epsilon) / std::sqrt(accum + epsilon) * g;
    accum_update = accum_update * rho + update * update * (T(1) - rho);
    r[0][i] -= update * lr;
  }
  T lr{}, rho{}, epsilon{};
};

template <class T>
struct FtrlV2Rule {
  static constexpr int kRefs = 3, kGrad = 3, kCost = 40;
  explicit FtrlV2Rule(const OpKernelConstruction&) {}
  bool load(OpKernelContext& ctx, Scalars<T>& in) {
    lr = in(4);
    l1 = in(5);
    l2 = in(6);
    shrinkage = in(7);
    lr_power = in(8);
    if (!in.ok()) return false;
    if (!(lr > T(0)) || l1 < T(0) || l2 < T(0) || shrinkage < T(0) || lr_power > T(0)) {
      ctx.fail_invalid(
          "Ftrl needs lr > 0, l1 >= 0, l2 >= 0, l2_shrinkage >= 0 and lr_power <= 0; got lr={}, "
          "l1={}, l2={}, l2_shrinkage={}, lr_power={}",
          lr, l1, l2, shrinkage, lr_power);
      return false;
    }
    return true;
  }
  // accum^-lr_power; the usual lr_power of -0.5 is a square root.
  T power(T x) const { return lr_power == T(-0.5) ? std::sqrt(x) : std::pow(x, -lr_power); }
  void apply(T* const* r, int64_t i, T g) const {
    T& var = r[0][i];
    T& accum = r[1][i];
    T& linear = r[2][i];
    const T shrunk_grad = g + T(2) * shrinkage * var;
    const T new_accum = accum + g * g;
    linear += shrunk_grad - (power(new_accum) - power(accum)) / lr * var;
    const T quadratic = power(new_accum) / lr + T(2) * l2;
    var = std::abs(linear) > l1 ? ((linear > T(0) ? l1 : -l1) - linear) / quadratic : T(0);
    accum = new_accum;
  }
  T lr{}, l1{}, l2{}, shrinkage{}, lr_power{};
};

template <class T>
struct ProximalGradientDescentRule {
  static constexpr int kRefs = 1, kGrad = 4, kCost = 8;
  explicit ProximalGradientDescentRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    alpha = in(1);
    l1 = in(2);
    l2 = in(3);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    r[0][i] = shrink(r[0][i] - alpha * g, alpha * l1, T(1) + alpha * l2);
  }
  T alpha{}, l1{}, l2{};
};

template <class T>
struct ProximalAdagradRule {
  static constexpr int kRefs = 2, kGrad = 5, kCost = 16;
  explicit ProximalAdagradRule(const OpKernelConstruction&) {}
  bool load(OpKernelContext&, Scalars<T>& in) {
    lr = in(2);
    l1 = in(3);
    l2 = in(4);
    return in.ok();
  }
  void apply(T* const* r, int64_t i, T g) const {
    T& accum = r[1][i];
    accum += g * g;
    const T rate = lr / std::sqrt(accum);
    r[0][i] = shrink(r[0][i] - rate * g, rate * l1, T(1) + rate * l2);
  }
  T lr{}, l1{}, l2{};
};

// Apply<kind>: the rule on every element, the gradient of the variable's shape.
template <class Rule, class T>
class ApplyKernel : public OpKernel {
 public:
  explicit ApplyKernel(const OpKernelConstruction& c) : OpKernel(c), rule_(c) {}
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, Rule::kRefs, &shape);
    if (refs.empty()) return;
    Rule rule = rule_;
    Scalars<T> scalars(ctx, Rule::kGrad, /*sparse=*/false);
    if (!rule.load(ctx, scalars)) return;
    const T* grad = grad_input<T>(ctx, Rule::kGrad, *shape);
    if (grad == nullptr) return;
    T* const* r = refs.data();
    parallel_for(ctx.device(), shape->num_elements(), Rule::kCost, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        rule.apply(r, i, grad[i]);
    });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  Rule rule_;
};

// SparseApply<kind>: the rule on the rows `indices` (the input after the gradient), row k of
// the gradient for row indices[k], one index after another.
template <class Rule, class T>
class SparseApplyKernel : public OpKernel {
 public:
  explicit SparseApplyKernel(const OpKernelConstruction& c) : OpKernel(c), rule_(c) {}
  void compute(OpKernelContext& ctx) override {
    const TensorShape* shape = nullptr;
    auto refs = writable_refs<T>(ctx, Rule::kRefs, &shape);
    if (refs.empty()) return;
    Rule rule = rule_;
    Scalars<T> scalars(ctx, Rule::kGrad, /*sparse=*/true);
    if (!rule.load(ctx, scalars)) return;
    const Tensor& grad = ctx.input(Rule::kGrad);
    const Tensor& indices = ctx.input(Rule::kGrad + 1);
    if (shape->rank() < 1) {
      ctx.fail_invalid("a sparse update needs a variable of rank >= 1, got a scalar");
      return;
    }
    if (indices.shape().rank() != 1) {
      ctx.fail_invalid("indices must be a vector, got shape {}", indices.shape().to_string());
      return;
    }
    const int64_t n = indices.num_elements();
    std::vector<int64_t> rows_shape = shape->dims();
    const int64_t rows = rows_shape[0];
    rows_shape[0] = n;
    if (grad.shape() != TensorShape(rows_shape)) {
      ctx.fail_invalid("the gradient has shape {}, expected {} (a row per index)",
                       grad.shape().to_string(), TensorShape(rows_shape).to_string());
      return;
    }
    const std::vector<int64_t> at = int_values(indices);
    for (int64_t k = 0; k < n; ++k) {
      if (at[k] < 0 || at[k] >= rows) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {}), the rows of the variable", k, at[k],
                         rows);
        return;
      }
    }
    const int64_t inner = rows == 0 ? 0 : shape->num_elements() / rows;
    const T* g = grad.data<T>();
    T* const* r = refs.data();
    // Split along a row (never across rows: a duplicate index must see the earlier update).
    parallel_for(ctx.device(), inner, static_cast<double>(Rule::kCost) * static_cast<double>(n),
                 [&](int64_t b, int64_t e) {
                   for (int64_t k = 0; k < n; ++k) {
                     const int64_t base = at[k] * inner;
                     const T* row = g + k * inner;
                     for (int64_t j = b; j < e; ++j)
                       rule.apply(r, base + j, row[j]);
                   }
                 });
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  Rule rule_;
};

template <template <class> class Rule, template <class, class> class Kernel>
KernelFactory update_kernel() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    const DataType dtype = c.attr<DataType>("T");
    TROUPE_SWITCH_FLOATING(dtype, T, return std::unique_ptr<OpKernel>(new Kernel<Rule<T>, T>(c)));
    return errors::Unimplemented("node '{}' ({}): no kernel for T = {}", c.name(),
                                 c.node().op_name(), dtype_name(dtype));
  };
}

template <template <class> class Rule>
void add_update_kernels(KernelRegistry& r, const std::string& kind, bool sparse = true) {
  must_add_kernel(r, "Apply" + kind, kCpu, update_kernel<Rule, ApplyKernel>());
  if (sparse)
    must_add_kernel(r, "SparseApply" + kind, kCpu, update_kernel<Rule, SparseApplyKernel>());
}

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
  add_update_kernels<GradientDescentRule>(r, "GradientDescent", /*sparse=*/false);
  add_update_kernels<MomentumRule>(r, "Momentum");
  add_update_kernels<AdagradRule>(r, "Adagrad");
  add_update_kernels<AdamRule>(r, "Adam");
  add_update_kernels<RMSPropRule>(r, "RMSProp");
  add_update_kernels<CenteredRMSPropRule>(r, "CenteredRMSProp");
  add_update_kernels<AdadeltaRule>(r, "Adadelta");
  add_update_kernels<FtrlV2Rule>(r, "FtrlV2");
  add_update_kernels<ProximalGradientDescentRule>(r, "ProximalGradientDescent");
  add_update_kernels<ProximalAdagradRule>(r, "ProximalAdagrad");
  must_add_kernel(r, "IsVariableInitialized", kCpu, simple_kernel<IsVariableInitializedKernel>());
}

}  // namespace troupe
