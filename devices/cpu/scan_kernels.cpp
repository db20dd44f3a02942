// CPU kernels for Cumsum, Cumprod and TopKV2 (graph/ops/math_ops.hpp). A scan views its input
// as [outer, n, inner] around the axis and runs along n for each (outer, inner) pair; TopKV2
// sorts each row's indices by value (a stable partial sort, so ties keep the lower index).
#include <algorithm>
#include <numeric>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

template <class T, bool kProduct>
class ScanKernel : public OpKernel {
 public:
  explicit ScanKernel(const OpKernelConstruction& c)
      : OpKernel(c), exclusive_(c.attr<bool>("exclusive")), reverse_(c.attr<bool>("reverse")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& axis_tensor = ctx.input(1);
    const int64_t rank = x.rank();
    if (axis_tensor.num_elements() != 1 || axis_tensor.rank() != 0) {
      ctx.fail_invalid("axis must be a scalar, got shape {}", axis_tensor.shape().to_string());
      return;
    }
    int64_t axis = int_values(axis_tensor)[0];
    if (axis < -rank || axis >= rank) {
      ctx.fail_invalid("axis {} is out of range for a tensor of rank {}", axis, rank);
      return;
    }
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= x.dim(static_cast<int>(d));
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= x.dim(static_cast<int>(d));
    const int64_t n = x.dim(static_cast<int>(axis));
    Tensor& out = ctx.allocate_output(0, x.shape());
    const T* in = x.data<T>();
    T* o = out.data<T>();
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t b = 0; b < inner; ++b) {
        T running = kProduct ? T(1) : T(0);
        for (int64_t step = 0; step < n; ++step) {
          const int64_t i = reverse_ ? n - 1 - step : step;
          const int64_t at = (a * n + i) * inner + b;
          if (exclusive_) {
            o[at] = running;
            running = kProduct ? running * in[at] : running + in[at];
          } else {
            running = kProduct ? running * in[at] : running + in[at];
            o[at] = running;
          }
        }
      }
    }
  }

 private:
  bool exclusive_;
  bool reverse_;
};

template <class T>
using CumsumKernel = ScanKernel<T, false>;
template <class T>
using CumprodKernel = ScanKernel<T, true>;

template <class T>
class TopKKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& k_tensor = ctx.input(1);
    if (k_tensor.rank() != 0) {
      ctx.fail_invalid("k must be a scalar, got shape {}", k_tensor.shape().to_string());
      return;
    }
    const int64_t k = k_tensor.scalar<int32_t>();
    if (input.rank() < 1) {
      ctx.fail_invalid("input must have rank >= 1, got a scalar");
      return;
    }
    const int64_t n = input.dim(input.rank() - 1);
    if (k < 0 || k > n) {
      ctx.fail_invalid("input must have at least k={} columns, got {} (k must be >= 0)", k, n);
      return;
    }
    std::vector<int64_t> dims = input.shape().dims();
    dims.back() = k;
    Tensor& values = ctx.allocate_output(0, TensorShape(dims));
    Tensor& indices = ctx.allocate_output(1, TensorShape(dims));
    const int64_t rows = n == 0 ? 0 : input.num_elements() / n;
    std::vector<int32_t> order(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = input.data<T>() + r * n;
      std::iota(order.begin(), order.end(), 0);
      // Larger first; NaN counts as larger than any number, as TensorFlow's.
      auto before = [row](int32_t a, int32_t b) {
        const T x = row[a], y = row[b];
        if constexpr (std::is_floating_point_v<T>) {
          if (x != x || y != y) return (x != x) && (y == y);
        }
        return x > y;
      };
      std::stable_sort(order.begin(), order.end(), before);
      for (int64_t i = 0; i < k; ++i) {
        values.data<T>()[r * k + i] = row[order[i]];
        indices.data<int32_t>()[r * k + i] = order[i];
      }
    }
  }
};

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Cumsum", kCpu, numeric_kernel<CumsumKernel>());
  must_add_kernel(r, "Cumprod", kCpu, numeric_kernel<CumprodKernel>());
  must_add_kernel(r, "TopKV2", kCpu, numeric_kernel<TopKKernel>());
}

}  // namespace troupe
