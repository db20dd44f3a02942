// CPU kernels for element-wise binary ops with numpy broadcasting: Add, Sub, Mul, Div, FloorDiv,
// FloorMod, Maximum, Minimum, Pow, SquaredDifference, the comparisons, LogicalAnd and LogicalOr.
#include <algorithm>
#include <cmath>

#include "troupe/devices/cpu/broadcast.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

struct AddFn {
  template <class T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
struct SubFn {
  template <class T>
  T operator()(T a, T b) const {
    return a - b;
  }
};
struct MulFn {
  template <class T>
  T operator()(T a, T b) const {
    return a * b;
  }
};
struct DivFn {
  // For signed integers, lowest / -1 wraps to lowest (the hardware would trap). Unsigned
  // (uint8) results wrap modulo 256, as TensorFlow's.
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
    }
    return a / b;
  }
};
// Division rounded toward negative infinity (Python's //).
struct FloorDivFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
      }
      const T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    } else {
      return std::floor(a / b);
    }
  }
};
// The remainder of FloorDiv: the sign of the divisor (Python's %).
struct FloorModFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == T(-1)) return T(0);
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    } else {
      const T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};
struct LogicalAndFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOrFn {
  bool operator()(bool a, bool b) const { return a || b; }
};
// NaN wins from either side, as in TensorFlow.
struct MaximumFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};
struct MinimumFn {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};
struct PowFn {
  template <class T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};
struct Atan2Fn {
  template <class T>
  T operator()(T y, T x) const {
    return std::atan2(y, x);
  }
};
struct SquaredDifferenceFn {
  template <class T>
  T operator()(T a, T b) const {
    return (a - b) * (a - b);
  }
};
struct EqualFn {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};
struct NotEqualFn {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a != b;
  }
};
struct LessFn {
  template <class T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LessEqualFn {
  template <class T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct GreaterFn {
  template <class T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GreaterEqualFn {
  template <class T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};

template <class T, class Fn, class Out = T>
class BinaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if constexpr ((std::is_same_v<Fn, DivFn> || std::is_same_v<Fn, FloorDivFn> ||
                   std::is_same_v<Fn, FloorModFn>)&&std::is_integral_v<T>) {
      auto divisors = b.flat<T>();
      if (std::find(divisors.begin(), divisors.end(), T{0}) != divisors.end()) {
        ctx.fail_invalid("integer division by zero");
        return;
      }
    }
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const Fn fn;
    if (a.shape() == b.shape()) {
      Out* out = ctx.allocate_output(0, a.shape()).template data<Out>();
      parallel_for(ctx.device(), a.num_elements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = fn(pa[i], pb[i]);
      });
      return;
    }
    if (b.num_elements() == 1 && b.rank() <= a.rank()) {
      Out* out = ctx.allocate_output(0, a.shape()).template data<Out>();
      const T scalar = pb[0];
      parallel_for(ctx.device(), a.num_elements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = fn(pa[i], scalar);
      });
      return;
    }
    if (a.num_elements() == 1 && a.rank() <= b.rank()) {
      Out* out = ctx.allocate_output(0, b.shape()).template data<Out>();
      const T scalar = pa[0];
      parallel_for(ctx.device(), b.num_elements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = fn(scalar, pb[i]);
      });
      return;
    }
    auto bcast = Broadcast::make(a.shape(), b.shape());
    if (!bcast.ok()) {
      ctx.fail_invalid("{}", bcast.status().message());
      return;
    }
    Out* out = ctx.allocate_output(0, bcast->output_shape()).template data<Out>();
    bcast->for_each_run([&](int64_t o, int64_t ia, int64_t sa, int64_t ib, int64_t sb, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        out[o + i] = fn(pa[ia + i * sa], pb[ib + i * sb]);
    });
  }
};

template <class T>
using AddKernel = BinaryKernel<T, AddFn>;
template <class T>
using SubKernel = BinaryKernel<T, SubFn>;
template <class T>
using MulKernel = BinaryKernel<T, MulFn>;
template <class T>
using DivKernel = BinaryKernel<T, DivFn>;
template <class T>
using FloorDivKernel = BinaryKernel<T, FloorDivFn>;
template <class T>
using FloorModKernel = BinaryKernel<T, FloorModFn>;
template <class T>
using MaximumKernel = BinaryKernel<T, MaximumFn>;
template <class T>
using MinimumKernel = BinaryKernel<T, MinimumFn>;
template <class T>
using PowKernel = BinaryKernel<T, PowFn>;
template <class T>
using Atan2Kernel = BinaryKernel<T, Atan2Fn>;
template <class T>
using SquaredDifferenceKernel = BinaryKernel<T, SquaredDifferenceFn>;
template <class T>
using EqualKernel = BinaryKernel<T, EqualFn, bool>;
template <class T>
using NotEqualKernel = BinaryKernel<T, NotEqualFn, bool>;
template <class T>
using LessKernel = BinaryKernel<T, LessFn, bool>;
template <class T>
using LessEqualKernel = BinaryKernel<T, LessEqualFn, bool>;
template <class T>
using GreaterKernel = BinaryKernel<T, GreaterFn, bool>;
template <class T>
using GreaterEqualKernel = BinaryKernel<T, GreaterEqualFn, bool>;

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Add", kCpu, numeric_or_uint8_kernel<AddKernel>());
  must_add_kernel(r, "Sub", kCpu, numeric_or_uint8_kernel<SubKernel>());
  must_add_kernel(r, "Mul", kCpu, numeric_or_uint8_kernel<MulKernel>());
  must_add_kernel(r, "Div", kCpu, numeric_or_uint8_kernel<DivKernel>());
  must_add_kernel(r, "FloorDiv", kCpu, numeric_or_uint8_kernel<FloorDivKernel>());
  must_add_kernel(r, "FloorMod", kCpu, numeric_kernel<FloorModKernel>());
  must_add_kernel(r, "LogicalAnd", kCpu, simple_kernel<BinaryKernel<bool, LogicalAndFn>>());
  must_add_kernel(r, "LogicalOr", kCpu, simple_kernel<BinaryKernel<bool, LogicalOrFn>>());
  must_add_kernel(r, "Maximum", kCpu, numeric_kernel<MaximumKernel>());
  must_add_kernel(r, "Minimum", kCpu, numeric_kernel<MinimumKernel>());
  must_add_kernel(r, "Pow", kCpu, floating_kernel<PowKernel>());
  must_add_kernel(r, "Atan2", kCpu, floating_kernel<Atan2Kernel>());
  must_add_kernel(r, "SquaredDifference", kCpu, numeric_kernel<SquaredDifferenceKernel>());
  must_add_kernel(r, "Equal", kCpu, any_type_kernel<EqualKernel>());
  must_add_kernel(r, "NotEqual", kCpu, any_type_kernel<NotEqualKernel>());
  must_add_kernel(r, "Less", kCpu, numeric_or_uint8_kernel<LessKernel>());
  must_add_kernel(r, "LessEqual", kCpu, numeric_or_uint8_kernel<LessEqualKernel>());
  must_add_kernel(r, "Greater", kCpu, numeric_or_uint8_kernel<GreaterKernel>());
  must_add_kernel(r, "GreaterEqual", kCpu, numeric_or_uint8_kernel<GreaterEqualKernel>());
}

}  // namespace troupe
