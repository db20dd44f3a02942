// CPU kernels for the segment reductions: sorted (SegmentSum, SegmentMean, SegmentProd,
// SegmentMin, SegmentMax), unsorted (UnsortedSegmentSum, UnsortedSegmentProd,
// UnsortedSegmentMin, UnsortedSegmentMax), sparse (SparseSegmentSum, SparseSegmentMean,
// SparseSegmentSqrtN, their WithNumSegments forms) and the Mean and SqrtN gradients, with
// TensorFlow 1.x's checks: every index and segment id is checked before anything is written.
#include <cmath>
#include <limits>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

// How a segment's values combine, and the value of an empty segment of an unsorted reduction.
template <class T>
struct SumCombiner {
  static T identity() { return T(0); }
  static void combine(T& into, T value) { into += value; }
};
template <class T>
struct ProdCombiner {
  static T identity() { return T(1); }
  static void combine(T& into, T value) { into *= value; }
};
template <class T>
struct MinCombiner {
  static T identity() { return std::numeric_limits<T>::max(); }
  static void combine(T& into, T value) { into = std::min(into, value); }
};
template <class T>
struct MaxCombiner {
  static T identity() { return std::numeric_limits<T>::lowest(); }
  static void combine(T& into, T value) { into = std::max(into, value); }
};
// Sums, then divides by the segment's count.
template <class T>
struct MeanCombiner : SumCombiner<T> {};

// Sorted segment ids, checked as TensorFlow's kernels check them, one run of equal ids at a
// time: a run followed by a smaller id is "not increasing", then its id must be in
// [0, segments). Records InvalidArgument and returns false if not.
template <class Id>
bool check_sorted_segments(OpKernelContext& ctx, const Id* ids, int64_t n, int64_t segments) {
  for (int64_t begin = 0, end = 0; begin < n; begin = end) {
    while (end < n && ids[end] == ids[begin])
      ++end;
    if (end < n && ids[begin] > ids[end]) {
      ctx.fail_invalid("segment ids are not increasing: segment_ids[{}] = {} after {}", end,
                       ids[end], ids[begin]);
      return false;
    }
    if (ids[begin] < 0 || ids[begin] >= segments) {
      ctx.fail_invalid(
          "Segment id {} out of range [0, {}), possibly because 'segment_ids' input is not "
          "sorted.",
          ids[begin], segments);
      return false;
    }
  }
  return true;
}

// Segment*: data's rows reduced by sorted segment id, TensorFlow's checks in TensorFlow's order.
template <template <class> class Combiner, class T>
class SegmentReductionKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& segment_ids = ctx.input(1);
    if (data.rank() < 1) return ctx.fail_invalid("data must be at least rank 1, got a scalar");
    if (segment_ids.rank() != 1) {
      return ctx.fail_invalid("segment_ids should be a vector, got shape {}",
                              segment_ids.shape().to_string());
    }
    const std::vector<int64_t> ids = int_values(segment_ids);
    const int64_t n = static_cast<int64_t>(ids.size());
    if (n != data.dim(0)) {
      return ctx.fail_invalid(
          "segment_ids should be the same size as dimension 0 of input: {} vs. data of shape {}", n,
          data.shape().to_string());
    }
    const int64_t rows = n == 0 ? 0 : ids[n - 1] + 1;
    if (n > 0 && rows <= 0) {
      return ctx.fail_invalid("segment ids must be >= 0: segment_ids[{}] = {}", n - 1, ids[n - 1]);
    }
    if (!check_sorted_segments(ctx, ids.data(), n, rows)) return;
    std::vector<int64_t> dims = data.shape().dims();
    dims[0] = rows;
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    const int64_t inner = n == 0 ? 0 : data.num_elements() / n;
    T* o = out.data<T>();
    // An empty segment is 0 (1 for Prod), as TensorFlow's sorted reductions.
    std::fill_n(o, out.num_elements(), std::is_same_v<Combiner<T>, ProdCombiner<T>> ? T(1) : T(0));
    const T* in = data.data<T>();
    for (int64_t begin = 0; begin < n;) {
      int64_t end = begin;
      while (end < n && ids[end] == ids[begin])
        ++end;
      T* to = o + ids[begin] * inner;
      std::copy_n(in + begin * inner, inner, to);
      for (int64_t i = begin + 1; i < end; ++i) {
        for (int64_t k = 0; k < inner; ++k)
          Combiner<T>::combine(to[k], in[i * inner + k]);
      }
      if constexpr (std::is_same_v<Combiner<T>, MeanCombiner<T>>) {
        for (int64_t k = 0; k < inner; ++k)
          to[k] /= static_cast<T>(end - begin);
      }
      begin = end;
    }
  }
};

