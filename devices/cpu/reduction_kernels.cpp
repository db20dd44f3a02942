// CPU kernels for reductions over a set of axes: Sum, Prod, Mean, Min, Max.
//
// The input's dimensions are collapsed into alternating groups of kept and reduced dimensions
// (size-1 dimensions dropped, neighbours of the same kind merged). Each reduced group is then
// one pass over a [A, R, K] view, innermost group first, with a tight loop for each of the two
// layouts: K == 1 (contiguous runs: reduce-all, the last axis of a matrix) and K > 1 (whole rows
// combined element-wise: axis 0 of a matrix). Reduce-all is split into fixed blocks, so its
// result does not depend on the number of threads.
//
// Edge cases, as in TensorFlow: reducing an empty dimension gives the identity (0 for Sum, +inf
// or the type's max for Min, -inf or its lowest for Max); Mean over no elements is NaN for
// floats and an InvalidArgument error for integers (an integer division by zero); integer Mean
// truncates toward zero. Min and Max propagate NaN.
#include <algorithm>
#include <limits>
#include <vector>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

// Each reducer has an identity and `apply`, which propagates NaN. Min and Max also have
// `ordered`, the same for numbers (NaN is not handled), which vectorises better: loops that use
// it track NaN on the side (kTracksNaN).
struct SumReducer {
  static constexpr bool kTracksNaN = false;
  template <class T>
  static T identity() {
    return T(0);
  }
  template <class T>
  static T apply(T acc, T x) {
    return acc + x;
  }
};

struct ProdReducer {
  static constexpr bool kTracksNaN = false;
  template <class T>
  static T identity() {
    return T(1);
  }
  template <class T>
  static T apply(T acc, T x) {
    return acc * x;
  }
};

struct MaxReducer {
  static constexpr bool kTracksNaN = true;
  template <class T>
  static T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  template <class T>
  static T apply(T acc, T x) {
    return (x > acc || x != x) ? x : acc;  // x != x: a NaN wins, and then stays
  }
  template <class T>
  static T ordered(T acc, T x) {
    return x > acc ? x : acc;
  }
};

struct MinReducer {
  static constexpr bool kTracksNaN = true;
  template <class T>
  static T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  template <class T>
  static T apply(T acc, T x) {
    return (x < acc || x != x) ? x : acc;
  }
  template <class T>
  static T ordered(T acc, T x) {
    return x < acc ? x : acc;
  }
};

// Reduces p[0, n) with independent accumulators, so the loop vectorises.
template <class Reducer, class T>
T reduce_run(const T* p, int64_t n) {
  constexpr int kLanes = 8;
  constexpr bool kNaNFlags = Reducer::kTracksNaN && std::is_floating_point_v<T>;
  T acc[kLanes];
  int nan[kLanes] = {};
  std::fill_n(acc, kLanes, Reducer::template identity<T>());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const T x = p[i + j];
      if constexpr (kNaNFlags) {
        acc[j] = Reducer::ordered(acc[j], x);
        nan[j] |= x != x;
      } else {
        acc[j] = Reducer::apply(acc[j], x);
      }
    }
  }
  for (; i < n; ++i)
    acc[0] = Reducer::apply(acc[0], p[i]);
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j)
      acc[j] = Reducer::apply(acc[j], acc[j + width]);
  }
  if constexpr (kNaNFlags) {
    for (int j = 0; j < kLanes; ++j) {
      if (nan[j]) return std::numeric_limits<T>::quiet_NaN();
    }
  }
  return acc[0];
}

// out[a * K + k] = reduction over r of in[(a * R + r) * K + k], for R >= 1.
template <class Reducer, class T>
void reduce_pass(const Device& device, const T* in, int64_t A, int64_t R, int64_t K, T* out) {
  if (K == 1 && A == 1) {
    // Reduce-all: fixed blocks reduced in parallel, then their partial results in order.
    constexpr int64_t kBlock = 8192;
    const int64_t blocks = (R + kBlock - 1) / kBlock;
    std::vector<T> partial(blocks);
    parallel_for(device, blocks, kBlock, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        partial[b] = reduce_run<Reducer>(in + b * kBlock, std::min(kBlock, R - b * kBlock));
      }
    });
    out[0] = reduce_run<Reducer>(partial.data(), blocks);
    return;
  }
  if (K == 1) {
    parallel_for(device, A, static_cast<double>(R), [&](int64_t begin, int64_t end) {
      for (int64_t a = begin; a < end; ++a)
        out[a] = reduce_run<Reducer>(in + a * R, R);
    });
    return;
  }
  // Combine whole rows of K elements; each range of outputs is split at row boundaries.
  parallel_for(device, A * K, static_cast<double>(R), [&](int64_t begin, int64_t end) {
    for (int64_t a = begin / K; a * K < end; ++a) {
      const int64_t k0 = std::max(begin, a * K) - a * K, k1 = std::min(end, (a + 1) * K) - a * K;
      const T* block = in + a * R * K;
      T* o = out + a * K;
      std::copy(block + k0, block + k1, o + k0);
      for (int64_t r = 1; r < R; ++r) {
        const T* row = block + r * K;
        for (int64_t k = k0; k < k1; ++k)
          o[k] = Reducer::apply(o[k], row[k]);
      }
    }
  });
}

