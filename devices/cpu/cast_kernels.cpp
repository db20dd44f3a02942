// CPU kernels for Cast (element-wise dtype conversion) and ArgMax (index of the largest element
// along an axis).
//
// Cast follows C++ conversion rules, as TensorFlow does: float to integer truncates toward zero
// (to uint8: the low byte of the integer part, convert_element),
// anything to bool is `value != 0`, bool to a number is 0 or 1. A cast to the same dtype
// forwards the input's buffer.
#include <algorithm>
#include <limits>
#include <vector>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

template <class Src, class Dst>
class CastKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if constexpr (std::is_same_v<Src, Dst>) {
      ctx.set_output(0, x);
    } else {
      const Src* in = x.data<Src>();
      Dst* out = ctx.allocate_output(0, x.shape()).template data<Dst>();
      parallel_for(ctx.device(), x.num_elements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = convert_element<Dst>(in[i]);
      });
    }
  }
};

KernelFactory cast_factory() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    const DataType src = c.attr<DataType>("SrcT"), dst = c.attr<DataType>("DstT");
    TROUPE_SWITCH_NUMERIC_OR_BOOL(src, Src, {
      TROUPE_SWITCH_NUMERIC_OR_BOOL(dst, Dst,
                                    return std::unique_ptr<OpKernel>(new CastKernel<Src, Dst>(c)));
    });
    return errors::Unimplemented("node '{}' ({}): no kernel to cast {} to {}", c.name(),
                                 c.node().op_name(), dtype_name(src), dtype_name(dst));
  };
}

// Viewing the input as [A, R, K] with R the axis: out[a * K + k] = the smallest r maximising
// in[(a * R + r) * K + k]. The first NaN counts as the maximum (as in numpy).
template <class T, class Index>
class ArgMaxKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& dimension = ctx.input(1);
    if (input.rank() < 1) {
      ctx.fail_invalid("input must have rank >= 1, got a scalar");
      return;
    }
    if (dimension.rank() != 0) {
      ctx.fail_invalid("dimension must be a scalar, got shape {}", dimension.shape().to_string());
      return;
    }
    int64_t axis = dimension.dtype() == DataType::kInt32 ? dimension.scalar<int32_t>()
                                                         : dimension.scalar<int64_t>();
    if (axis < -input.rank() || axis >= input.rank()) {
      ctx.fail_invalid("axis {} is out of range for a tensor of rank {} (shape {})", axis,
                       input.rank(), input.shape().to_string());
      return;
    }
    if (axis < 0) axis += input.rank();
    const int64_t R = input.dim(static_cast<int>(axis));
    if (R == 0) {
      ctx.fail_invalid("reduction axis {} is empty in shape {}", axis, input.shape().to_string());
      return;
    }
    if (R - 1 > std::numeric_limits<Index>::max()) {
      ctx.fail_invalid("axis {} has {} elements, too many for output_type {}", axis, R,
                       dtype_name(dtype_of<Index>));
      return;
    }
    TensorShape out_shape;
    int64_t A = 1, K = 1;
    for (int d = 0; d < input.rank(); ++d) {
      if (d == axis) continue;
      out_shape.add_dim(input.dim(d));
      (d < axis ? A : K) *= input.dim(d);
    }
    Index* out = ctx.allocate_output(0, out_shape).template data<Index>();
    const T* in = input.data<T>();
    if (A * K == 0) return;
    if (K == 1) {
      parallel_for(ctx.device(), A, static_cast<double>(R), [&](int64_t begin, int64_t end) {
        for (int64_t a = begin; a < end; ++a)
          out[a] = argmax_run(in + a * R, R);
      });
      return;
    }
    // Compare whole rows of K elements; each range of outputs is split at row boundaries.
    parallel_for(ctx.device(), A * K, static_cast<double>(R), [&](int64_t begin, int64_t end) {
      std::vector<T> best;
      for (int64_t a = begin / K; a * K < end; ++a) {
        const int64_t k0 = std::max(begin, a * K) - a * K, k1 = std::min(end, (a + 1) * K) - a * K;
        const T* block = in + a * R * K;
        Index* o = out + a * K;
        best.assign(block + k0, block + k1);
        std::fill(o + k0, o + k1, Index{0});
        for (int64_t r = 1; r < R; ++r) {
          const T* row = block + r * K;
          for (int64_t k = k0; k < k1; ++k) {
            if (beats(row[k], best[k - k0])) {
              best[k - k0] = row[k];
              o[k] = static_cast<Index>(r);
            }
          }
        }
      }
    });
  }

 private:
  // True if `v` replaces `best` as the maximum seen so far: it is larger, or it is the first NaN.
  static bool beats(T v, T best) { return v > best || (v != v && best == best); }

  static Index argmax_run(const T* p, int64_t n) {
    T best = p[0];
    Index best_index = 0;
    for (int64_t r = 1; r < n; ++r) {
      if (beats(p[r], best)) {
        best = p[r];
        best_index = static_cast<Index>(r);
      }
    }
    return best_index;
  }
};

KernelFactory argmax_factory() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    const DataType dtype = c.attr<DataType>("T");
    const bool int32_output = c.attr<DataType>("output_type") == DataType::kInt32;
    TROUPE_SWITCH_NUMERIC(dtype, T, {
      if (int32_output) return std::unique_ptr<OpKernel>(new ArgMaxKernel<T, int32_t>(c));
      return std::unique_ptr<OpKernel>(new ArgMaxKernel<T, int64_t>(c));
    });
    return errors::Unimplemented("node '{}' ({}): no kernel for T = {}", c.name(),
                                 c.node().op_name(), dtype_name(dtype));
  };
}

}  // namespace

void register_cast_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Cast", kCpu, cast_factory());
  must_add_kernel(r, "ArgMax", kCpu, argmax_factory());
}

}  // namespace troupe
