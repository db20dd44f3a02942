// CPU kernels for Conv2D and its backprops (graph/ops/conv_ops.hpp), float and double, NHWC.
//
// Each is a matrix product through OpenBLAS (blas_gemm.hpp) on im2col patches: the patches of a
// group of images are a [positions, filter_rows * filter_cols * in_depth] matrix (one row per
// output position, zeros where the window hangs over the padding), and the filter
// [filter_rows, filter_cols, in_depth, out_depth] is already that matrix's partner, [K, out].
//   Conv2D:               out[positions, out]  = patches x filter
//   Conv2DBackpropFilter: dfilter[K, out]     += patches^T x dy        (summed over the groups)
//   Conv2DBackpropInput:  dpatches[positions, K] = dy x filter^T, then added back into the image
// Images are taken in groups so that a group's patches stay within kPatchBudgetBytes, in a
// buffer each kernel keeps between steps (a fresh one per step costs page faults: the kernel
// zeroing 30 MB of new pages took more time than the products).
#include <algorithm>
#include <cstring>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"
#include "troupe/graph/ops/window_geometry.hpp"

namespace troupe {
namespace {

constexpr int64_t kPatchBudgetBytes = int64_t{8} << 20;

struct ConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t out_rows = 0, out_cols = 0;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t pad_top = 0, pad_left = 0;

  int64_t positions() const { return out_rows * out_cols; }
  int64_t patch_size() const { return filter_rows * filter_cols * in_depth; }
};

struct ConvAttributes {
  std::vector<int64_t> strides, dilations;
  Padding padding = Padding::kValid;
};

// The geometry of a convolution of an input of `input` dims by a filter of `filter` dims; fails
// the kernel (naming the shapes) when they do not fit.
bool make_geometry(OpKernelContext& ctx, const ConvAttributes& a, const std::vector<int64_t>& input,
                   const std::vector<int64_t>& filter, ConvGeometry* g) {
  if (input.size() != 4 || filter.size() != 4) {
    ctx.fail_invalid("input and filter must be 4-dimensional, got [{}] and [{}]",
                     fmt::join(input, ","), fmt::join(filter, ","));
    return false;
  }
  if (input[3] != filter[2]) {
    ctx.fail_invalid(
        "the input has {} channels but the filter expects {} (input [{}], filter [{}])", input[3],
        filter[2], fmt::join(input, ","), fmt::join(filter, ","));
    return false;
  }
  *g = {.batch = input[0],
        .in_rows = input[1],
        .in_cols = input[2],
        .in_depth = input[3],
        .filter_rows = filter[0],
        .filter_cols = filter[1],
        .out_depth = filter[3],
        .stride_rows = a.strides[1],
        .stride_cols = a.strides[2],
        .dilation_rows = a.dilations[1],
        .dilation_cols = a.dilations[2]};
  auto rows =
      window_geometry(g->in_rows, g->filter_rows, g->stride_rows, g->dilation_rows, a.padding);
  auto cols =
      window_geometry(g->in_cols, g->filter_cols, g->stride_cols, g->dilation_cols, a.padding);
  if (!rows.ok() || !cols.ok()) {
    ctx.fail_invalid("{} (input [{}], filter [{}])",
                     (rows.ok() ? cols.status() : rows.status()).message(), fmt::join(input, ","),
                     fmt::join(filter, ","));
    return false;
  }
  g->out_rows = rows->output;
  g->out_cols = cols->output;
  g->pad_top = rows->pad_before;
  g->pad_left = cols->pad_before;
  return true;
}

// Images per group so that a group's patches stay within the budget (at least one).
int64_t images_per_group(const ConvGeometry& g, size_t element_size) {
  const int64_t per_image =
      std::max<int64_t>(g.positions() * g.patch_size(), 1) * static_cast<int64_t>(element_size);
  return std::clamp<int64_t>(kPatchBudgetBytes / per_image, 1, std::max<int64_t>(g.batch, 1));
}

// The patches of images [first, first + count) into `patches` ([count * positions, K]).
template <class T>
void im2col(const Device& device, const ConvGeometry& g, const T* input, int64_t first,
            int64_t count, T* patches) {
  const int64_t k = g.patch_size(), depth = g.in_depth;
  parallel_for(device, count * g.out_rows, static_cast<double>(g.out_cols * k),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t n = first + r / g.out_rows, oy = r % g.out_rows;
                   const T* image = input + n * g.in_rows * g.in_cols * depth;
                   for (int64_t ox = 0; ox < g.out_cols; ++ox) {
                     T* row = patches + (r * g.out_cols + ox) * k;
                     for (int64_t ky = 0; ky < g.filter_rows; ++ky) {
                       const int64_t iy = oy * g.stride_rows - g.pad_top + ky * g.dilation_rows;
                       for (int64_t kx = 0; kx < g.filter_cols; ++kx) {
                         const int64_t ix = ox * g.stride_cols - g.pad_left + kx * g.dilation_cols;
                         T* to = row + (ky * g.filter_cols + kx) * depth;
                         if (iy < 0 || iy >= g.in_rows || ix < 0 || ix >= g.in_cols) {
                           std::fill_n(to, depth, T(0));
                         } else {
                           std::copy_n(image + (iy * g.in_cols + ix) * depth, depth, to);
                         }
                       }
                     }
                   }
                 }
               });
}