// Reduces `in` over the dimensions marked in `reduced` into `out`, which has room for the
// result. The reduced dimensions must hold more than one element in all, none of them zero.
template <class Reducer, class T>
void reduce(const Device& device, const Tensor& in, const std::vector<bool>& reduced, T* out) {
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  for (int d = 0; d < in.rank(); ++d) {
    if (in.dim(d) == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduced[d]) {
      groups.back().size *= in.dim(d);
    } else {
      groups.push_back({in.dim(d), reduced[d]});
    }
  }
  // Passes from the innermost reduced group out; each writes a smaller temporary, the last
  // writes `out`. After a pass, everything from the reduced group on is one kept group.
  std::vector<size_t> passes;
  for (size_t g = groups.size(); g-- > 0;) {
    if (groups[g].reduced) passes.push_back(g);
  }
  const T* src = in.data<T>();
  std::vector<T> temp[2];
  int64_t inner = 1;  // elements after the group being reduced
  for (size_t g = groups.size(); g-- > passes.front() + 1;)
    inner *= groups[g].size;
  for (size_t p = 0; p < passes.size(); ++p) {
    const size_t g = passes[p];
    int64_t outer = 1;
    for (size_t i = 0; i < g; ++i)
      outer *= groups[i].size;
    T* dst = out;
    if (p + 1 < passes.size()) {
      temp[p % 2].resize(outer * inner);
      dst = temp[p % 2].data();
    }
    reduce_pass<Reducer>(device, src, outer, groups[g].size, inner, dst);
    src = dst;
    if (p + 1 < passes.size()) {
      for (size_t i = passes[p + 1] + 1; i < g; ++i)
        inner *= groups[i].size;
    }
  }
}

template <class T, class Reducer, bool kMean>
class ReductionKernel : public OpKernel {
 public:
  explicit ReductionKernel(const OpKernelConstruction& c)
      : OpKernel(c), keep_dims_(c.attr<bool>("keep_dims")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const Tensor& axes = ctx.input(1);
    if (axes.rank() > 1) {
      ctx.fail_invalid("reduction_indices must be a scalar or vector, got shape {}",
                       axes.shape().to_string());
      return;
    }
    std::vector<bool> reduced(in.rank(), false);
    for (int64_t i = 0; i < axes.num_elements(); ++i) {
      int64_t axis =
          axes.dtype() == DataType::kInt32 ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
      if (axis < -in.rank() || axis >= in.rank()) {
        ctx.fail_invalid("axis {} is out of range for a tensor of rank {} (shape {})", axis,
                         in.rank(), in.shape().to_string());
        return;
      }
      int64_t named = axis < 0 ? axis + in.rank() : axis;
      if (reduced[named]) {
        ctx.fail_invalid("axes contain a duplicate: axis {} is named twice (axes given: {})", named,
                         axes.summarize(16));
        return;
      }
      reduced[named] = true;
    }
    TensorShape out_shape;
    int64_t count = 1;  // input elements per output element
    for (int d = 0; d < in.rank(); ++d) {
      if (!reduced[d]) {
        out_shape.add_dim(in.dim(d));
      } else {
        count *= in.dim(d);
        if (keep_dims_) out_shape.add_dim(1);
      }
    }
    if (count == 1) {
      // Nothing is reduced: the same elements in the output's shape.
      ctx.set_output(0, std::move(in.reshaped(out_shape)).value());
      return;
    }
    Tensor& out = ctx.allocate_output(0, out_shape);
    const int64_t n = out.num_elements();
    T* o = out.data<T>();
    if (n == 0) return;
    if (count == 0) {
      if constexpr (kMean && !std::is_floating_point_v<T>) {
        ctx.fail_invalid("Mean of {} over zero elements (input shape {}) divides by zero",
                         dtype_name(dtype_of<T>), in.shape().to_string());
        return;
      }
      std::fill_n(o, n,
                  kMean ? std::numeric_limits<T>::quiet_NaN() : Reducer::template identity<T>());
      return;
    }
    reduce<Reducer>(ctx.device(), in, reduced, o);
    if constexpr (kMean) {
      const T divisor = static_cast<T>(count);
      for (int64_t i = 0; i < n; ++i)
        o[i] /= divisor;
    }
  }

 private:
  bool keep_dims_;
};

template <class T>
using SumKernel = ReductionKernel<T, SumReducer, false>;
template <class T>
using ProdKernel = ReductionKernel<T, ProdReducer, false>;
template <class T>
using MeanKernel = ReductionKernel<T, SumReducer, true>;
template <class T>
using MinKernel = ReductionKernel<T, MinReducer, false>;
template <class T>
using MaxKernel = ReductionKernel<T, MaxReducer, false>;

}  // namespace

void register_reduction_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Sum", kCpu, numeric_kernel<SumKernel>());
  must_add_kernel(r, "Mean", kCpu, numeric_kernel<MeanKernel>());
  must_add_kernel(r, "Prod", kCpu, numeric_kernel<ProdKernel>());
  must_add_kernel(r, "Min", kCpu, numeric_kernel<MinKernel>());
  must_add_kernel(r, "Max", kCpu, numeric_kernel<MaxKernel>());
}

}  // namespace troupe
