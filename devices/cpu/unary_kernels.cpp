// CPU kernels for element-wise unary ops: Neg, Square, Sqrt, Exp, Log, Relu, Sigmoid, Tanh.
// IEEE semantics throughout, as in TensorFlow: Sqrt and Log of a negative number give NaN, Log
// of 0 gives -inf; none of them is an error.
#include <cmath>

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
// max(x, 0); NaN stays NaN.
struct ReluFn {
  static constexpr double kCost = 1;
  template <class T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
};
// 1 / (1 + e^-x), evaluated so that e^|x| never overflows: exactly 0 or 1 in the far tails.
struct SigmoidFn {
  static constexpr double kCost = 25;
  template <class T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
};
struct TanhFn {
  static constexpr double kCost = 25;
  template <class T>
  T operator()(T x) const {
    return std::tanh(x);
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
      for (int64_t i = begin; i < end; ++i)
        out[i] = fn(in[i]);
    });
  }
};

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
  must_add_kernel(r, "Relu", kCpu, numeric_kernel<ReluKernel>());
  must_add_kernel(r, "Sigmoid", kCpu, floating_kernel<SigmoidKernel>());
  must_add_kernel(r, "Tanh", kCpu, floating_kernel<TanhKernel>());
}

}  // namespace troupe