// Adds the patches of images [first, first + count) back into their places in `image_grad`.
template <class T>
void col2im(const Device& device, const ConvGeometry& g, const T* patches, int64_t first,
            int64_t count, T* image_grad) {
  const int64_t k = g.patch_size(), depth = g.in_depth;
  // One image per task: windows of one image overlap, those of two images do not.
  parallel_for(device, count, static_cast<double>(g.positions() * k),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) {
                   T* image = image_grad + (first + i) * g.in_rows * g.in_cols * depth;
                   for (int64_t p = 0; p < g.positions(); ++p) {
                     const int64_t oy = p / g.out_cols, ox = p % g.out_cols;
                     const T* row = patches + (i * g.positions() + p) * k;
                     for (int64_t ky = 0; ky < g.filter_rows; ++ky) {
                       const int64_t iy = oy * g.stride_rows - g.pad_top + ky * g.dilation_rows;
                       if (iy < 0 || iy >= g.in_rows) continue;
                       for (int64_t kx = 0; kx < g.filter_cols; ++kx) {
                         const int64_t ix = ox * g.stride_cols - g.pad_left + kx * g.dilation_cols;
                         if (ix < 0 || ix >= g.in_cols) continue;
                         const T* from = row + (ky * g.filter_cols + kx) * depth;
                         T* to = image + (iy * g.in_cols + ix) * depth;
                         for (int64_t c = 0; c < depth; ++c)
                           to[c] += from[c];
                       }
                     }
                   }
                 }
               });
}

// out = op(a) x op(b), or zeros when the inner dimension is empty; false (the kernel failed)
// when the matrices are too large for BLAS.
template <class T>
bool gemm(OpKernelContext& ctx, const GemmShape& shape, const T* a, const T* b, T* out) {
  if (shape.rows == 0 || shape.cols == 0) return true;
  if (shape.inner == 0) {
    std::fill_n(out, shape.rows * shape.cols, T(0));
    return true;
  }
  if (!blas_gemm_fits(shape)) {
    ctx.fail_invalid("a product of [{}, {}] by [{}, {}] is too large for BLAS", shape.rows,
                     shape.inner, shape.inner, shape.cols);
    return false;
  }
  blas_gemm(shape, a, b, out);
  return true;
}

template <class T>
class ConvKernelBase : public OpKernel {
 public:
  explicit ConvKernelBase(const OpKernelConstruction& c) : OpKernel(c) {
    attrs_.strides = c.attr<std::vector<int64_t>>("strides");
    attrs_.dilations = c.attr<std::vector<int64_t>>("dilations");
    attrs_.padding = *parse_padding(c.attr<std::string>("padding"));  // checked by the op
  }

 protected:
  // This kernel's buffer `which` (0 or 1) of at least `size` elements, kept for later steps
  // (a kernel computes on one thread at a time).
  T* scratch(int which, int64_t size) {
    std::vector<T>& buffer = scratch_[which];
    if (static_cast<int64_t>(buffer.size()) < size) buffer.resize(static_cast<size_t>(size));
    return buffer.data();
  }

  ConvAttributes attrs_;

 private:
  std::vector<T> scratch_[2];
};

template <class T>
class Conv2DKernel : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    ConvGeometry g;
    if (!make_geometry(ctx, this->attrs_, input.shape().dims(), filter.shape().dims(), &g)) return;
    Tensor& out = ctx.allocate_output(0, TensorShape{g.batch, g.out_rows, g.out_cols, g.out_depth});
    const int64_t group = images_per_group(g, sizeof(T));
    T* patches = this->scratch(0, group * g.positions() * g.patch_size());
    for (int64_t first = 0; first < g.batch; first += group) {
      const int64_t count = std::min(group, g.batch - first);
      im2col(ctx.device(), g, input.data<T>(), first, count, patches);
      const GemmShape shape{count * g.positions(), g.patch_size(), g.out_depth};
      if (!gemm(ctx, shape, patches, filter.data<T>(),
                out.data<T>() + first * g.positions() * g.out_depth)) {
        return;
      }
    }
  }
};

