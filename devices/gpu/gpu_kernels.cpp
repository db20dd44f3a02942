// The GPU device's kernels (see gpu_kernels.hpp): shapes are worked out on the host, the
// element work is queued on the device's stream (cuda_kernels.hpp, cuBLAS), and what a CUDA
// kernel does not handle goes to the CPU kernel on host copies.
#include "troupe/devices/gpu/gpu_kernels.hpp"

#include <algorithm>
#include <climits>
#include <deque>
#include <optional>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"
#include "troupe/devices/gpu/cuda_kernels.hpp"
#include "troupe/devices/gpu/cudnn_convolution.hpp"
#include "troupe/devices/gpu/gpu_context.hpp"
#include "troupe/devices/gpu/host_kernel.hpp"
#include "troupe/graph/ops/window_geometry.hpp"

namespace troupe {
namespace {

using cuda::BinaryOp;
using cuda::UnaryOp;

// A kernel computed on the GPU, with the CPU kernel of its node as the fallback.
class GpuKernel : public OpKernel {
 public:
  GpuKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : OpKernel(c), host_(std::move(host)) {}

  void compute(OpKernelContext& ctx) final {
    GpuContext& gpu = *ctx.device().gpu();
    if (Status s = gpu.activate(); !s.ok()) return ctx.set_status(std::move(s));
    GpuProfiler* profiler = gpu.profiler();
    GpuProfiler::Mark mark;
    if (profiler != nullptr) mark = profiler->begin();
    const bool on_gpu = compute_on_gpu(ctx, gpu);
    if (!on_gpu) compute_on_host(*host_, ctx);
    if (profiler != nullptr) {
      profiler->end(mark, node().name(), on_gpu ? node().op_name() : node().op_name() + " (host)");
    }
    if (!on_gpu) return;
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess) {
      ctx.set_status(errors::Internal("node '{}' ({}) on {}: launching its CUDA kernel: {}",
                                      node().name(), node().op_name(), ctx.device().name(),
                                      cudaGetErrorString(error)));
    }
  }

 protected:
  // Queues the work, or records an error in ctx; false leaves the case to the CPU kernel.
  virtual bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) = 0;

 private:
  std::unique_ptr<OpKernel> host_;
};

// Builds Kernel for float32, and the host kernel for every other dtype of attribute `attr`.
template <class Kernel>
KernelFactory float_on_gpu(std::string attr = "T") {
  return [attr](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> host, make_host_kernel(c));
    if (c.attr<DataType>(attr) != DataType::kFloat) return host;
    return std::unique_ptr<OpKernel>(new Kernel(c, std::move(host)));
  };
}

// The inputs of a GPU kernel in GPU memory: those on the host are copied, and the copies kept
// until the kernel is queued (a freed block is reused only by later work on the stream).
class GpuInputs {
 public:
  GpuInputs(OpKernelContext& ctx, GpuContext& gpu) : ctx_(ctx), gpu_(gpu) {}
  // Input i on the GPU; nullptr after recording the error.
  const Tensor* get(int i) { return on_gpu(ctx_.input(i)); }
  const Tensor* on_gpu(const Tensor& t) {
    if (!t.on_host()) return &t;
    auto copy = gpu_.to_device(t);
    if (!copy.ok()) {
      ctx_.set_status(copy.status());
      return nullptr;
    }
    return &copies_.emplace_back(std::move(copy).value());
  }
  static const float* data(const Tensor* t) { return t->data<float>(); }

 private:
  OpKernelContext& ctx_;
  GpuContext& gpu_;
  std::deque<Tensor> copies_;
};

// A fresh float output i in GPU memory; nullptr after recording the error.
float* gpu_output(OpKernelContext& ctx, GpuContext& gpu, int i, const TensorShape& shape) {
  auto tensor = gpu.allocate(DataType::kFloat, shape);
  if (!tensor.ok()) {
    ctx.set_status(tensor.status());
    return nullptr;
  }
  ctx.set_output(i, std::move(tensor).value());
  float* data = ctx.outputs()[i].value.data<float>();
  return data != nullptr ? data : reinterpret_cast<float*>(alignof(float));  // empty: not null
}

// ---- element-wise ----

template <UnaryOp kOp>
class UnaryKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, x->shape());
    if (out == nullptr) return true;
    cuda::unary(gpu.stream(), kOp, GpuInputs::data(x), out, x->num_elements());
    return true;
  }
};

// The broadcast of shapes a and b, or nullopt if they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_dims(const TensorShape& a, const TensorShape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ai = a.rank() - rank + i, bi = b.rank() - rank + i;
    const int64_t da = ai >= 0 ? a.dim(ai) : 1, db = bi >= 0 ? b.dim(bi) : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    dims[i] = da == 1 ? db : da;
  }
  return dims;
}

// The strides of `shape` read as the trailing dims of `dims` (0 where it is broadcast).
void broadcast_strides(const TensorShape& shape, const std::vector<int64_t>& dims,
                       int64_t* strides) {
  const int rank = static_cast<int>(dims.size());
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int si = shape.rank() - rank + i;
    const int64_t d = si >= 0 ? shape.dim(si) : 1;
    strides[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
}

template <BinaryOp kOp, bool kSameShapeOnly = false>
class BinaryKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& sa = ctx.input(0).shape();
    const TensorShape& sb = ctx.input(1).shape();
    if (kSameShapeOnly && sa != sb) return false;
    auto dims = broadcast_dims(sa, sb);
    if (!dims || dims->size() > static_cast<size_t>(cuda::kMaxRank)) return false;
    const TensorShape shape(*dims);
    GpuInputs in(ctx, gpu);
    const Tensor* a = in.get(0);
    const Tensor* b = a == nullptr ? nullptr : in.get(1);
    if (b == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, shape);
    if (out == nullptr) return true;
    const int64_t n = shape.num_elements();
    const float *pa = GpuInputs::data(a), *pb = GpuInputs::data(b);
    const bool a_whole = sa == shape, b_whole = sb == shape;
    if ((a_whole || sa.num_elements() == 1) && (b_whole || sb.num_elements() == 1)) {
      cuda::binary(gpu.stream(), kOp, pa, pb, out, n, !a_whole, !b_whole);
      return true;
    }
    cuda::Broadcast broadcast;
    broadcast.rank = static_cast<int>(dims->size());
    std::copy(dims->begin(), dims->end(), broadcast.dims);
    broadcast_strides(sa, *dims, broadcast.a_strides);
    broadcast_strides(sb, *dims, broadcast.b_strides);
    cuda::binary(gpu.stream(), kOp, pa, pb, out, n, broadcast);
    return true;
  }
};

