// CPU kernels for element-wise unary ops: Neg, Square, Abs, Sign, Sqrt, Rsqrt, Reciprocal, Exp,
// Expm1, Log, Log1p, Floor, Ceil, Round, Cos, Sin, Erf, Relu, Relu6, Elu, Selu, Softplus,
// Softsign, Sigmoid, Tanh.
// IEEE semantics throughout, as in TensorFlow: Sqrt and Log of a negative number give NaN, Log
// of 0 gives -inf; none of them is an error.
#include <cmath>

#include <Eigen/Core>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

struct NegFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return -x;
  }
};
struct SquareFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return x * x;
  }
};
struct SqrtFn {
  static constexpr double kCost = 10;
  template <class T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
};
struct ExpFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::exp(x);
  }
};
struct LogFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::log(x);
  }
};
struct AbsFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else {
      return x < T(0) ? static_cast<T>(T(0) - x) : x;  // the lowest integer stays itself
    }
  }
};
struct SignFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    return x;  // 0, -0 or NaN
  }
};
struct RsqrtFn {
  static constexpr double kCost = 12;
  template <class T>
  T operator()(T x) const {
    return T(1) / std::sqrt(x);
  }
};
struct ReciprocalFn {
  static constexpr double kCost = 4;
  template <class T>
  T operator()(T x) const {
    return T(1) / x;
  }
};
struct Expm1Fn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::expm1(x);
  }
};
struct Log1pFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::log1p(x);
  }
};
struct FloorFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return std::floor(x);
  }
};
struct CeilFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return std::ceil(x);
  }
};
// Halves go to the even neighbour (the default rounding mode), as TensorFlow's Round.
struct RoundFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return std::nearbyint(x);
  }
};
struct CosFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::cos(x);
  }
};
struct SinFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::sin(x);
  }
};
struct TanFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::tan(x);
  }
};
struct AsinFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::asin(x);
  }
};
struct AcosFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::acos(x);
  }
};
struct AtanFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::atan(x);
  }
};
struct SinhFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::sinh(x);
  }
};
struct CoshFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::cosh(x);
  }
};
struct ErfFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return std::erf(x);
  }
};
// min(max(x, 0), 6).
struct Relu6Fn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return x > T(6) ? T(6) : (x > T(0) ? x : (x != x ? x : T(0)));
  }
};
// x for x > 0, else e^x - 1.
struct EluFn {
  static constexpr double kCost = 20;
  template <class T>
  T operator()(T x) const {
    return x > T(0) ? x : std::expm1(x);
  }
};
// scale * (x for x > 0, else alpha * (e^x - 1)), with the constants of Klambauer et al. that
// TensorFlow uses.
struct SeluFn {
  static constexpr double kCost = 20;
  static constexpr double kScale = 1.0507009873554804934193349852946;
  static constexpr double kAlpha = 1.6732632423543772848170429916717;
  template <class T>
  T operator()(T x) const {
    return x > T(0) ? T(kScale) * x : T(kScale * kAlpha) * std::expm1(x);
  }
};
// log(1 + e^x), computed without overflow.
struct SoftplusFn {
  static constexpr double kCost = 40;
  template <class T>
  T operator()(T x) const {
    return std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x)));
  }
};
// x / (1 + |x|).
struct SoftsignFn {
  static constexpr double kCost = 4;
  template <class T>
  T operator()(T x) const {
    return x / (T(1) + std::abs(x));
  }
};
// max(x, 0); NaN stays NaN.
struct ReluFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
};
// 1 / (1 + e^-x), evaluated so that e^|x| never overflows: exactly 0 or 1 in the far tails.
// A block of floats goes through Eigen's vectorized logistic (TensorFlow's Sigmoid kernel).
struct SigmoidFn {
  static constexpr double kCost = 25;
  template <class T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
  static void block(const float* in, float* out, int64_t n) {
    Eigen::Map<Eigen::ArrayXf>(out, n) = Eigen::Map<const Eigen::ArrayXf>(in, n).logistic();
    // Eigen clamps its input near -88.7, where e^x leaves float's normal range: below it the
    // exact form gives the tiny (or 0) value the far tail has.
    for (int64_t i = 0; i < n; ++i) {
      if (in[i] < -88.f) out[i] = SigmoidFn()(in[i]);
    }
  }
};
// A block of floats goes through Eigen's vectorized tanh, as TensorFlow's Tanh kernel (glibc's
// tanhf, one element at a time, was a third of an LSTM step).
struct TanhFn {
  static constexpr double kCost = 25;
  template <class T>
  T operator()(T x) const {
    return std::tanh(x);
  }
  static void block(const float* in, float* out, int64_t n) {
    Eigen::Map<Eigen::ArrayXf>(out, n) = Eigen::Map<const Eigen::ArrayXf>(in, n).tanh();
  }
};