// The int32 sizes of input `i` (4 entries).
bool read_sizes(OpKernelContext& ctx, int i, std::vector<int64_t>* sizes) {
  *sizes = int_values(ctx.input(i));
  if (sizes->size() != 4) {
    ctx.fail_invalid("the sizes must have 4 entries, got shape {}",
                     ctx.input(i).shape().to_string());
    return false;
  }
  for (int64_t s : *sizes) {
    if (s < 0) {
      ctx.fail_invalid("the sizes [{}] must be non-negative", fmt::join(*sizes, ","));
      return false;
    }
  }
  return true;
}

// out_backprop must have the convolution's output shape.
bool check_out_backprop(OpKernelContext& ctx, const ConvGeometry& g, const Tensor& dy) {
  const TensorShape expected{g.batch, g.out_rows, g.out_cols, g.out_depth};
  if (dy.shape() != expected) {
    ctx.fail_invalid("out_backprop has shape {} but the convolution's output has shape {}",
                     dy.shape().to_string(), expected.to_string());
    return false;
  }
  return true;
}

template <class T>
class Conv2DBackpropInputKernel : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  void compute(OpKernelContext& ctx) override {
    std::vector<int64_t> sizes;
    if (!read_sizes(ctx, 0, &sizes)) return;
    const Tensor& filter = ctx.input(1);
    const Tensor& dy = ctx.input(2);
    ConvGeometry g;
    if (!make_geometry(ctx, this->attrs_, sizes, filter.shape().dims(), &g)) return;
    if (!check_out_backprop(ctx, g, dy)) return;
    Tensor& dx = ctx.allocate_output(0, TensorShape(sizes));
    fill_with(dx, nullptr);
    const int64_t group = images_per_group(g, sizeof(T));
    T* patches = this->scratch(0, group * g.positions() * g.patch_size());
    for (int64_t first = 0; first < g.batch; first += group) {
      const int64_t count = std::min(group, g.batch - first);
      const GemmShape shape{.rows = count * g.positions(),
                            .inner = g.out_depth,
                            .cols = g.patch_size(),
                            .transpose_b = true};
      if (!gemm(ctx, shape, dy.data<T>() + first * g.positions() * g.out_depth, filter.data<T>(),
                patches)) {
        return;
      }
      col2im(ctx.device(), g, patches, first, count, dx.data<T>());
    }
  }
};

template <class T>
class Conv2DBackpropFilterKernel : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    std::vector<int64_t> sizes;
    if (!read_sizes(ctx, 1, &sizes)) return;
    const Tensor& dy = ctx.input(2);
    ConvGeometry g;
    if (!make_geometry(ctx, this->attrs_, input.shape().dims(), sizes, &g)) return;
    if (!check_out_backprop(ctx, g, dy)) return;
    Tensor& dfilter = ctx.allocate_output(0, TensorShape(sizes));
    fill_with(dfilter, nullptr);
    const int64_t group = images_per_group(g, sizeof(T));
    T* patches = this->scratch(0, group * g.positions() * g.patch_size());
    T* partial = this->scratch(1, g.patch_size() * g.out_depth);
    T* total = dfilter.data<T>();
    for (int64_t first = 0; first < g.batch; first += group) {
      const int64_t count = std::min(group, g.batch - first);
      im2col(ctx.device(), g, input.data<T>(), first, count, patches);
      const GemmShape shape{.rows = g.patch_size(),
                            .inner = count * g.positions(),
                            .cols = g.out_depth,
                            .transpose_a = true};
      T* into = first == 0 ? total : partial;
      if (!gemm(ctx, shape, patches, dy.data<T>() + first * g.positions() * g.out_depth, into)) {
        return;
      }
      if (into != total) {
        for (int64_t i = 0; i < g.patch_size() * g.out_depth; ++i)
          total[i] += partial[i];
      }
    }
  }
};

// DepthwiseConv2dNative and its two backprops, by direct loops over the output: output
// channel c * M + m of position (r, q) is the sum over the window of input channel c times
// filter (:, :, c, m). The input backprop adds each output gradient back over the window; the
// filter backprop adds it times the input.
enum class Depthwise { kForward, kInput, kFilter };

template <class T>
class DepthwiseKernel : public ConvKernelBase<T> {
 public:
  DepthwiseKernel(const OpKernelConstruction& c, Depthwise which)
      : ConvKernelBase<T>(c), which_(which) {}