// out[o, i] = scale * sum over r of x[o, r, i] (cuda::reduce_sum), with the scratch memory it
// needs; false after recording an error.
bool reduce_sum(OpKernelContext& ctx, GpuContext& gpu, const float* x, float* out, int64_t outer,
                int64_t reduced, int64_t inner, float scale) {
  const int parts = cuda::reduce_parts(outer, reduced, inner);
  Tensor scratch;
  if (parts > 1) {
    auto allocated = gpu.allocate(DataType::kFloat, TensorShape{parts, outer * inner});
    if (!allocated.ok()) {
      ctx.set_status(allocated.status());
      return false;
    }
    scratch = std::move(allocated).value();
  }
  cuda::reduce_sum(gpu.stream(), x, out, outer, reduced, inner, scale, scratch.data<float>());
  return true;
}

class BiasAddKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& xs = ctx.input(0).shape();
    const TensorShape& bs = ctx.input(1).shape();
    if (xs.rank() < 2 || bs.rank() != 1 || bs.dim(0) != xs.dim(xs.rank() - 1)) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    const Tensor* b = x == nullptr ? nullptr : in.get(1);
    if (b == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, xs);
    if (out == nullptr) return true;
    cuda::bias_add(gpu.stream(), GpuInputs::data(x), GpuInputs::data(b), out, xs.num_elements(),
                   bs.dim(0));
    return true;
  }
};

class BiasAddGradKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& gs = ctx.input(0).shape();
    if (gs.rank() < 2) return false;
    const int64_t channels = gs.dim(gs.rank() - 1);
    GpuInputs in(ctx, gpu);
    const Tensor* g = in.get(0);
    if (g == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, TensorShape{channels});
    if (out == nullptr) return true;
    if (channels == 0) return true;
    const int64_t rows = gs.num_elements() / channels;
    if (rows == 0) {
      cuda::fill(gpu.stream(), out, channels, 0.0f);
    } else {
      reduce_sum(ctx, gpu, GpuInputs::data(g), out, 1, rows, channels, 1.0f);
    }
    return true;
  }
};

// ---- reductions ----

// Sum (kMean false) or Mean over the axes of input 1, when they are one block of adjacent
// dimensions once dimensions of size 1 are set aside; other cases go to the CPU kernel.
template <bool kMean>
class ReduceKernel : public GpuKernel {
 public:
  ReduceKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : GpuKernel(c, std::move(host)), keep_dims_(c.attr<bool>("keep_dims")) {}

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& shape = ctx.input(0).shape();
    const Tensor& axes = ctx.input(1);
    if (!axes.on_host() || axes.rank() > 1) return false;
    const int rank = shape.rank();
    std::vector<bool> reduced(rank, false);
    for (int64_t k = 0; k < axes.num_elements(); ++k) {
      int64_t axis = axes.dtype() == DataType::kInt32   ? axes.data<int32_t>()[k]
                     : axes.dtype() == DataType::kInt64 ? axes.data<int64_t>()[k]
                                                        : INT64_MAX;
      if (axis < -rank || axis >= rank) return false;  // the CPU kernel's error
      reduced[axis < 0 ? axis + rank : axis] = true;
    }
    // outer x reduced x inner, the reduced dims contiguous among those of size > 1.
    int64_t outer = 1, count = 1, inner = 1;
    int phase = 0;  // 0: before the reduced block, 1: in it, 2: after it
    std::vector<int64_t> out_dims;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = shape.dim(d);
      if (reduced[d]) {
        if (keep_dims_) out_dims.push_back(1);
        if (size == 1) continue;
        if (phase == 2) return false;
        phase = 1;
        count *= size;
      } else {
        out_dims.push_back(size);
        if (size == 1) continue;
        if (phase == 0) {
          outer *= size;
        } else {
          phase = 2;
          inner *= size;
        }
      }
    }
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, TensorShape(out_dims));
    if (out == nullptr) return true;
    const float scale = kMean ? 1.0f / static_cast<float>(count) : 1.0f;
    if (count == 0) {
      cuda::fill(gpu.stream(), out, outer * inner, kMean ? NAN : 0.0f);
    } else {
      reduce_sum(ctx, gpu, GpuInputs::data(x), out, outer, count, inner, scale);
    }
    return true;
  }

 private:
  bool keep_dims_;
};

// ---- filling and broadcasting ----

template <int kValue>
class FillLikeKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    float* out = gpu_output(ctx, gpu, 0, ctx.input(0).shape());
    if (out != nullptr) {
      cuda::fill(gpu.stream(), out, ctx.input(0).num_elements(), static_cast<float>(kValue));
    }
    return true;
  }
};

// The dims in host int tensor `t` (a vector), or nullopt.
std::optional<std::vector<int64_t>> host_dims(const Tensor& t) {
  if (!t.on_host() || t.rank() != 1) return std::nullopt;
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    int64_t d = t.dtype() == DataType::kInt32   ? t.data<int32_t>()[k]
                : t.dtype() == DataType::kInt64 ? t.data<int64_t>()[k]
                                                : -1;
    if (d < 0) return std::nullopt;
    dims.push_back(d);
  }
  return dims;
}

class FillKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    auto dims = host_dims(ctx.input(0));
    if (!dims || ctx.input(1).num_elements() != 1 || ctx.input(1).rank() != 0) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* value = in.get(1);
    if (value == nullptr) return true;
    const TensorShape shape(*dims);
    float* out = gpu_output(ctx, gpu, 0, shape);
    if (out != nullptr) {
      cuda::fill_from(gpu.stream(), out, shape.num_elements(), GpuInputs::data(value));
    }
    return true;
  }
};

class BroadcastToKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    auto dims = host_dims(ctx.input(1));
    const TensorShape& from = ctx.input(0).shape();
    if (!dims || dims->size() > static_cast<size_t>(cuda::kMaxRank)) return false;
    auto both = broadcast_dims(from, TensorShape(*dims));
    if (!both || *both != *dims) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    const TensorShape shape(*dims);
    if (from == shape) {
      ctx.set_output(0, *x);
      return true;
    }
    float* out = gpu_output(ctx, gpu, 0, shape);
    if (out == nullptr) return true;
    cuda::Broadcast broadcast;
    broadcast.rank = static_cast<int>(dims->size());
    std::copy(dims->begin(), dims->end(), broadcast.dims);
    broadcast_strides(from, *dims, broadcast.a_strides);
    cuda::broadcast(gpu.stream(), GpuInputs::data(x), out, shape.num_elements(), broadcast);
    return true;
  }
};

class AddNKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& shape = ctx.input(0).shape();
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i).shape() != shape) return false;
    }
    GpuInputs in(ctx, gpu);
    const Tensor* first = in.get(0);
    if (first == nullptr) return true;
    if (ctx.num_inputs() == 1) {
      ctx.set_output(0, *first);
      return true;
    }
    float* out = gpu_output(ctx, gpu, 0, shape);
    if (out == nullptr) return true;
    const float* sum = GpuInputs::data(first);
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor* next = in.get(i);
      if (next == nullptr) return true;
      cuda::binary(gpu.stream(), BinaryOp::kAdd, sum, GpuInputs::data(next), out,
                   shape.num_elements(), false, false);
      sum = out;
    }
    return true;
  }
};

// ---- products (cuBLAS) ----

// Row-major c[m, n] = op(a) op(b), a of k columns after op, all in GPU memory (a is [m, k], or
// [k, m] when transposed; b is [k, n], or [n, k]). cuBLAS is column-major: c^T = op(b)^T op(a)^T.
Status gemm(GpuContext& gpu, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
            const float* a, const float* b, float* c) {
  const float one = 1.0f, zero = 0.0f;
  const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
  return gpu.check(gpu.cublas_api().sgemm(gpu.cublas(), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          static_cast<int>(n), static_cast<int>(m),
                                          static_cast<int>(k), &one, b, static_cast<int>(ldb), a,
                                          static_cast<int>(lda), &zero, c, static_cast<int>(n)),
                   "cublasSgemm");
}

bool fits_int(std::initializer_list<int64_t> sizes) {
  return std::all_of(sizes.begin(), sizes.end(), [](int64_t v) { return v <= INT_MAX; });
}

class MatMulKernel : public GpuKernel {
 public:
  MatMulKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : GpuKernel(c, std::move(host)),
        transpose_a_(c.attr<bool>("transpose_a")),
        transpose_b_(c.attr<bool>("transpose_b")) {}

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& sa = ctx.input(0).shape();
    const TensorShape& sb = ctx.input(1).shape();
    if (sa.rank() != 2 || sb.rank() != 2) return false;
    const int64_t m = transpose_a_ ? sa.dim(1) : sa.dim(0);
    const int64_t k = transpose_a_ ? sa.dim(0) : sa.dim(1);
    const int64_t kb = transpose_b_ ? sb.dim(1) : sb.dim(0);
    const int64_t n = transpose_b_ ? sb.dim(0) : sb.dim(1);
    if (k != kb || !fits_int({m, n, k})) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* a = in.get(0);
    const Tensor* b = a == nullptr ? nullptr : in.get(1);
    if (b == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, TensorShape{m, n});
    if (out == nullptr || m * n == 0) return true;
    if (k == 0) {
      cuda::fill(gpu.stream(), out, m * n, 0.0f);
      return true;
    }
    Status s =
        gemm(gpu, transpose_a_, transpose_b_, m, n, k, GpuInputs::data(a), GpuInputs::data(b), out);
    if (!s.ok()) ctx.set_status(std::move(s));
    return true;
  }

 private:
  bool transpose_a_, transpose_b_;
};

// BatchMatMul: one cuBLAS strided-batched product for every matrix of the batch (row-major, as
// gemm() above: C^T = B^T A^T in cuBLAS's column-major terms).
class BatchMatMulKernel : public GpuKernel {
 public:
  BatchMatMulKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : GpuKernel(c, std::move(host)),
        adj_x_(c.attr<bool>("adj_x")),
        adj_y_(c.attr<bool>("adj_y")) {}

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& sx = ctx.input(0).shape();
    const TensorShape& sy = ctx.input(1).shape();
    const int rank = sx.rank();
    bool ok = rank >= 2 && sy.rank() == rank;
    for (int d = 0; ok && d + 2 < rank; ++d)
      ok = sx.dim(d) == sy.dim(d);
    if (!ok) return false;  // the CPU kernel's error
    const int64_t m = sx.dim(rank - (adj_x_ ? 1 : 2)), k = sx.dim(rank - (adj_x_ ? 2 : 1));
    const int64_t n = sy.dim(rank - (adj_y_ ? 2 : 1));
    if (k != sy.dim(rank - (adj_y_ ? 1 : 2))) return false;
    std::vector<int64_t> dims(sx.dims().begin(), sx.dims().end() - 2);
    int64_t batch = 1;
    for (int64_t d : dims)
      batch *= d;
    dims.push_back(m);
    dims.push_back(n);
    if (!fits_int({m, n, k, batch})) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    const Tensor* y = in.get(1);
    if (y == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, TensorShape(dims));
    if (out == nullptr || m * n * batch == 0) return true;
    if (k == 0) {
      cuda::fill(gpu.stream(), out, m * n * batch, 0.0f);
      return true;
    }
    const float one = 1.0f, zero = 0.0f;
    const int64_t lda = adj_x_ ? m : k, ldb = adj_y_ ? k : n;
    Status s = gpu.check(
        gpu.cublas_api().sgemm_strided_batched(
            gpu.cublas(), adj_y_ ? CUBLAS_OP_T : CUBLAS_OP_N, adj_x_ ? CUBLAS_OP_T : CUBLAS_OP_N,
            static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one, GpuInputs::data(y),
            static_cast<int>(ldb), k * n, GpuInputs::data(x), static_cast<int>(lda), m * k, &zero,
            out, static_cast<int>(n), m * n, static_cast<int>(batch)),
        "cublasSgemmStridedBatched");
    if (!s.ok()) ctx.set_status(std::move(s));
    return true;
  }

 private:
  bool adj_x_, adj_y_;
};

// ---- convolutions and pooling (NHWC) ----

// The window geometry of a convolution or pooling of an NHWC input `input` with a window of
// window_rows x window_cols; nullopt when it does not fit (the CPU kernel then says why).
std::optional<cuda::WindowShape> window_shape(const std::vector<int64_t>& input,
                                              int64_t window_rows, int64_t window_cols,
                                              const std::vector<int64_t>& strides,
                                              const std::vector<int64_t>& dilations,
                                              Padding padding) {
  if (input.size() != 4 || strides.size() != 4 || dilations.size() != 4) return std::nullopt;
  auto rows = window_geometry(input[1], window_rows, strides[1], dilations[1], padding);
  auto cols = window_geometry(input[2], window_cols, strides[2], dilations[2], padding);
  if (!rows.ok() || !cols.ok()) return std::nullopt;
  cuda::WindowShape s;
  s.batch = input[0];
  s.in_rows = input[1];
  s.in_cols = input[2];
  s.depth = input[3];
  s.window_rows = window_rows;
  s.window_cols = window_cols;
  s.out_rows = rows->output;
  s.out_cols = cols->output;
  s.stride_rows = strides[1];
  s.stride_cols = strides[2];
  s.dilation_rows = dilations[1];
  s.dilation_cols = dilations[2];
  s.pad_top = rows->pad_before;
  s.pad_left = cols->pad_before;
  return s;
}

