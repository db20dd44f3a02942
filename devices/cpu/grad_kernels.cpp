// CPU kernels for the gradient helper ops (graph/ops/grad_ops.hpp): AddN, ZerosLike, OnesLike,
// Size, BroadcastGradientArgs, BroadcastTo, ReluGrad, SigmoidGrad, TanhGrad, BiasAddGrad.
// Sums run in a fixed order (AddN input by input, BiasAddGrad row by row), so results do not
// depend on the number of threads.
#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/ranges.h>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/broadcast.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

template <class T>
class AddNKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& first = ctx.input(0);
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i).shape() != first.shape()) {
        ctx.fail_invalid("input {} has shape {} but input 0 has shape {} (AddN does not broadcast)",
                         i, ctx.input(i).shape().to_string(), first.shape().to_string());
        return;
      }
    }
    if (ctx.num_inputs() == 1) {
      ctx.set_output(0, first);
      return;
    }
    T* out = ctx.allocate_output(0, first.shape()).template data<T>();
    const int n = ctx.num_inputs();
    parallel_for(ctx.device(), first.num_elements(), n, [&](int64_t begin, int64_t end) {
      const T* in0 = ctx.input(0).data<T>();
      std::copy(in0 + begin, in0 + end, out + begin);
      for (int i = 1; i < n; ++i) {
        const T* in = ctx.input(i).data<T>();
        for (int64_t k = begin; k < end; ++k)
          out[k] += in[k];
      }
    });
  }
};

// A tensor shaped like the input, every element `kValue` (0 or 1).
template <int kValue>
class FillLikeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& out = ctx.allocate_output(0, x.shape());
    TROUPE_SWITCH_NUMERIC_OR_BOOL(x.dtype(), T,
                                  std::fill_n(out.data<T>(), out.num_elements(), T(kValue)));
  }
};

class SizeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const int64_t n = ctx.input(0).num_elements();
    Tensor& out = ctx.allocate_output(0, TensorShape{});
    if (out.dtype() == DataType::kInt64) {
      *out.data<int64_t>() = n;
    } else if (n > std::numeric_limits<int32_t>::max()) {
      ctx.fail_invalid("the input has {} elements, too many for out_type int32", n);
    } else {
      *out.data<int32_t>() = static_cast<int32_t>(n);
    }
  }
};

// TensorFlow's BCast: the shapes aligned at the end (missing leading dimensions are 1); an axis
// of the result goes to r0 if s0 has size 1 there and to r1 if s1 has (to both if both do).
template <class Index>
class BroadcastGradientArgsKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    for (int i = 0; i < 2; ++i) {
      if (ctx.input(i).rank() != 1) {
        ctx.fail_invalid("s{} must be a vector (a shape), got shape {}", i,
                         ctx.input(i).shape().to_string());
        return;
      }
    }
    const std::vector<int64_t> s0 = int_values(ctx.input(0)), s1 = int_values(ctx.input(1));
    const size_t rank = std::max(s0.size(), s1.size());
    std::vector<Index> r0, r1;
    for (size_t axis = 0; axis < rank; ++axis) {
      const int64_t d0 = axis + s0.size() >= rank ? s0[axis + s0.size() - rank] : 1;
      const int64_t d1 = axis + s1.size() >= rank ? s1[axis + s1.size() - rank] : 1;
      if (d0 < 0 || d1 < 0 || (d0 != d1 && d0 != 1 && d1 != 1)) {
        ctx.fail_invalid("shapes [{}] and [{}] cannot be broadcast together", fmt::join(s0, ","),
                         fmt::join(s1, ","));
        return;
      }
      if (d0 == 1) r0.push_back(static_cast<Index>(axis));
      if (d1 == 1) r1.push_back(static_cast<Index>(axis));
    }
    ctx.set_output(0, Tensor::from_vector(r0));
    ctx.set_output(1, Tensor::from_vector(r1));
  }
};

KernelFactory broadcast_gradient_args_factory() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    if (c.attr<DataType>("T") == DataType::kInt32) {
      return std::unique_ptr<OpKernel>(new BroadcastGradientArgsKernel<int32_t>(c));
    }
    return std::unique_ptr<OpKernel>(new BroadcastGradientArgsKernel<int64_t>(c));
  };
}

template <class T>
class BroadcastToKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& shape = ctx.input(1);
    if (shape.rank() != 1) {
      ctx.fail_invalid("shape must be a vector, got shape {}", shape.shape().to_string());
      return;
    }
    auto target = TensorShape::from_dims(int_values(shape));
    if (!target.ok()) {
      ctx.fail_invalid("{}", target.status().message());
      return;
    }
    if (input.shape() == *target) {
      ctx.set_output(0, input);
      return;
    }
    auto bcast = Broadcast::make(input.shape(), *target);
    if (!bcast.ok() || bcast->output_shape() != *target) {
      ctx.fail_invalid("cannot broadcast a tensor of shape {} to {}", input.shape().to_string(),
                       target->to_string());
      return;
    }
    const T* in = input.data<T>();
    T* out = ctx.allocate_output(0, *target).template data<T>();
    bcast->for_each_run([&](int64_t o, int64_t i, int64_t step, int64_t, int64_t, int64_t n) {
      if (step == 0) {
        std::fill_n(out + o, n, in[i]);
      } else {
        std::copy(in + i, in + i + n, out + o);
      }
    });
  }
};

