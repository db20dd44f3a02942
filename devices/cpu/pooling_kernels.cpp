// CPU kernels for MaxPool, AvgPool and their gradients (graph/ops/conv_ops.hpp), float and
// double, NHWC. A window covers the input positions inside it; padding positions take no part
// (a max over the real elements, an average over their count), as in TensorFlow. MaxPoolGrad
// routes each output's gradient to the first maximum of its window (row-major in the window).
#include <algorithm>
#include <limits>
#include <vector>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"
#include "troupe/graph/ops/window_geometry.hpp"

namespace troupe {
namespace {

struct PoolGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t window_rows = 1, window_cols = 1, stride_rows = 1, stride_cols = 1;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;

  // The input rows [*y0, *y1) and columns [*x0, *x1) of output (oy, ox)'s window.
  void window(int64_t oy, int64_t ox, int64_t* y0, int64_t* y1, int64_t* x0, int64_t* x1) const {
    *y0 = std::max<int64_t>(oy * stride_rows - pad_top, 0);
    *y1 = std::min<int64_t>(oy * stride_rows - pad_top + window_rows, in_rows);
    *x0 = std::max<int64_t>(ox * stride_cols - pad_left, 0);
    *x1 = std::min<int64_t>(ox * stride_cols - pad_left + window_cols, in_cols);
  }
};

class PoolKernelBase : public OpKernel {
 public:
  explicit PoolKernelBase(const OpKernelConstruction& c)
      : OpKernel(c),
        ksize_(c.attr<std::vector<int64_t>>("ksize")),
        strides_(c.attr<std::vector<int64_t>>("strides")),
        padding_(*parse_padding(c.attr<std::string>("padding"))) {}

 protected:
  // The geometry of pooling an input of dims `input`; fails the kernel when it does not fit.
  bool geometry(OpKernelContext& ctx, const std::vector<int64_t>& input, PoolGeometry* g) const {
    if (input.size() != 4) {
      ctx.fail_invalid("the input must be 4-dimensional, got [{}]", fmt::join(input, ","));
      return false;
    }
    *g = {.batch = input[0],
          .in_rows = input[1],
          .in_cols = input[2],
          .depth = input[3],
          .window_rows = ksize_[1],
          .window_cols = ksize_[2],
          .stride_rows = strides_[1],
          .stride_cols = strides_[2]};
    auto rows = window_geometry(g->in_rows, g->window_rows, g->stride_rows, 1, padding_);
    auto cols = window_geometry(g->in_cols, g->window_cols, g->stride_cols, 1, padding_);
    if (!rows.ok() || !cols.ok()) {
      ctx.fail_invalid("{} (input [{}])", (rows.ok() ? cols.status() : rows.status()).message(),
                       fmt::join(input, ","));
      return false;
    }
    g->out_rows = rows->output;
    g->out_cols = cols->output;
    g->pad_top = rows->pad_before;
    g->pad_left = cols->pad_before;
    return true;
  }

  std::vector<int64_t> ksize_, strides_;
  Padding padding_;
};

// Calls fn(n, oy) for every image and output row, split over the device's threads.
template <class Fn>
void for_each_output_row(const Device& device, const PoolGeometry& g, Fn fn) {
  const double cost = static_cast<double>(g.out_cols * g.window_rows * g.window_cols * g.depth);
  parallel_for(device, g.batch * g.out_rows, cost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      fn(r / g.out_rows, r % g.out_rows);
  });
}

// How MaxPool and AvgPool combine a window: each output channel starts at `init`, takes
// `add(acc, x)` for every element of the window, and ends as `finish(acc, count)`.
struct MaxReduce {
  template <class T>
  static T init() {
    return std::numeric_limits<T>::lowest();
  }
  template <class T>
  static T add(T acc, T x) {
    return std::max(acc, x);
  }
  template <class T>
  static T finish(T acc, int64_t) {
    return acc;
  }
};

struct MeanReduce {
  template <class T>
  static T init() {
    return T(0);
  }
  template <class T>
  static T add(T acc, T x) {
    return acc + x;
  }
  template <class T>
  static T finish(T acc, int64_t count) {
    return acc / static_cast<T>(count);
  }
};

template <class T, class Reduce>
class PoolKernel : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    PoolGeometry g;
    if (!geometry(ctx, input.shape().dims(), &g)) return;
    Tensor& out = ctx.allocate_output(0, TensorShape{g.batch, g.out_rows, g.out_cols, g.depth});
    const T* in = input.data<T>();
    T* o = out.data<T>();
    for_each_output_row(ctx.device(), g, [&](int64_t n, int64_t oy) {
      for (int64_t ox = 0; ox < g.out_cols; ++ox) {
        T* acc = o + ((n * g.out_rows + oy) * g.out_cols + ox) * g.depth;
        std::fill_n(acc, g.depth, Reduce::template init<T>());
        int64_t y0, y1, x0, x1;
        g.window(oy, ox, &y0, &y1, &x0, &x1);
        for (int64_t y = y0; y < y1; ++y) {
          for (int64_t x = x0; x < x1; ++x) {
            const T* v = in + ((n * g.in_rows + y) * g.in_cols + x) * g.depth;
            for (int64_t c = 0; c < g.depth; ++c)
              acc[c] = Reduce::add(acc[c], v[c]);
          }
        }
        const int64_t count = (y1 - y0) * (x1 - x0);
        for (int64_t c = 0; c < g.depth; ++c)
          acc[c] = Reduce::finish(acc[c], count);
      }
    });
  }
};