// Conv2D and its backprops: through cuDNN where it is loaded (CudnnConvolution), else as
// products on im2col patches in GPU memory, as the CPU kernels (devices/cpu/conv_kernels.cpp)
// compute them with OpenBLAS:
//   Conv2D:               y[positions, out]        = patches x filter[K, out]
//   Conv2DBackpropFilter: dfilter[K, out]          = patches^T x dy
//   Conv2DBackpropInput:  dpatches[positions, K]   = dy x filter^T, then col2im
template <ConvPart kPart>
class ConvKernel : public GpuKernel {
 public:
  ConvKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : GpuKernel(c, std::move(host)),
        strides_(c.attr<std::vector<int64_t>>("strides")),
        dilations_(c.attr<std::vector<int64_t>>("dilations")),
        padding_(*parse_padding(c.attr<std::string>("padding"))) {}

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    // The input's and the filter's dims: a tensor's shape, or a host vector of sizes.
    std::optional<std::vector<int64_t>> input, filter;
    if (kPart == ConvPart::kInput) {
      input = host_dims(ctx.input(0));
    } else {
      input = ctx.input(0).shape().dims();
    }
    if (kPart == ConvPart::kFilter) {
      filter = host_dims(ctx.input(1));
    } else {
      filter = ctx.input(1).shape().dims();
    }
    if (!input || !filter || filter->size() != 4 || input->size() != 4 ||
        (*input)[3] != (*filter)[2]) {
      return false;
    }
    auto shape = window_shape(*input, (*filter)[0], (*filter)[1], strides_, dilations_, padding_);
    if (!shape) return false;
    const int64_t positions = shape->batch * shape->out_rows * shape->out_cols;
    const int64_t k = (*filter)[0] * (*filter)[1] * (*filter)[2], out_depth = (*filter)[3];
    const TensorShape y_shape{shape->batch, shape->out_rows, shape->out_cols, out_depth};
    if (kPart != ConvPart::kForward && ctx.input(2).shape() != y_shape) return false;
    if (!fits_int({positions, k, out_depth})) return false;
    // The inputs this part reads, and its output.
    GpuInputs in(ctx, gpu);
    const Tensor* x = kPart == ConvPart::kInput ? nullptr : in.get(0);
    const Tensor* w = kPart == ConvPart::kFilter ? nullptr : in.get(1);
    const Tensor* dy = kPart == ConvPart::kForward ? nullptr : in.get(2);
    if (!ctx.ok()) return true;
    const TensorShape out_shape = kPart == ConvPart::kForward  ? y_shape
                                  : kPart == ConvPart::kFilter ? TensorShape(*filter)
                                                               : TensorShape(*input);
    float* out = gpu_output(ctx, gpu, 0, out_shape);
    if (out == nullptr || out_shape.num_elements() == 0) return true;
    if (positions * k * out_depth == 0) {  // an empty sum
      cuda::fill(gpu.stream(), out, out_shape.num_elements(), 0.0f);
      return true;
    }
    auto data = [](const Tensor* t) { return t == nullptr ? nullptr : GpuInputs::data(t); };
    // Products on im2col patches: the path without cuDNN, and one cuDNN's choice may take.
    auto im2col_products = [&]() -> Status {
      TROUPE_ASSIGN_OR_RETURN(Tensor patches,
                              gpu.allocate(DataType::kFloat, TensorShape{positions, k}));
      float* columns = patches.data<float>();
      if (kPart == ConvPart::kForward) {
        cuda::im2col(gpu.stream(), data(x), columns, *shape);
        return gemm(gpu, false, false, positions, out_depth, k, columns, data(w), out);
      }
      if (kPart == ConvPart::kFilter) {
        cuda::im2col(gpu.stream(), data(x), columns, *shape);
        return gemm(gpu, true, false, k, out_depth, positions, columns, data(dy), out);
      }
      TROUPE_RETURN_IF_ERROR(
          gemm(gpu, false, true, positions, k, out_depth, data(dy), data(w), columns));
      cuda::col2im(gpu.stream(), columns, out, *shape);
      return Status::OK();
    };
#ifdef TROUPE_HAVE_CUDNN
    if (cudnn_.run(kPart, ctx, gpu, *shape, out_depth, data(x), data(w), data(dy), out,
                   im2col_products)) {
      return true;
    }
#endif
    if (Status s = im2col_products(); !s.ok()) ctx.set_status(std::move(s));
    return true;
  }

 private:
  std::vector<int64_t> strides_, dilations_;
  Padding padding_;
#ifdef TROUPE_HAVE_CUDNN
  CudnnConvolution cudnn_;
#endif
};

// MaxPool (kGrad false) and MaxPoolGrad(orig_input, orig_output, grad).
template <bool kGrad>
class MaxPoolKernel : public GpuKernel {
 public:
  MaxPoolKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host)
      : GpuKernel(c, std::move(host)),
        ksize_(c.attr<std::vector<int64_t>>("ksize")),
        strides_(c.attr<std::vector<int64_t>>("strides")),
        padding_(*parse_padding(c.attr<std::string>("padding"))) {}

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& input_shape = ctx.input(0).shape();
    if (ksize_.size() != 4 || ksize_[0] != 1 || ksize_[3] != 1) return false;
    auto shape =
        window_shape(input_shape.dims(), ksize_[1], ksize_[2], strides_, {1, 1, 1, 1}, padding_);
    if (!shape) return false;
    const TensorShape y_shape{shape->batch, shape->out_rows, shape->out_cols, shape->depth};
    if (kGrad && ctx.input(2).shape() != y_shape) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    if (!kGrad) {
      float* y = gpu_output(ctx, gpu, 0, y_shape);
      if (y != nullptr) cuda::max_pool(gpu.stream(), GpuInputs::data(x), y, *shape);
      return true;
    }
    const Tensor* dy = in.get(2);
    float* dx = dy == nullptr ? nullptr : gpu_output(ctx, gpu, 0, input_shape);
    if (dx != nullptr) {
      cuda::max_pool_grad(gpu.stream(), GpuInputs::data(x), GpuInputs::data(dy), dx, *shape);
    }
    return true;
  }

 private:
  std::vector<int64_t> ksize_, strides_;
  Padding padding_;
};

// ---- softmax and its cross entropy ----

class SoftmaxKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& shape = ctx.input(0).shape();
    if (shape.rank() < 1) return false;
    GpuInputs in(ctx, gpu);
    const Tensor* x = in.get(0);
    if (x == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, shape);
    if (out == nullptr) return true;
    const int64_t classes = shape.dim(shape.rank() - 1);
    if (classes > 0) {
      cuda::softmax(gpu.stream(), GpuInputs::data(x), out, shape.num_elements() / classes, classes);
    }
    return true;
  }
};

class SparseXentKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const TensorShape& logits_shape = ctx.input(0).shape();
    const TensorShape& labels_shape = ctx.input(1).shape();
    if (logits_shape.rank() != 2 || labels_shape.rank() != 1 ||
        labels_shape.dim(0) != logits_shape.dim(0) || logits_shape.dim(1) == 0) {
      return false;
    }
    GpuInputs in(ctx, gpu);
    const Tensor* logits = in.get(0);
    const Tensor* labels = logits == nullptr ? nullptr : in.get(1);
    if (labels == nullptr) return true;
    const int64_t rows = logits_shape.dim(0), classes = logits_shape.dim(1);
    float* loss = gpu_output(ctx, gpu, 0, TensorShape{rows});
    float* backprop = loss == nullptr ? nullptr : gpu_output(ctx, gpu, 1, logits_shape);
    if (backprop == nullptr) return true;
    cuda::sparse_softmax_xent(gpu.stream(), GpuInputs::data(logits), labels->raw_data(),
                              labels->dtype() == DataType::kInt64, loss, backprop, rows, classes);
    return true;
  }
};

// ---- variables ----

// The initialized float variable behind ref input i, its value in GPU memory (moved there if an
// Assign of a host value or a restore left it on the host), ready to be written in place;
// nullptr after recording an error.
float* writable_gpu_variable(OpKernelContext& ctx, GpuContext& gpu, int i, Variable** out_var) {
  Variable* var = initialized_variable_input(ctx, i);
  if (var == nullptr) return nullptr;
  if (var->value().on_host()) {
    auto copy = gpu.to_device(var->value());
    if (!copy.ok()) {
      ctx.set_status(copy.status());
      return nullptr;
    }
    var->assign(std::move(copy).value());
  }
  *out_var = var;
  try {
    float* data = var->mutable_value().data<float>();
    return data != nullptr ? data : reinterpret_cast<float*>(alignof(float));
  } catch (const std::bad_alloc&) {
    ctx.set_status(errors::ResourceExhausted("node '{}': no GPU memory to copy variable '{}'",
                                             ctx.node().name(), var->name()));
    return nullptr;
  }
}

// Assign: the CPU kernel's checks and assignment, with a float value moved to GPU memory.
class AssignKernel : public OpKernel {
 public:
  AssignKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> cpu)
      : OpKernel(c), cpu_(std::move(cpu)) {}
  void compute(OpKernelContext& ctx) override {
    GpuContext& gpu = *ctx.device().gpu();
    if (ctx.input(1).dtype() != DataType::kFloat || !ctx.input(1).on_host()) {
      return cpu_->compute(ctx);
    }
    auto value = gpu.to_device(ctx.input(1));
    if (!value.ok()) return ctx.set_status(value.status());
    auto original = ctx.inputs();
    std::vector<const Tensor*> inputs(original.begin(), original.end());
    inputs[1] = &*value;
    ctx.set_inputs(inputs);
    cpu_->compute(ctx);
    ctx.set_inputs(original);
  }

 private:
  std::unique_ptr<OpKernel> cpu_;
};

// AssignAdd / AssignSub of a float variable on the GPU.
template <BinaryOp kOp>
class AssignUpdateKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return true;
    if (var->value().shape() != ctx.input(1).shape()) {
      ctx.fail_invalid("value of shape {} does not match variable '{}' of shape {}",
                       ctx.input(1).shape().to_string(), var->name(),
                       var->value().shape().to_string());
      return true;
    }
    GpuInputs in(ctx, gpu);
    const Tensor* value = in.get(1);
    if (value == nullptr) return true;
    float* data = writable_gpu_variable(ctx, gpu, 0, &var);
    if (data == nullptr) return true;
    cuda::binary(gpu.stream(), kOp, data, GpuInputs::data(value), data, value->num_elements(),
                 false, false);
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
    return true;
  }
};

// The Apply updates: refs first, then the scalars and the gradient at their places in the op.
struct UpdateLayout {
  cuda::UpdateRule rule;
  int refs;
  int grad;
  std::vector<int> scalars;  // input numbers
};

class ApplyKernel : public GpuKernel {
 public:
  ApplyKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host, UpdateLayout layout)
      : GpuKernel(c, std::move(host)), layout_(std::move(layout)) {
    if (c.node().def().find_attr("use_nesterov") != nullptr) {
      nesterov_ = c.attr<bool>("use_nesterov");
    }
  }

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    cuda::Update update;
    update.nesterov = nesterov_;
    std::vector<Variable*> vars(layout_.refs);
    for (int i = 0; i < layout_.refs; ++i) {
      if (initialized_variable_input(ctx, i) == nullptr) return true;
    }
    Variable* first = ctx.input_resource<Variable>(0);
    for (int i = 1; i < layout_.refs; ++i) {
      Variable* slot = ctx.input_resource<Variable>(i);
      if (slot->value().shape() != first->value().shape()) {
        ctx.fail_invalid("slot '{}' has shape {}, variable '{}' has {}", slot->name(),
                         slot->value().shape().to_string(), first->name(),
                         first->value().shape().to_string());
        return true;
      }
    }
    const TensorShape shape = first->value().shape();
    if (ctx.input(layout_.grad).shape() != shape) {
      ctx.fail_invalid("gradient has shape {}, the variable {}",
                       ctx.input(layout_.grad).shape().to_string(), shape.to_string());
      return true;
    }
    GpuInputs in(ctx, gpu);
    for (size_t k = 0; k < layout_.scalars.size(); ++k) {
      const int i = layout_.scalars[k];
      if (ctx.input(i).num_elements() != 1) {
        ctx.fail_invalid("input {} must be a scalar, got shape {}", i,
                         ctx.input(i).shape().to_string());
        return true;
      }
      const Tensor* scalar = in.get(i);
      if (scalar == nullptr) return true;
      update.scalars[k] = GpuInputs::data(scalar);
    }
    const Tensor* grad = in.get(layout_.grad);
    if (grad == nullptr) return true;
    update.grad = GpuInputs::data(grad);
    for (int i = 0; i < layout_.refs; ++i) {
      update.refs[i] = writable_gpu_variable(ctx, gpu, i, &vars[i]);
      if (update.refs[i] == nullptr) return true;
    }
    cuda::apply_update(gpu.stream(), layout_.rule, update, shape.num_elements());
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
    return true;
  }

 private:
  UpdateLayout layout_;
  bool nesterov_ = false;
};