template <class T, class Fn>
class UnaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const T* in = x.data<T>();
    T* out = ctx.allocate_output(0, x.shape()).template data<T>();
    const Fn fn;
    parallel_for(ctx.device(), x.num_elements(), Fn::kCost, [&](int64_t begin, int64_t end) {
      if constexpr (requires { Fn::block(in, out, int64_t{0}); }) {
        Fn::block(in + begin, out + begin, end - begin);  // a vectorized form for T
      } else {
        for (int64_t i = begin; i < end; ++i)
          out[i] = fn(in[i]);
      }
    });
  }
};

// IsNan, IsInf, IsFinite: a bool for each element.
template <class T, class Test>
class ClassifyKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const T* in = x.data<T>();
    bool* out = ctx.allocate_output(0, x.shape()).template data<bool>();
    parallel_for(ctx.device(), x.num_elements(), 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = Test{}(in[i]);
    });
  }
};
struct IsNanTest {
  template <class T>
  bool operator()(T x) const {
    return std::isnan(x);
  }
};
struct IsInfTest {
  template <class T>
  bool operator()(T x) const {
    return std::isinf(x);
  }
};
struct IsFiniteTest {
  template <class T>
  bool operator()(T x) const {
    return std::isfinite(x);
  }
};
template <class T>
using IsNanKernel = ClassifyKernel<T, IsNanTest>;
template <class T>
using IsInfKernel = ClassifyKernel<T, IsInfTest>;
template <class T>
using IsFiniteKernel = ClassifyKernel<T, IsFiniteTest>;