template <class T>
using MaxPoolKernel = PoolKernel<T, MaxReduce>;
template <class T>
using AvgPoolKernel = PoolKernel<T, MeanReduce>;

// Checks that `grad` has the pooling's output shape.
bool check_grad(OpKernelContext& ctx, const PoolGeometry& g, const Tensor& grad) {
  const TensorShape expected{g.batch, g.out_rows, g.out_cols, g.depth};
  if (grad.shape() != expected) {
    ctx.fail_invalid("grad has shape {} but the pooling's output has shape {}",
                     grad.shape().to_string(), expected.to_string());
    return false;
  }
  return true;
}

// Zeroes image n of an input-shaped gradient, by the thread that then adds into it (while the
// image is in its cache, rather than the whole tensor in one pass before).
template <class T>
void zero_image(const PoolGeometry& g, int64_t n, T* d) {
  const int64_t size = g.in_rows * g.in_cols * g.depth;
  std::fill_n(d + n * size, size, T(0));
}

// Calls fn(n) for every image (an image's windows overlap; two images' do not).
template <class Fn>
void for_each_image(const Device& device, const PoolGeometry& g, Fn fn) {
  const double cost =
      static_cast<double>(g.out_rows * g.out_cols * g.window_rows * g.window_cols * g.depth);
  parallel_for(device, g.batch, cost, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      fn(n);
  });
}

template <class T>
class MaxPoolGradKernel : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& grad = ctx.input(2);
    PoolGeometry g;
    if (!geometry(ctx, input.shape().dims(), &g) || !check_grad(ctx, g, grad)) return;
    Tensor& dx = ctx.allocate_output(0, input.shape());
    const T* in = input.data<T>();
    const T* dy = grad.data<T>();
    T* d = dx.data<T>();
    for_each_image(ctx.device(), g, [&](int64_t n) {
      zero_image(g, n, d);
      // Each window's channels side by side: the window's positions in row-major order, and
      // for each the contiguous channels (a strict > keeps each channel's first maximum).
      std::vector<T> best(static_cast<size_t>(g.depth));
      std::vector<int64_t> best_at(static_cast<size_t>(g.depth));
      for (int64_t oy = 0; oy < g.out_rows; ++oy) {
        for (int64_t ox = 0; ox < g.out_cols; ++ox) {
          int64_t y0, y1, x0, x1;
          g.window(oy, ox, &y0, &y1, &x0, &x1);
          if (y0 >= y1 || x0 >= x1) continue;
          const int64_t first = ((n * g.in_rows + y0) * g.in_cols + x0) * g.depth;
          for (int64_t c = 0; c < g.depth; ++c) {
            best[c] = in[first + c];
            best_at[c] = first + c;
          }
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = y == y0 ? x0 + 1 : x0; x < x1; ++x) {
              const int64_t at = ((n * g.in_rows + y) * g.in_cols + x) * g.depth;
              const T* v = in + at;
              for (int64_t c = 0; c < g.depth; ++c) {
                const bool larger = v[c] > best[c];
                best[c] = larger ? v[c] : best[c];
                best_at[c] = larger ? at + c : best_at[c];
              }
            }
          }
          const T* gy = dy + ((n * g.out_rows + oy) * g.out_cols + ox) * g.depth;
          for (int64_t c = 0; c < g.depth; ++c)
            d[best_at[c]] += gy[c];
        }
      }
    });
  }
};

template <class T>
class AvgPoolGradKernel : public PoolKernelBase {
 public:
  using PoolKernelBase::PoolKernelBase;

  void compute(OpKernelContext& ctx) override {
    const std::vector<int64_t> sizes = int_values(ctx.input(0));
    const Tensor& grad = ctx.input(1);
    PoolGeometry g;
    if (!geometry(ctx, sizes, &g) || !check_grad(ctx, g, grad)) return;
    Tensor& dx = ctx.allocate_output(0, TensorShape(sizes));
    const T* dy = grad.data<T>();
    T* d = dx.data<T>();
    for_each_image(ctx.device(), g, [&](int64_t n) {
      zero_image(g, n, d);
      for (int64_t oy = 0; oy < g.out_rows; ++oy) {
        for (int64_t ox = 0; ox < g.out_cols; ++ox) {
          int64_t y0, y1, x0, x1;
          g.window(oy, ox, &y0, &y1, &x0, &x1);
          const T* gy = dy + ((n * g.out_rows + oy) * g.out_cols + ox) * g.depth;
          const T count = static_cast<T>((y1 - y0) * (x1 - x0));
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              T* to = d + ((n * g.in_rows + y) * g.in_cols + x) * g.depth;
              for (int64_t c = 0; c < g.depth; ++c)
                to[c] += gy[c] / count;
            }
          }
        }
      }
    });
  }
};

}  // namespace

void register_pooling_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MaxPool", kCpu, floating_kernel<MaxPoolKernel>());
  must_add_kernel(r, "AvgPool", kCpu, floating_kernel<AvgPoolKernel>());
  must_add_kernel(r, "MaxPoolGrad", kCpu, floating_kernel<MaxPoolGradKernel>());
  must_add_kernel(r, "AvgPoolGrad", kCpu, floating_kernel<AvgPoolGradKernel>());
}

}  // namespace troupe