// ---- gathers, scatters and sparse updates ----

// Row indices read on the host (where the ops that make them run: Unique, feeds), checked by
// the caller, and copied to the GPU as int64.
struct GpuIndices {
  std::vector<int64_t> values;
  Tensor on_gpu;
  bool distinct = true;  // no value twice
};

// `indices` (int32 or int64) on the host and the GPU; nullopt after recording an error.
std::optional<GpuIndices> gpu_indices(OpKernelContext& ctx, GpuContext& gpu,
                                      const Tensor& indices) {
  auto host = gpu.on_host(indices);
  if (!host.ok()) {
    ctx.set_status(host.status());
    return std::nullopt;
  }
  GpuIndices out;
  out.values = int_values(*host);
  std::vector<int64_t> sorted = out.values;
  std::sort(sorted.begin(), sorted.end());
  out.distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  auto copy = gpu.to_device(Tensor::from_vector<int64_t>(out.values));
  if (!copy.ok()) {
    ctx.set_status(copy.status());
    return std::nullopt;
  }
  out.on_gpu = std::move(copy).value();
  return out;
}

// GatherV2 of float params, with the CPU kernel's checks and messages (an index out of range
// is InvalidArgument on the GPU too, where TensorFlow's GPU kernel writes zeros).
class GatherKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const Tensor& axis_tensor = ctx.input(2);
    if (!axis_tensor.on_host() || axis_tensor.num_elements() != 1) return false;
    const TensorShape& params_shape = ctx.input(0).shape();
    const int64_t rank = params_shape.rank();
    int64_t axis = int_values(axis_tensor)[0];
    if (axis < -rank || axis >= rank) return false;  // the CPU kernel's error
    if (axis < 0) axis += rank;
    const int64_t limit = params_shape.dim(static_cast<int>(axis));
    auto indices = gpu_indices(ctx, gpu, ctx.input(1));
    if (!indices) return true;
    for (size_t i = 0; i < indices->values.size(); ++i) {
      if (indices->values[i] < 0 || indices->values[i] >= limit) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {})", i, indices->values[i], limit);
        return true;
      }
    }
    std::vector<int64_t> dims(params_shape.dims().begin(), params_shape.dims().begin() + axis);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= params_shape.dim(static_cast<int>(d));
    for (int64_t d : ctx.input(1).shape().dims())
      dims.push_back(d);
    for (int64_t d = axis + 1; d < rank; ++d) {
      dims.push_back(params_shape.dim(static_cast<int>(d)));
      inner *= params_shape.dim(static_cast<int>(d));
    }
    GpuInputs in(ctx, gpu);
    const Tensor* params = in.get(0);
    if (params == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, TensorShape(dims));
    if (out == nullptr) return true;
    cuda::gather(gpu.stream(), GpuInputs::data(params), indices->on_gpu.data<int64_t>(), out, outer,
                 limit, static_cast<int64_t>(indices->values.size()), inner);
    return true;
  }
};

// UnsortedSegmentSum of float data: negative ids dropped, others checked as the CPU kernel does.
class SegmentSumKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    const Tensor& data_in = ctx.input(0);
    const Tensor& ids_in = ctx.input(1);
    const Tensor& num = ctx.input(2);
    if (!num.on_host() || num.rank() != 0) return false;  // the CPU kernel's error
    const int64_t segments = int_values(num)[0];
    bool prefix = ids_in.rank() <= data_in.rank() && segments >= 0;
    for (int d = 0; prefix && d < ids_in.rank(); ++d)
      prefix = ids_in.dim(d) == data_in.dim(d);
    if (!prefix) return false;
    auto ids = gpu_indices(ctx, gpu, ids_in);
    if (!ids) return true;
    for (size_t i = 0; i < ids->values.size(); ++i) {
      if (ids->values[i] >= segments) {
        ctx.fail_invalid("segment_ids[{}] = {} is out of range [0, {})", i, ids->values[i],
                         segments);
        return true;
      }
    }
    std::vector<int64_t> dims = {segments};
    dims.insert(dims.end(), data_in.shape().dims().begin() + ids_in.rank(),
                data_in.shape().dims().end());
    const TensorShape out_shape(dims);
    GpuInputs in(ctx, gpu);
    const Tensor* data = in.get(0);
    if (data == nullptr) return true;
    float* out = gpu_output(ctx, gpu, 0, out_shape);
    if (out == nullptr) return true;
    cuda::fill(gpu.stream(), out, out_shape.num_elements(), 0.0f);
    const int64_t n = static_cast<int64_t>(ids->values.size());
    const int64_t inner = n == 0 ? 0 : data_in.num_elements() / n;
    cuda::unsorted_segment_sum(gpu.stream(), GpuInputs::data(data), ids->on_gpu.data<int64_t>(),
                               out, n, inner);
    return true;
  }
};

// The Scatter updates of a float variable on the GPU, with the CPU kernel's checks.
template <cuda::ScatterOp kOp>
class ScatterKernel : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return true;
    const TensorShape shape = var->value().shape();
    const Tensor& updates_in = ctx.input(2);
    if (shape.rank() < 1) {
      ctx.fail_invalid("variable '{}' is a scalar; scatter needs rank >= 1", var->name());
      return true;
    }
    std::vector<int64_t> expected = ctx.input(1).shape().dims();
    expected.insert(expected.end(), shape.dims().begin() + 1, shape.dims().end());
    const bool scalar = updates_in.shape().rank() == 0;
    if (!scalar && updates_in.shape() != TensorShape(expected)) {
      ctx.fail_invalid("updates has shape {}, expected indices.shape + ref.shape[1:] = {}",
                       updates_in.shape().to_string(), TensorShape(expected).to_string());
      return true;
    }
    const int64_t rows = shape.dim(0);
    auto indices = gpu_indices(ctx, gpu, ctx.input(1));
    if (!indices) return true;
    for (size_t k = 0; k < indices->values.size(); ++k) {
      if (indices->values[k] < 0 || indices->values[k] >= rows) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {}), the rows of variable '{}'", k,
                         indices->values[k], rows, var->name());
        return true;
      }
    }
    GpuInputs in(ctx, gpu);
    const Tensor* updates = in.get(2);
    if (updates == nullptr) return true;
    float* data = writable_gpu_variable(ctx, gpu, 0, &var);
    if (data == nullptr) return true;
    const int64_t inner = rows == 0 ? 0 : shape.num_elements() / rows;
    cuda::scatter(gpu.stream(), kOp, data, indices->on_gpu.data<int64_t>(),
                  GpuInputs::data(updates), static_cast<int64_t>(indices->values.size()), inner,
                  scalar, indices->distinct);
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
    return true;
  }
};