template <class T>
using NegKernel = UnaryKernel<T, NegFn>;
template <class T>
using SquareKernel = UnaryKernel<T, SquareFn>;
template <class T>
using SqrtKernel = UnaryKernel<T, SqrtFn>;
template <class T>
using ExpKernel = UnaryKernel<T, ExpFn>;
template <class T>
using LogKernel = UnaryKernel<T, LogFn>;
template <class T>
using AbsKernel = UnaryKernel<T, AbsFn>;
template <class T>
using SignKernel = UnaryKernel<T, SignFn>;
template <class T>
using RsqrtKernel = UnaryKernel<T, RsqrtFn>;
template <class T>
using ReciprocalKernel = UnaryKernel<T, ReciprocalFn>;
template <class T>
using Expm1Kernel = UnaryKernel<T, Expm1Fn>;
template <class T>
using Log1pKernel = UnaryKernel<T, Log1pFn>;
template <class T>
using FloorKernel = UnaryKernel<T, FloorFn>;
template <class T>
using CeilKernel = UnaryKernel<T, CeilFn>;
template <class T>
using RoundKernel = UnaryKernel<T, RoundFn>;
template <class T>
using CosKernel = UnaryKernel<T, CosFn>;
template <class T>
using SinKernel = UnaryKernel<T, SinFn>;
template <class T>
using TanKernel = UnaryKernel<T, TanFn>;
template <class T>
using AsinKernel = UnaryKernel<T, AsinFn>;
template <class T>
using AcosKernel = UnaryKernel<T, AcosFn>;
template <class T>
using AtanKernel = UnaryKernel<T, AtanFn>;
template <class T>
using SinhKernel = UnaryKernel<T, SinhFn>;
template <class T>
using CoshKernel = UnaryKernel<T, CoshFn>;
template <class T>
using ErfKernel = UnaryKernel<T, ErfFn>;
template <class T>
using Relu6Kernel = UnaryKernel<T, Relu6Fn>;
template <class T>
using EluKernel = UnaryKernel<T, EluFn>;
template <class T>
using SeluKernel = UnaryKernel<T, SeluFn>;
template <class T>
using SoftplusKernel = UnaryKernel<T, SoftplusFn>;
template <class T>
using SoftsignKernel = UnaryKernel<T, SoftsignFn>;
template <class T>
using ReluKernel = UnaryKernel<T, ReluFn>;
template <class T>
using SigmoidKernel = UnaryKernel<T, SigmoidFn>;
template <class T>
using TanhKernel = UnaryKernel<T, TanhFn>;

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Neg", kCpu, numeric_kernel<NegKernel>());
  must_add_kernel(r, "Square", kCpu, numeric_kernel<SquareKernel>());
  must_add_kernel(r, "Sqrt", kCpu, floating_kernel<SqrtKernel>());
  must_add_kernel(r, "Exp", kCpu, floating_kernel<ExpKernel>());
  must_add_kernel(r, "Log", kCpu, floating_kernel<LogKernel>());
  must_add_kernel(r, "Abs", kCpu, numeric_kernel<AbsKernel>());
  must_add_kernel(r, "Sign", kCpu, numeric_kernel<SignKernel>());
  must_add_kernel(r, "Rsqrt", kCpu, floating_kernel<RsqrtKernel>());
  must_add_kernel(r, "Reciprocal", kCpu, floating_kernel<ReciprocalKernel>());
  must_add_kernel(r, "Expm1", kCpu, floating_kernel<Expm1Kernel>());
  must_add_kernel(r, "Log1p", kCpu, floating_kernel<Log1pKernel>());
  must_add_kernel(r, "Floor", kCpu, floating_kernel<FloorKernel>());
  must_add_kernel(r, "Ceil", kCpu, floating_kernel<CeilKernel>());
  must_add_kernel(r, "Round", kCpu, floating_kernel<RoundKernel>());
  must_add_kernel(r, "Cos", kCpu, floating_kernel<CosKernel>());
  must_add_kernel(r, "Sin", kCpu, floating_kernel<SinKernel>());
  must_add_kernel(r, "Tan", kCpu, floating_kernel<TanKernel>());
  must_add_kernel(r, "Asin", kCpu, floating_kernel<AsinKernel>());
  must_add_kernel(r, "Acos", kCpu, floating_kernel<AcosKernel>());
  must_add_kernel(r, "Atan", kCpu, floating_kernel<AtanKernel>());
  must_add_kernel(r, "Sinh", kCpu, floating_kernel<SinhKernel>());
  must_add_kernel(r, "Cosh", kCpu, floating_kernel<CoshKernel>());
  must_add_kernel(r, "IsNan", kCpu, floating_kernel<IsNanKernel>());
  must_add_kernel(r, "IsInf", kCpu, floating_kernel<IsInfKernel>());
  must_add_kernel(r, "IsFinite", kCpu, floating_kernel<IsFiniteKernel>());
  must_add_kernel(r, "Relu", kCpu, numeric_kernel<ReluKernel>());
  must_add_kernel(r, "Erf", kCpu, floating_kernel<ErfKernel>());
  must_add_kernel(r, "Relu6", kCpu, floating_kernel<Relu6Kernel>());
  must_add_kernel(r, "Elu", kCpu, floating_kernel<EluKernel>());
  must_add_kernel(r, "Selu", kCpu, floating_kernel<SeluKernel>());
  must_add_kernel(r, "Softplus", kCpu, floating_kernel<SoftplusKernel>());
  must_add_kernel(r, "Softsign", kCpu, floating_kernel<SoftsignKernel>());
  must_add_kernel(r, "Sigmoid", kCpu, floating_kernel<SigmoidKernel>());
  must_add_kernel(r, "Tanh", kCpu, floating_kernel<TanhKernel>());
}

}  // namespace troupe