// UnsortedSegment*: slices of data reduced by segment id in any order; negative ids dropped.
template <template <class> class Combiner, class T>
class UnsortedSegmentReductionKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& ids = ctx.input(1);
    const Tensor& num = ctx.input(2);
    if (num.rank() != 0) {
      return ctx.fail_invalid("num_segments must be a scalar, got shape {}",
                              num.shape().to_string());
    }
    const int64_t segments = int_values(num).at(0);
    bool prefix = ids.rank() <= data.rank() && segments >= 0;
    for (int d = 0; prefix && d < ids.rank(); ++d)
      prefix = ids.dim(d) == data.dim(d);
    if (!prefix) {
      return ctx.fail_invalid(
          "segment_ids (shape {}) must be a prefix of data's shape {}, and num_segments ({}) "
          ">= 0",
          ids.shape().to_string(), data.shape().to_string(), segments);
    }
    const std::vector<int64_t> at = int_values(ids);
    const int64_t n = static_cast<int64_t>(at.size());
    for (int64_t i = 0; i < n; ++i) {
      if (at[i] >= segments) {
        return ctx.fail_invalid("segment_ids[{}] = {} is out of range [0, {})", i, at[i], segments);
      }
    }
    std::vector<int64_t> dims = {segments};
    dims.insert(dims.end(), data.shape().dims().begin() + ids.rank(), data.shape().dims().end());
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    T* o = out.data<T>();
    std::fill_n(o, out.num_elements(), Combiner<T>::identity());
    const int64_t inner = n == 0 ? 0 : data.num_elements() / n;
    const T* in = data.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if (at[i] < 0) continue;  // dropped, as TensorFlow does
      T* to = o + at[i] * inner;
      const T* from = in + i * inner;
      for (int64_t k = 0; k < inner; ++k)
        Combiner<T>::combine(to[k], from[k]);
    }
  }
};

enum class Reduction { kSum, kMean, kSqrtN };

// The divisor of a segment of `count` rows (count > 0).
template <Reduction kReduction>
double divisor(int64_t count) {
  if constexpr (kReduction == Reduction::kMean) return static_cast<double>(count);
  if constexpr (kReduction == Reduction::kSqrtN) return std::sqrt(static_cast<double>(count));
  return 1;
}

// Indices and segment_ids must be vectors of one length; records InvalidArgument if not.
bool check_vectors(OpKernelContext& ctx, const Tensor& indices, const Tensor& segment_ids) {
  if (indices.rank() != 1) {
    ctx.fail_invalid("indices should be a vector, got shape {}", indices.shape().to_string());
    return false;
  }
  if (segment_ids.rank() != 1) {
    ctx.fail_invalid("segment_ids should be a vector, got shape {}",
                     segment_ids.shape().to_string());
    return false;
  }
  if (segment_ids.num_elements() != indices.num_elements()) {
    ctx.fail_invalid("segment_ids and indices should have same size, got {} and {}",
                     segment_ids.num_elements(), indices.num_elements());
    return false;
  }
  return true;
}

// Sorted segment ids in [0, segments) (TensorFlow's order of checks), then every index in
// [0, rows); records InvalidArgument if not (an index as the gradient kernels report it when
// `for_gradient`).
bool check_ids_in_order(OpKernelContext& ctx, const std::vector<int64_t>& indices,
                        const int32_t* ids, int64_t segments, int64_t rows, bool for_gradient) {
  if (!check_sorted_segments(ctx, ids, static_cast<int64_t>(indices.size()), segments)) {
    return false;
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= rows) {
      if (for_gradient) {
        ctx.fail_invalid("Index {} out of range [0, {}) at indices[{}]", indices[i], rows, i);
      } else {
        ctx.fail_invalid("indices[{}] == {} out of range [0, {})", i, indices[i], rows);
      }
      return false;
    }
  }
  return true;
}