// The SparseApply updates: as ApplyKernel, with the gradient's rows going to the rows `indices`
// (right after the gradient) names, with the CPU kernel's checks and messages.
class SparseApplyKernel : public GpuKernel {
 public:
  SparseApplyKernel(const OpKernelConstruction& c, std::unique_ptr<OpKernel> host,
                    UpdateLayout layout)
      : GpuKernel(c, std::move(host)), layout_(std::move(layout)) {
    if (c.node().def().find_attr("use_nesterov") != nullptr) {
      nesterov_ = c.attr<bool>("use_nesterov");
    }
  }

  bool compute_on_gpu(OpKernelContext& ctx, GpuContext& gpu) override {
    cuda::Update update;
    update.nesterov = nesterov_;
    std::vector<Variable*> vars(layout_.refs);
    for (int i = 0; i < layout_.refs; ++i) {
      if (initialized_variable_input(ctx, i) == nullptr) return true;
    }
    Variable* first = ctx.input_resource<Variable>(0);
    const TensorShape shape = first->value().shape();
    for (int i = 1; i < layout_.refs; ++i) {
      Variable* slot = ctx.input_resource<Variable>(i);
      if (slot->value().shape() != shape) {
        ctx.fail_invalid("slot '{}' has shape {}, variable '{}' has {}", slot->name(),
                         slot->value().shape().to_string(), first->name(), shape.to_string());
        return true;
      }
    }
    for (int i : layout_.scalars) {  // checked first, as the CPU kernel does
      if (ctx.input(i).num_elements() != 1) {
        ctx.fail_invalid("input {} must be a scalar, got shape {}", i,
                         ctx.input(i).shape().to_string());
        return true;
      }
    }
    if (shape.rank() < 1) {
      ctx.fail_invalid("a sparse update needs a variable of rank >= 1, got a scalar");
      return true;
    }
    const Tensor& indices_in = ctx.input(layout_.grad + 1);
    if (indices_in.shape().rank() != 1) {
      ctx.fail_invalid("indices must be a vector, got shape {}", indices_in.shape().to_string());
      return true;
    }
    const int64_t n = indices_in.num_elements();
    std::vector<int64_t> rows_shape = shape.dims();
    const int64_t rows = rows_shape[0];
    rows_shape[0] = n;
    if (ctx.input(layout_.grad).shape() != TensorShape(rows_shape)) {
      ctx.fail_invalid("the gradient has shape {}, expected {} (a row per index)",
                       ctx.input(layout_.grad).shape().to_string(),
                       TensorShape(rows_shape).to_string());
      return true;
    }
    auto indices = gpu_indices(ctx, gpu, indices_in);
    if (!indices) return true;
    for (int64_t k = 0; k < n; ++k) {
      if (indices->values[k] < 0 || indices->values[k] >= rows) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {}), the rows of the variable", k,
                         indices->values[k], rows);
        return true;
      }
    }
    GpuInputs in(ctx, gpu);
    for (size_t k = 0; k < layout_.scalars.size(); ++k) {
      const Tensor* scalar = in.get(layout_.scalars[k]);
      if (scalar == nullptr) return true;
      update.scalars[k] = GpuInputs::data(scalar);
    }
    const Tensor* grad = in.get(layout_.grad);
    if (grad == nullptr) return true;
    update.grad = GpuInputs::data(grad);
    for (int i = 0; i < layout_.refs; ++i) {
      update.refs[i] = writable_gpu_variable(ctx, gpu, i, &vars[i]);
      if (update.refs[i] == nullptr) return true;
    }
    const int64_t inner = rows == 0 ? 0 : shape.num_elements() / rows;
    cuda::sparse_apply_update(gpu.stream(), layout_.rule, update, indices->on_gpu.data<int64_t>(),
                              n, inner, indices->distinct);
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
    return true;
  }

 private:
  UpdateLayout layout_;
  bool nesterov_ = false;
};

KernelFactory sparse_apply_factory(UpdateLayout layout) {
  return [layout](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> host, make_host_kernel(c));
    if (c.attr<DataType>("T") != DataType::kFloat) {
      return errors::Unimplemented("node '{}' ({}): the GPU updates float32 variables only",
                                   c.name(), c.node().op_name());
    }
    return std::unique_ptr<OpKernel>(new SparseApplyKernel(c, std::move(host), layout));
  };
}

KernelFactory apply_factory(UpdateLayout layout) {
  return [layout](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> host, make_host_kernel(c));
    if (c.attr<DataType>("T") != DataType::kFloat) {
      return errors::Unimplemented("node '{}' ({}): the GPU updates float32 variables only",
                                   c.name(), c.node().op_name());
    }
    return std::unique_ptr<OpKernel>(new ApplyKernel(c, std::move(host), layout));
  };
}

// ---- constants ----

// A float constant copied to GPU memory once, when the kernel is built.
class ConstKernel : public OpKernel {
 public:
  ConstKernel(const OpKernelConstruction& c, Tensor value)
      : OpKernel(c), value_(std::move(value)) {}
  void compute(OpKernelContext& ctx) override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

StatusOr<std::unique_ptr<OpKernel>> make_const(const OpKernelConstruction& c) {
  const Tensor& value = c.attr<Tensor>("value");
  if (value.dtype() != DataType::kFloat) return make_host_kernel(c);
  GpuContext& gpu = *c.device().gpu();
  TROUPE_RETURN_IF_ERROR(gpu.activate());
  TROUPE_ASSIGN_OR_RETURN(Tensor copy, gpu.to_device(value));
  return std::unique_ptr<OpKernel>(new ConstKernel(c, std::move(copy)));
}

StatusOr<std::unique_ptr<OpKernel>> make_assign(const OpKernelConstruction& c) {
  TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> cpu,
                          KernelRegistry::global().create(c.node(), c.device(), "CPU"));
  return std::unique_ptr<OpKernel>(new AssignKernel(c, std::move(cpu)));
}

}  // namespace