// out = fn(a, b) element by element, for two inputs of the same shape.
template <class T, class Fn>
class SameShapeBinaryKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.shape() != b.shape()) {
      ctx.fail_invalid("inputs must have the same shape, got {} and {}", a.shape().to_string(),
                       b.shape().to_string());
      return;
    }
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* out = ctx.allocate_output(0, a.shape()).template data<T>();
    const Fn fn;
    parallel_for(ctx.device(), a.num_elements(), 2, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = fn(pa[i], pb[i]);
    });
  }
};

// (gradients, features): gradients where features > 0, else 0.
struct ReluGradFn {
  template <class T>
  T operator()(T gradient, T feature) const {
    return feature > T(0) ? gradient : T(0);
  }
};
// (y, dy): dy * y * (1 - y).
struct SigmoidGradFn {
  template <class T>
  T operator()(T y, T dy) const {
    return dy * y * (T(1) - y);
  }
};
// (y, dy): dy * (1 - y^2).
struct TanhGradFn {
  template <class T>
  T operator()(T y, T dy) const {
    return dy * (T(1) - y * y);
  }
};

template <class T>
using ReluGradKernel = SameShapeBinaryKernel<T, ReluGradFn>;
template <class T>
using SigmoidGradKernel = SameShapeBinaryKernel<T, SigmoidGradFn>;
template <class T>
using TanhGradKernel = SameShapeBinaryKernel<T, TanhGradFn>;

template <class T>
class BiasAddGradKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  static constexpr int64_t kChannelsSplit = 1024;              // from here on, split the channels
  static constexpr int64_t kBlocks = 64;                       // at most, of rows
  static constexpr int64_t kBlockElements = int64_t{1} << 14;  // at least, per block

  void compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    if (in.rank() < 2) {
      ctx.fail_invalid("out_backprop must have rank >= 2, got shape {}", in.shape().to_string());
      return;
    }
    const int64_t channels = in.dim(in.rank() - 1);
    T* out = ctx.allocate_output(0, TensorShape{channels}).template data<T>();
    std::fill_n(out, channels, T(0));
    if (in.num_elements() == 0) return;
    const int64_t rows = in.num_elements() / channels;
    const T* p = in.data<T>();
    if (channels >= kChannelsSplit) {
      // Wide rows: each range of channels sums its columns over the rows, in row order (a
      // range is a long contiguous run of each row).
      parallel_for(ctx.device(), channels, static_cast<double>(rows),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t row = 0; row < rows; ++row) {
                       const T* r = p + row * channels;
                       for (int64_t c = begin; c < end; ++c)
                         out[c] += r[c];
                     }
                   });
      return;
    }
    // Narrow rows (a convolution's channels): up to kBlocks blocks of rows, each summed along
    // its rows into a partial sum of its own (the inner loop runs along a row's contiguous
    // channels), split over the threads; then the partial sums in block order. The blocks
    // depend on the shape alone, so the result does not depend on the thread count.
    const int64_t blocks = std::clamp<int64_t>(rows * channels / kBlockElements, 1, kBlocks);
    const int64_t block_rows = (rows + blocks - 1) / blocks;
    std::vector<T> partial(static_cast<size_t>(blocks * channels), T(0));
    parallel_for(ctx.device(), blocks, static_cast<double>(block_rows * channels),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t b = begin; b < end; ++b) {
                     T* sum = partial.data() + b * channels;
                     const int64_t last = std::min(rows, (b + 1) * block_rows);
                     for (int64_t row = b * block_rows; row < last; ++row) {
                       const T* r = p + row * channels;
                       for (int64_t c = 0; c < channels; ++c)
                         sum[c] += r[c];
                     }
                   }
                 });
    for (int64_t b = 0; b < blocks; ++b) {
      const T* sum = partial.data() + b * channels;
      for (int64_t c = 0; c < channels; ++c)
        out[c] += sum[c];
    }
  }
};

}  // namespace

void register_grad_kernels(KernelRegistry& r) {
  must_add_kernel(r, "AddN", kCpu, numeric_kernel<AddNKernel>());
  must_add_kernel(r, "ZerosLike", kCpu, simple_kernel<FillLikeKernel<0>>());
  must_add_kernel(r, "OnesLike", kCpu, simple_kernel<FillLikeKernel<1>>());
  must_add_kernel(r, "Size", kCpu, simple_kernel<SizeKernel>());
  must_add_kernel(r, "BroadcastGradientArgs", kCpu, broadcast_gradient_args_factory());
  must_add_kernel(r, "BroadcastTo", kCpu, any_type_kernel<BroadcastToKernel>());
  must_add_kernel(r, "ReluGrad", kCpu, numeric_kernel<ReluGradKernel>());
  must_add_kernel(r, "SigmoidGrad", kCpu, floating_kernel<SigmoidGradKernel>());
  must_add_kernel(r, "TanhGrad", kCpu, floating_kernel<TanhGradKernel>());
  must_add_kernel(r, "BiasAddGrad", kCpu, numeric_kernel<BiasAddGradKernel>());
}

}  // namespace troupe