// The rows of data at `indices`, reduced by segment.
template <Reduction kReduction, bool kWithNumSegments, class T>
class SparseSegmentReductionKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& segment_ids = ctx.input(2);
    if (data.rank() < 1) return ctx.fail_invalid("data must be at least rank 1, got a scalar");
    const std::vector<int64_t> indices = int_values(ctx.input(1));
    const int64_t n = static_cast<int64_t>(indices.size());
    int64_t segments = -1;
    if constexpr (kWithNumSegments) {
      const Tensor& num = ctx.input(3);
      if (num.rank() != 0) {
        return ctx.fail_invalid("num_segments should be a scalar, got shape {}",
                                num.shape().to_string());
      }
      segments = int_values(num).at(0);
      if (segments < 0) return ctx.fail_invalid("num_segments must be >= 0, got {}", segments);
    }
    if (!check_vectors(ctx, ctx.input(1), segment_ids)) return;
    const int32_t* ids = segment_ids.data<int32_t>();
    const int64_t last = n == 0 ? -1 : ids[n - 1];
    if (kWithNumSegments && last >= segments) {
      return ctx.fail_invalid("segment ids must be < num_segments: segment_ids[{}] = {} >= {}",
                              n - 1, last, segments);
    }
    if (n > 0 && last < 0) {
      return ctx.fail_invalid("segment ids must be >= 0: segment_ids[{}] = {}", n - 1, last);
    }
    const int64_t rows = kWithNumSegments ? segments : last + 1;
    if (!check_ids_in_order(ctx, indices, ids, rows, data.dim(0), false)) return;
    std::vector<int64_t> dims = data.shape().dims();
    dims[0] = rows;
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    const int64_t inner = TensorShape(dims).num_elements() / std::max<int64_t>(rows, 1);
    T* o = out.data<T>();
    std::fill_n(o, out.num_elements(), T(0));
    const T* in = data.data<T>();
    for (int64_t begin = 0; begin < n;) {
      int64_t end = begin;
      while (end < n && ids[end] == ids[begin])
        ++end;
      T* to = o + int64_t{ids[begin]} * inner;
      for (int64_t i = begin; i < end; ++i) {
        const T* from = in + indices[i] * inner;
        for (int64_t k = 0; k < inner; ++k)
          to[k] += from[k];
      }
      if constexpr (kReduction != Reduction::kSum) {
        const T scale = static_cast<T>(divisor<kReduction>(end - begin));
        for (int64_t k = 0; k < inner; ++k)
          to[k] /= scale;
      }
      begin = end;
    }
  }
};

// d data of SparseSegmentMean and SparseSegmentSqrtN.
template <Reduction kReduction, class T>
class SparseSegmentReductionGradKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    const Tensor& segment_ids = ctx.input(2);
    const Tensor& dim0 = ctx.input(3);
    if (grad.rank() < 1) return ctx.fail_invalid("grad must be at least rank 1, got a scalar");
    if (dim0.rank() != 0) {
      return ctx.fail_invalid("output_dim0 should be a scalar, got shape {}",
                              dim0.shape().to_string());
    }
    const int64_t rows = dim0.scalar<int32_t>();
    if (rows < 0) return ctx.fail_invalid("output_dim0 must be >= 0, got {}", rows);
    const std::vector<int64_t> indices = int_values(ctx.input(1));
    if (!check_vectors(ctx, ctx.input(1), segment_ids)) return;
    const int32_t* ids = segment_ids.data<int32_t>();
    const int64_t n = static_cast<int64_t>(indices.size());
    if (n > 0 && int64_t{ids[n - 1]} + 1 > grad.dim(0)) {
      return ctx.fail_invalid(
          "Invalid number of segments: the last segment id is {}, grad has {} rows", ids[n - 1],
          grad.dim(0));
    }
    if (!check_ids_in_order(ctx, indices, ids, grad.dim(0), rows, true)) return;
    std::vector<int64_t> dims = grad.shape().dims();
    dims[0] = rows;
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    const int64_t inner = TensorShape(dims).num_elements() / std::max<int64_t>(rows, 1);
    T* o = out.data<T>();
    std::fill_n(o, out.num_elements(), T(0));
    for (int64_t begin = 0; begin < n;) {
      int64_t end = begin;
      while (end < n && ids[end] == ids[begin])
        ++end;
      const T scale = static_cast<T>(divisor<kReduction>(end - begin));
      const T* from = grad.data<T>() + int64_t{ids[begin]} * inner;
      for (int64_t i = begin; i < end; ++i) {
        T* to = o + indices[i] * inner;
        for (int64_t k = 0; k < inner; ++k)
          to[k] += from[k] / scale;
      }
      begin = end;
    }
  }
};