  void compute(OpKernelContext& ctx) override {
    std::vector<int64_t> input_dims, filter_dims;
    if (which_ == Depthwise::kInput) {
      input_dims = int_values(ctx.input(0));
    } else {
      input_dims = ctx.input(0).shape().dims();
    }
    if (which_ == Depthwise::kFilter) {
      filter_dims = int_values(ctx.input(1));
    } else {
      filter_dims = ctx.input(1).shape().dims();
    }
    ConvGeometry g;
    if (!make_geometry(ctx, this->attrs_, input_dims, filter_dims, &g)) return;
    const int64_t channels = g.in_depth, multiplier = g.out_depth;
    const std::vector<int64_t> out_dims = {g.batch, g.out_rows, g.out_cols, channels * multiplier};
    const T* x = nullptr;
    const T* f = nullptr;
    const T* dy = nullptr;
    T* result = nullptr;
    if (which_ == Depthwise::kForward) {
      x = ctx.input(0).data<T>();
      f = ctx.input(1).data<T>();
      Tensor& y = ctx.allocate_output(0, TensorShape(out_dims));
      result = y.template data<T>();
      std::fill_n(result, y.num_elements(), T(0));
    } else {
      const Tensor& backprop = ctx.input(2);
      if (backprop.shape().dims() != out_dims) {
        ctx.fail_invalid("out_backprop has shape {}, expected [{}]", backprop.shape().to_string(),
                         fmt::join(out_dims, ","));
        return;
      }
      dy = backprop.data<T>();
      if (which_ == Depthwise::kInput) {
        f = ctx.input(1).data<T>();
        Tensor& dx = ctx.allocate_output(0, TensorShape(input_dims));
        result = dx.template data<T>();
        std::fill_n(result, dx.num_elements(), T(0));
      } else {
        x = ctx.input(0).data<T>();
        Tensor& df = ctx.allocate_output(0, TensorShape(filter_dims));
        result = df.template data<T>();
        std::fill_n(result, df.num_elements(), T(0));
      }
    }
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t r = 0; r < g.out_rows; ++r) {
        for (int64_t q = 0; q < g.out_cols; ++q) {
          const int64_t out_at = ((n * g.out_rows + r) * g.out_cols + q) * channels * multiplier;
          for (int64_t kr = 0; kr < g.filter_rows; ++kr) {
            const int64_t row = r * g.stride_rows - g.pad_top + kr * g.dilation_rows;
            if (row < 0 || row >= g.in_rows) continue;
            for (int64_t kc = 0; kc < g.filter_cols; ++kc) {
              const int64_t col = q * g.stride_cols - g.pad_left + kc * g.dilation_cols;
              if (col < 0 || col >= g.in_cols) continue;
              const int64_t in_at = ((n * g.in_rows + row) * g.in_cols + col) * channels;
              const int64_t filter_at = (kr * g.filter_cols + kc) * channels * multiplier;
              for (int64_t c = 0; c < channels; ++c) {
                for (int64_t m = 0; m < multiplier; ++m) {
                  const int64_t o = c * multiplier + m;
                  switch (which_) {
                    case Depthwise::kForward:
                      result[out_at + o] += x[in_at + c] * f[filter_at + o];
                      break;
                    case Depthwise::kInput:
                      result[in_at + c] += dy[out_at + o] * f[filter_at + o];
                      break;
                    case Depthwise::kFilter:
                      result[filter_at + o] += dy[out_at + o] * x[in_at + c];
                      break;
                  }
                }
              }
            }
          }
        }
      }
    }
  }

 private:
  Depthwise which_;
};

KernelFactory depthwise_factory(Depthwise which) {
  return [which](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    const DataType dtype = c.attr<DataType>("T");
    TROUPE_SWITCH_FLOATING(dtype, T,
                           return std::unique_ptr<OpKernel>(new DepthwiseKernel<T>(c, which)));
    return errors::Unimplemented("node '{}' ({}): no kernel for T = {}", c.name(),
                                 c.node().op_name(), dtype_name(dtype));
  };
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  must_add_kernel(r, "DepthwiseConv2dNative", kCpu, depthwise_factory(Depthwise::kForward));
  must_add_kernel(r, "DepthwiseConv2dNativeBackpropInput", kCpu,
                  depthwise_factory(Depthwise::kInput));
  must_add_kernel(r, "DepthwiseConv2dNativeBackpropFilter", kCpu,
                  depthwise_factory(Depthwise::kFilter));
  must_add_kernel(r, "Conv2D", kCpu, floating_kernel<Conv2DKernel>());
  must_add_kernel(r, "Conv2DBackpropInput", kCpu, floating_kernel<Conv2DBackpropInputKernel>());
  must_add_kernel(r, "Conv2DBackpropFilter", kCpu, floating_kernel<Conv2DBackpropFilterKernel>());
}

}  // namespace troupe