void register_gpu_kernels(KernelRegistry& r) {
  // Kernels that never touch element data run as they are.
  for (const char* op : {"NoOp", "Identity", "StopGradient", "PlaceholderWithDefault", "Reshape",
                         "ExpandDims", "Squeeze", "Variable", "_Arg", "_Recv", "Placeholder"}) {
    must_add_kernel(r, op, kGpu, cpu_kernel_as_is());
  }
  // Host-memory ops: the CPU kernel on host copies.
  for (const char* op : {"_Retval", "_Send", "Shape", "Size", "Rank", "BroadcastGradientArgs",
                         "Cast", "ArgMax", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
                         "GreaterEqual", "Prod", "IsVariableInitialized"}) {
    must_add_kernel(r, op, kGpu, host_kernel());
  }
  must_add_kernel(r, "Const", kGpu, make_const);
  must_add_kernel(r, "Assign", kGpu, make_assign);
  must_add_kernel(r, "AssignAdd", kGpu, float_on_gpu<AssignUpdateKernel<BinaryOp::kAdd>>());
  must_add_kernel(r, "AssignSub", kGpu, float_on_gpu<AssignUpdateKernel<BinaryOp::kSub>>());

  must_add_kernel(r, "Neg", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kNeg>>());
  must_add_kernel(r, "Square", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kSquare>>());
  must_add_kernel(r, "Sqrt", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kSqrt>>());
  must_add_kernel(r, "Rsqrt", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kRsqrt>>());
  must_add_kernel(r, "Exp", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kExp>>());
  must_add_kernel(r, "Log", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kLog>>());
  must_add_kernel(r, "Tanh", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kTanh>>());
  must_add_kernel(r, "Sigmoid", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kSigmoid>>());
  must_add_kernel(r, "Relu", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kRelu>>());
  must_add_kernel(r, "Abs", kGpu, float_on_gpu<UnaryKernel<UnaryOp::kAbs>>());

  must_add_kernel(r, "Add", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kAdd>>());
  must_add_kernel(r, "Sub", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kSub>>());
  must_add_kernel(r, "Mul", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kMul>>());
  must_add_kernel(r, "Div", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kDiv>>());
  must_add_kernel(r, "Maximum", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kMaximum>>());
  must_add_kernel(r, "Minimum", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kMinimum>>());
  must_add_kernel(r, "SquaredDifference", kGpu,
                  float_on_gpu<BinaryKernel<BinaryOp::kSquaredDifference>>());
  must_add_kernel(r, "ReluGrad", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kReluGrad, true>>());
  must_add_kernel(r, "SigmoidGrad", kGpu,
                  float_on_gpu<BinaryKernel<BinaryOp::kSigmoidGrad, true>>());
  must_add_kernel(r, "TanhGrad", kGpu, float_on_gpu<BinaryKernel<BinaryOp::kTanhGrad, true>>());

  must_add_kernel(r, "BiasAdd", kGpu, float_on_gpu<BiasAddKernel>());
  must_add_kernel(r, "BiasAddGrad", kGpu, float_on_gpu<BiasAddGradKernel>());
  must_add_kernel(r, "Sum", kGpu, float_on_gpu<ReduceKernel<false>>());
  must_add_kernel(r, "Mean", kGpu, float_on_gpu<ReduceKernel<true>>());
  must_add_kernel(r, "ZerosLike", kGpu, float_on_gpu<FillLikeKernel<0>>());
  must_add_kernel(r, "OnesLike", kGpu, float_on_gpu<FillLikeKernel<1>>());
  must_add_kernel(r, "Fill", kGpu, float_on_gpu<FillKernel>());
  must_add_kernel(r, "BroadcastTo", kGpu, float_on_gpu<BroadcastToKernel>());
  must_add_kernel(r, "AddN", kGpu, float_on_gpu<AddNKernel>());
  must_add_kernel(r, "MatMul", kGpu, float_on_gpu<MatMulKernel>());
  must_add_kernel(r, "BatchMatMul", kGpu, float_on_gpu<BatchMatMulKernel>());
  must_add_kernel(r, "Conv2D", kGpu, float_on_gpu<ConvKernel<ConvPart::kForward>>());
  must_add_kernel(r, "Conv2DBackpropFilter", kGpu, float_on_gpu<ConvKernel<ConvPart::kFilter>>());
  must_add_kernel(r, "Conv2DBackpropInput", kGpu, float_on_gpu<ConvKernel<ConvPart::kInput>>());
  must_add_kernel(r, "MaxPool", kGpu, float_on_gpu<MaxPoolKernel<false>>());
  must_add_kernel(r, "MaxPoolGrad", kGpu, float_on_gpu<MaxPoolKernel<true>>());
  must_add_kernel(r, "Softmax", kGpu, float_on_gpu<SoftmaxKernel>());
  must_add_kernel(r, "SparseSoftmaxCrossEntropyWithLogits", kGpu, float_on_gpu<SparseXentKernel>());

  using cuda::UpdateRule;
  must_add_kernel(r, "ApplyGradientDescent", kGpu,
                  apply_factory({UpdateRule::kGradientDescent, 1, 2, {1}}));
  must_add_kernel(r, "ApplyMomentum", kGpu, apply_factory({UpdateRule::kMomentum, 2, 3, {2, 4}}));
  must_add_kernel(r, "ApplyAdagrad", kGpu, apply_factory({UpdateRule::kAdagrad, 2, 3, {2}}));
  must_add_kernel(r, "ApplyAdam", kGpu,
                  apply_factory({UpdateRule::kAdam, 3, 9, {3, 4, 5, 6, 7, 8}}));
  // Sparse: indices right after the gradient, the scalars after it one place further.
  must_add_kernel(r, "SparseApplyMomentum", kGpu,
                  sparse_apply_factory({UpdateRule::kMomentum, 2, 3, {2, 5}}));
  must_add_kernel(r, "SparseApplyAdagrad", kGpu,
                  sparse_apply_factory({UpdateRule::kAdagrad, 2, 3, {2}}));
  must_add_kernel(r, "SparseApplyAdam", kGpu,
                  sparse_apply_factory({UpdateRule::kAdam, 3, 9, {3, 4, 5, 6, 7, 8}}));

  must_add_kernel(r, "GatherV2", kGpu, float_on_gpu<GatherKernel>("Tparams"));
  must_add_kernel(r, "UnsortedSegmentSum", kGpu, float_on_gpu<SegmentSumKernel>());
  using cuda::ScatterOp;
  must_add_kernel(r, "ScatterUpdate", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kUpdate>>());
  must_add_kernel(r, "ScatterAdd", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kAdd>>());
  must_add_kernel(r, "ScatterSub", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kSub>>());
  must_add_kernel(r, "ScatterMul", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kMul>>());
  must_add_kernel(r, "ScatterDiv", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kDiv>>());
  must_add_kernel(r, "ScatterMin", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kMin>>());
  must_add_kernel(r, "ScatterMax", kGpu, float_on_gpu<ScatterKernel<ScatterOp::kMax>>());
}

}  // namespace troupe