template <class T>
using SparseSegmentSumKernel = SparseSegmentReductionKernel<Reduction::kSum, false, T>;
template <class T>
using SparseSegmentSumWithNumSegmentsKernel =
    SparseSegmentReductionKernel<Reduction::kSum, true, T>;
template <class T>
using SparseSegmentMeanKernel = SparseSegmentReductionKernel<Reduction::kMean, false, T>;
template <class T>
using SparseSegmentMeanWithNumSegmentsKernel =
    SparseSegmentReductionKernel<Reduction::kMean, true, T>;
template <class T>
using SparseSegmentSqrtNKernel = SparseSegmentReductionKernel<Reduction::kSqrtN, false, T>;
template <class T>
using SparseSegmentSqrtNWithNumSegmentsKernel =
    SparseSegmentReductionKernel<Reduction::kSqrtN, true, T>;
template <class T>
using SparseSegmentMeanGradKernel = SparseSegmentReductionGradKernel<Reduction::kMean, T>;
template <class T>
using SparseSegmentSqrtNGradKernel = SparseSegmentReductionGradKernel<Reduction::kSqrtN, T>;

template <class T>
using SegmentSumKernel = SegmentReductionKernel<SumCombiner, T>;
template <class T>
using SegmentMeanKernel = SegmentReductionKernel<MeanCombiner, T>;
template <class T>
using SegmentProdKernel = SegmentReductionKernel<ProdCombiner, T>;
template <class T>
using SegmentMinKernel = SegmentReductionKernel<MinCombiner, T>;
template <class T>
using SegmentMaxKernel = SegmentReductionKernel<MaxCombiner, T>;
template <class T>
using UnsortedSegmentSumKernel = UnsortedSegmentReductionKernel<SumCombiner, T>;
template <class T>
using UnsortedSegmentProdKernel = UnsortedSegmentReductionKernel<ProdCombiner, T>;
template <class T>
using UnsortedSegmentMinKernel = UnsortedSegmentReductionKernel<MinCombiner, T>;
template <class T>
using UnsortedSegmentMaxKernel = UnsortedSegmentReductionKernel<MaxCombiner, T>;

}  // namespace

void register_segment_kernels(KernelRegistry& r) {
  must_add_kernel(r, "SegmentSum", kCpu, numeric_kernel<SegmentSumKernel>());
  must_add_kernel(r, "SegmentMean", kCpu, numeric_kernel<SegmentMeanKernel>());
  must_add_kernel(r, "SegmentProd", kCpu, numeric_kernel<SegmentProdKernel>());
  must_add_kernel(r, "SegmentMin", kCpu, numeric_kernel<SegmentMinKernel>());
  must_add_kernel(r, "SegmentMax", kCpu, numeric_kernel<SegmentMaxKernel>());
  must_add_kernel(r, "UnsortedSegmentSum", kCpu, numeric_kernel<UnsortedSegmentSumKernel>());
  must_add_kernel(r, "UnsortedSegmentProd", kCpu, numeric_kernel<UnsortedSegmentProdKernel>());
  must_add_kernel(r, "UnsortedSegmentMin", kCpu, numeric_kernel<UnsortedSegmentMinKernel>());
  must_add_kernel(r, "UnsortedSegmentMax", kCpu, numeric_kernel<UnsortedSegmentMaxKernel>());
  must_add_kernel(r, "SparseSegmentSum", kCpu, numeric_kernel<SparseSegmentSumKernel>());
  must_add_kernel(r, "SparseSegmentSumWithNumSegments", kCpu,
                  numeric_kernel<SparseSegmentSumWithNumSegmentsKernel>());
  must_add_kernel(r, "SparseSegmentMean", kCpu, floating_kernel<SparseSegmentMeanKernel>());
  must_add_kernel(r, "SparseSegmentMeanWithNumSegments", kCpu,
                  floating_kernel<SparseSegmentMeanWithNumSegmentsKernel>());
  must_add_kernel(r, "SparseSegmentSqrtN", kCpu, floating_kernel<SparseSegmentSqrtNKernel>());
  must_add_kernel(r, "SparseSegmentSqrtNWithNumSegments", kCpu,
                  floating_kernel<SparseSegmentSqrtNWithNumSegmentsKernel>());
  must_add_kernel(r, "SparseSegmentMeanGrad", kCpu, floating_kernel<SparseSegmentMeanGradKernel>());
  must_add_kernel(r, "SparseSegmentSqrtNGrad", kCpu,
                  floating_kernel<SparseSegmentSqrtNGradKernel>());
}

}  // namespace troupe
