// The CUDA kernels of cuda_kernels.hpp: grid-stride element-wise loops, one block per row for
// the softmax family, and two shapes of sum (a block per output for contiguous rows, a thread
// per output for strided columns).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "troupe/devices/gpu/cuda_kernels.hpp"

namespace troupe::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 4096 ? blocks : 4096);
}

#define TROUPE_GRID_LOOP(i, n)                                                           \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

__global__ void fill_kernel(float* out, int64_t n, float value) {
  TROUPE_GRID_LOOP(i, n) out[i] = value;
}

__global__ void fill_from_kernel(float* out, int64_t n, const float* value) {
  const float v = *value;
  TROUPE_GRID_LOOP(i, n) out[i] = v;
}

__device__ float apply_unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kSquare:
      return x * x;
    case UnaryOp::kSqrt:
      return sqrtf(x);
    case UnaryOp::kRsqrt:
      return rsqrtf(x);
    case UnaryOp::kExp:
      return expf(x);
    case UnaryOp::kLog:
      return logf(x);
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kRelu:
      return x > 0.0f ? x : 0.0f;
    case UnaryOp::kAbs:
      return fabsf(x);
  }
  return x;
}

template <UnaryOp kOp>
__global__ void unary_kernel(const float* in, float* out, int64_t n) {
  TROUPE_GRID_LOOP(i, n) out[i] = apply_unary(kOp, in[i]);
}

__device__ __forceinline__ float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMaximum:
      return fmaxf(a, b);
    case BinaryOp::kMinimum:
      return fminf(a, b);
    case BinaryOp::kSquaredDifference:
      return (a - b) * (a - b);
    case BinaryOp::kReluGrad:
      return b > 0.0f ? a : 0.0f;
    case BinaryOp::kSigmoidGrad:
      return b * a * (1.0f - a);
    case BinaryOp::kTanhGrad:
      return b * (1.0f - a * a);
  }
  return a;
}

template <BinaryOp kOp>
__global__ void binary_kernel(const float* a, const float* b, float* out, int64_t n, int64_t a_step,
                              int64_t b_step) {
  TROUPE_GRID_LOOP(i, n) out[i] = apply_binary(kOp, a[i * a_step], b[i * b_step]);
}

template <BinaryOp kOp>
__global__ void broadcast_binary_kernel(const float* a, const float* b, float* out, int64_t n,
                                        Broadcast shape) {
  TROUPE_GRID_LOOP(i, n) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      const int64_t index = rest % shape.dims[d];
      rest /= shape.dims[d];
      ia += index * shape.a_strides[d];
      ib += index * shape.b_strides[d];
    }
    out[i] = apply_binary(kOp, a[ia], b[ib]);
  }
}

__global__ void broadcast_kernel(const float* in, float* out, int64_t n, Broadcast shape) {
  TROUPE_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
      offset += (rest % shape.dims[d]) * shape.a_strides[d];
      rest /= shape.dims[d];
    }
    out[i] = in[offset];
  }
}

__global__ void bias_add_kernel(const float* x, const float* bias, float* out, int64_t n,
                                int64_t channels) {
  TROUPE_GRID_LOOP(i, n) out[i] = x[i] + bias[i % channels];
}

// The sum of a value from each thread of the block; thread 0 has it.
__device__ float block_sum(float value) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffff, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  value = threadIdx.x < blockDim.x / 32 ? partial[lane] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2)
      value += __shfl_down_sync(0xffffffff, value, offset);
  }
  __syncthreads();
  return value;
}

__device__ float block_max(float value) {
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_down_sync(0xffffffff, value, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  value = threadIdx.x < blockDim.x / 32 ? partial[lane] : -FLT_MAX;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2)
      value = fmaxf(value, __shfl_down_sync(0xffffffff, value, offset));
  }
  __syncthreads();
  return value;
}

// A block per output: the sum of a contiguous row of `reduced` values (inner == 1).
__global__ void reduce_rows_kernel(const float* in, float* out, int64_t reduced, float scale) {
  const float* row = in + blockIdx.x * reduced;
  float sum = 0.0f;
  for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x)
    sum += row[r];
  sum = block_sum(sum);
  if (threadIdx.x == 0) out[blockIdx.x] = sum * scale;
}

// A thread per (output (o, i), part p): the sum of rows [p * rows, (p + 1) * rows) of the strided
// column, into partial[p][o * inner + i] (or, with one part, scaled into out).
__global__ void reduce_columns_kernel(const float* in, float* partial, int64_t outer,
                                      int64_t reduced, int64_t inner, int64_t rows, float scale) {
  const int64_t outputs = outer * inner;
  const int64_t part = blockIdx.y;
  const int64_t first = part * rows;
  const int64_t last = first + rows < reduced ? first + rows : reduced;
  TROUPE_GRID_LOOP(k, outputs) {
    const int64_t o = k / inner, i = k % inner;
    const float* column = in + o * reduced * inner + i;
    float sum = 0.0f;
    for (int64_t r = first; r < last; ++r)
      sum += column[r * inner];
    partial[part * outputs + k] = sum * scale;
  }
}

// out[k] = the sum of partial[p][k] over the parts, in order (the same sum on every run).
__global__ void sum_parts_kernel(const float* partial, float* out, int64_t outputs, int parts) {
  TROUPE_GRID_LOOP(k, outputs) {
    float sum = 0.0f;
    for (int p = 0; p < parts; ++p)
      sum += partial[p * outputs + k];
    out[k] = sum;
  }
}

// The max of row x[0, classes) and the sum of exp(x - max) over it, in every thread of the block.
__device__ void row_max_and_sum(const float* x, int64_t classes, float* row_max, float* row_sum) {
  __shared__ float shared_max, shared_sum;
  float max = -FLT_MAX;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    max = fmaxf(max, x[c]);
  max = block_max(max);
  if (threadIdx.x == 0) shared_max = max;
  __syncthreads();
  max = shared_max;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum += expf(x[c] - max);
  sum = block_sum(sum);
  if (threadIdx.x == 0) shared_sum = sum;
  __syncthreads();
  *row_max = max;
  *row_sum = shared_sum;
}

// A block per row: the row's max and sum of exponentials, then the outputs.
template <class Label>
__global__ void sparse_xent_kernel(const float* logits, const Label* labels, float* loss,
                                   float* backprop, int64_t classes) {
  const int64_t row = blockIdx.x;
  const float* x = logits + row * classes;
  float* grad = backprop + row * classes;
  float max, sum;
  row_max_and_sum(x, classes, &max, &sum);
  const int64_t label = static_cast<int64_t>(labels[row]);
  const bool valid = label >= 0 && label < classes;
  const float log_sum = logf(sum);
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    const float p = expf(x[c] - max) / sum;
    grad[c] = valid ? p - (c == label ? 1.0f : 0.0f) : NAN;
  }
  if (threadIdx.x == 0) loss[row] = valid ? log_sum - (x[label] - max) : NAN;
}

__global__ void softmax_kernel(const float* logits, float* out, int64_t classes) {
  const int64_t row = blockIdx.x;
  const float* x = logits + row * classes;
  float max, sum;
  row_max_and_sum(x, classes, &max, &sum);
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    out[row * classes + c] = expf(x[c] - max) / sum;
}

// Threads per row block: a power of two from 32 to 256, at least the row's length if it can.
int row_threads(int64_t classes) {
  int threads = 32;
  while (threads < kThreads && threads < classes)
    threads *= 2;
  return threads;
}

// Adam's step size for this step (0 for the other rules).
__device__ float adam_rate(UpdateRule rule, const Update& u) {
  if (rule != UpdateRule::kAdam) return 0.0f;
  const float beta1_power = *u.scalars[0], beta2_power = *u.scalars[1], lr = *u.scalars[2];
  return lr * sqrtf(1.0f - beta2_power) / (1.0f - beta1_power);
}

// One element's update: element i of the variable and its slots, by gradient value g.
__device__ __forceinline__ void apply_rule(UpdateRule rule, const Update& u, int64_t i, float g,
                                           float lr_t) {
  switch (rule) {
    case UpdateRule::kGradientDescent:
      u.refs[0][i] -= *u.scalars[0] * g;
      break;
    case UpdateRule::kMomentum: {
      const float lr = *u.scalars[0], momentum = *u.scalars[1];
      float accum = u.refs[1][i] * momentum + g;
      u.refs[1][i] = accum;
      u.refs[0][i] -= u.nesterov ? lr * g + lr * momentum * accum : lr * accum;
      break;
    }
    case UpdateRule::kAdagrad: {
      const float accum = u.refs[1][i] + g * g;
      u.refs[1][i] = accum;
      u.refs[0][i] -= *u.scalars[0] * g / sqrtf(accum);
      break;
    }
    case UpdateRule::kAdam: {
      const float beta1 = *u.scalars[3], beta2 = *u.scalars[4], epsilon = *u.scalars[5];
      const float m = u.refs[1][i] + (g - u.refs[1][i]) * (1.0f - beta1);
      const float v = u.refs[2][i] + (g * g - u.refs[2][i]) * (1.0f - beta2);
      u.refs[1][i] = m;
      u.refs[2][i] = v;
      const float step = u.nesterov ? m * beta1 + (1.0f - beta1) * g : m;
      u.refs[0][i] -= lr_t * step / (sqrtf(v) + epsilon);
      break;
    }
  }
}

__global__ void update_kernel(UpdateRule rule, Update u, int64_t n) {
  const float lr_t = adam_rate(rule, u);
  TROUPE_GRID_LOOP(i, n) apply_rule(rule, u, i, u.grad[i], lr_t);
}

__global__ void sparse_update_kernel(UpdateRule rule, Update u, const int64_t* rows, int64_t n,
                                     int64_t inner) {
  const float lr_t = adam_rate(rule, u);
  TROUPE_GRID_LOOP(e, n * inner) {
    const int64_t k = e / inner, j = e - k * inner;
    apply_rule(rule, u, rows[k] * inner + j, u.grad[e], lr_t);
  }
}

// One thread per column, the rows in order: a repeated row sees the earlier update.
__global__ void sparse_update_in_order_kernel(UpdateRule rule, Update u, const int64_t* rows,
                                              int64_t n, int64_t inner) {
  const float lr_t = adam_rate(rule, u);
  TROUPE_GRID_LOOP(j, inner) {
    for (int64_t k = 0; k < n; ++k)
      apply_rule(rule, u, rows[k] * inner + j, u.grad[k * inner + j], lr_t);
  }
}

__global__ void gather_kernel(const float* params, const int64_t* indices, float* out,
                              int64_t limit, int64_t n, int64_t inner, int64_t total) {
  TROUPE_GRID_LOOP(e, total) {
    const int64_t row = e / inner, j = e - row * inner;  // row = o * n + i
    const int64_t o = row / n, i = row - o * n;
    out[e] = params[(o * limit + indices[i]) * inner + j];
  }
}

__global__ void segment_sum_kernel(const float* data, const int64_t* ids, float* out, int64_t n,
                                   int64_t inner) {
  TROUPE_GRID_LOOP(e, n * inner) {
    const int64_t i = e / inner, j = e - i * inner;
    if (ids[i] >= 0) atomicAdd(out + ids[i] * inner + j, data[e]);
  }
}

__device__ __forceinline__ void scatter_one(ScatterOp op, float* to, float value) {
  switch (op) {
    case ScatterOp::kUpdate:
      *to = value;
      break;
    case ScatterOp::kAdd:
      *to += value;
      break;
    case ScatterOp::kSub:
      *to -= value;
      break;
    case ScatterOp::kMul:
      *to *= value;
      break;
    case ScatterOp::kDiv:
      *to /= value;
      break;
    case ScatterOp::kMin:  // std::min's: a NaN in the variable stays, a NaN update is skipped
      *to = value < *to ? value : *to;
      break;
    case ScatterOp::kMax:
      *to = *to < value ? value : *to;
      break;
  }
}

__global__ void scatter_kernel(ScatterOp op, float* ref, const int64_t* indices,
                               const float* updates, int64_t n, int64_t inner, bool scalar) {
  TROUPE_GRID_LOOP(e, n * inner) {
    const int64_t k = e / inner, j = e - k * inner;
    scatter_one(op, ref + indices[k] * inner + j, updates[scalar ? 0 : e]);
  }
}

// Sums need no order: repeated rows add up atomically (in any order, as TensorFlow's GPU
// kernel; float rounding may differ from the CPU's in-order sum).
__global__ void scatter_add_kernel(float* ref, const int64_t* indices, const float* updates,
                                   int64_t n, int64_t inner, bool scalar, float sign) {
  TROUPE_GRID_LOOP(e, n * inner) {
    const int64_t k = e / inner, j = e - k * inner;
    atomicAdd(ref + indices[k] * inner + j, sign * updates[scalar ? 0 : e]);
  }
}

__global__ void scatter_in_order_kernel(ScatterOp op, float* ref, const int64_t* indices,
                                        const float* updates, int64_t n, int64_t inner,
                                        bool scalar) {
  TROUPE_GRID_LOOP(j, inner) {
    for (int64_t k = 0; k < n; ++k)
      scatter_one(op, ref + indices[k] * inner + j, updates[scalar ? 0 : k * inner + j]);
  }
}

// Indices are I: int32_t where every offset fits (GPU integer division is several times
// cheaper on 32 bits), int64_t otherwise.
template <class I>
struct ConvIndex {
  I in_rows, in_cols, depth, window_rows, window_cols, out_rows, out_cols;
  I stride_rows, stride_cols, dilation_rows, dilation_cols, pad_top, pad_left;
  explicit ConvIndex(const WindowShape& s)
      : in_rows(s.in_rows),
        in_cols(s.in_cols),
        depth(s.depth),
        window_rows(s.window_rows),
        window_cols(s.window_cols),
        out_rows(s.out_rows),
        out_cols(s.out_cols),
        stride_rows(s.stride_rows),
        stride_cols(s.stride_cols),
        dilation_rows(s.dilation_rows),
        dilation_cols(s.dilation_cols),
        pad_top(s.pad_top),
        pad_left(s.pad_left) {}
};

template <class I>
__global__ void im2col_kernel(const float* input, float* patches, I n, ConvIndex<I> s) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I t = i;
    const I c = t % s.depth;
    t /= s.depth;
    const I kx = t % s.window_cols;
    t /= s.window_cols;
    const I ky = t % s.window_rows;
    t /= s.window_rows;
    const I ox = t % s.out_cols;
    t /= s.out_cols;
    const I oy = t % s.out_rows;
    const I image = t / s.out_rows;
    const I iy = oy * s.stride_rows - s.pad_top + ky * s.dilation_rows;
    const I ix = ox * s.stride_cols - s.pad_left + kx * s.dilation_cols;
    patches[i] = iy < 0 || iy >= s.in_rows || ix < 0 || ix >= s.in_cols
                     ? 0.0f
                     : input[((image * s.in_rows + iy) * s.in_cols + ix) * s.depth + c];
  }
}

template <class I>
__global__ void col2im_kernel(const float* patches, float* input, I n, ConvIndex<I> s) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I t = i;
    const I c = t % s.depth;
    t /= s.depth;
    const I ix = t % s.in_cols;
    t /= s.in_cols;
    const I iy = t % s.in_rows;
    const I image = t / s.in_rows;
    float sum = 0.0f;
    for (I ky = 0; ky < s.window_rows; ++ky) {
      const I y = iy + s.pad_top - ky * s.dilation_rows;
      if (y < 0 || y % s.stride_rows != 0 || y / s.stride_rows >= s.out_rows) continue;
      const I oy = y / s.stride_rows;
      for (I kx = 0; kx < s.window_cols; ++kx) {
        const I x = ix + s.pad_left - kx * s.dilation_cols;
        if (x < 0 || x % s.stride_cols != 0 || x / s.stride_cols >= s.out_cols) continue;
        const I ox = x / s.stride_cols;
        sum += patches[((((image * s.out_rows + oy) * s.out_cols + ox) * s.window_rows + ky) *
                            s.window_cols +
                        kx) *
                           s.depth +
                       c];
      }
    }
    input[i] = sum;
  }
}

// to_ohwi true: in is [rows*cols*in_depth, out_depth] (HWIO), out [out_depth, rows*cols*in_depth].
__global__ void filter_transpose_kernel(const float* in, float* out, int64_t spatial_in,
                                        int64_t out_depth, bool to_ohwi) {
  TROUPE_GRID_LOOP(i, spatial_in * out_depth) {
    const int64_t k = i / out_depth, o = i % out_depth;  // i indexes the HWIO array
    if (to_ohwi) {
      out[o * spatial_in + k] = in[i];
    } else {
      out[i] = in[o * spatial_in + k];
    }
  }
}

bool fits_32_bits(const WindowShape& s) {
  const int64_t in = s.batch * s.in_rows * s.in_cols * s.depth;
  const int64_t out = s.batch * s.out_rows * s.out_cols * s.depth;
  return in < INT32_MAX && out < INT32_MAX;
}

// The input offset of the first maximum of window (oy, ox), channel c of `image`; -1 if the
// window holds no input element.
template <class I>
__device__ I first_max(const float* input, const ConvIndex<I>& s, I image, I oy, I ox, I c) {
  const I y0 = max(oy * s.stride_rows - s.pad_top, I{0});
  const I y1 = min(oy * s.stride_rows - s.pad_top + s.window_rows, s.in_rows);
  const I x0 = max(ox * s.stride_cols - s.pad_left, I{0});
  const I x1 = min(ox * s.stride_cols - s.pad_left + s.window_cols, s.in_cols);
  I best_at = -1;
  float best = -FLT_MAX;
  for (I y = y0; y < y1; ++y) {
    for (I x = x0; x < x1; ++x) {
      const I at = ((image * s.in_rows + y) * s.in_cols + x) * s.depth + c;
      if (best_at < 0 || input[at] > best) {
        best = input[at];
        best_at = at;
      }
    }
  }
  return best_at;
}

// Output element i's window: image, row, column and channel.
template <class I>
__device__ void output_position(I i, const ConvIndex<I>& s, I* image, I* oy, I* ox, I* c) {
  I t = i;
  *c = t % s.depth;
  t /= s.depth;
  *ox = t % s.out_cols;
  t /= s.out_cols;
  *oy = t % s.out_rows;
  *image = t / s.out_rows;
}

template <class I>
__global__ void max_pool_kernel(const float* input, float* output, I n, ConvIndex<I> s) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I image, oy, ox, c;
    output_position(i, s, &image, &oy, &ox, &c);
    const I at = first_max(input, s, image, oy, ox, c);
    output[i] = at >= 0 ? input[at] : -FLT_MAX;
  }
}

// Windows that do not overlap (strides at least the window): a thread per window puts its
// gradient on its first maximum, which no other window holds (dx zeroed before).
template <class I>
__global__ void max_pool_grad_disjoint_kernel(const float* input, const float* grad, float* dx, I n,
                                              ConvIndex<I> s) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I image, oy, ox, c;
    output_position(i, s, &image, &oy, &ox, &c);
    const I at = first_max(input, s, image, oy, ox, c);
    if (at >= 0) dx[at] = grad[i];
  }
}

// Overlapping windows: a thread per input element sums the gradients of the windows (in
// row-major order) whose first maximum it is, so each sum is made in the CPU kernel's order.
template <class I>
__global__ void max_pool_grad_kernel(const float* input, const float* grad, float* dx, I n,
                                     ConvIndex<I> s) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I t = i;
    const I c = t % s.depth;
    t /= s.depth;
    const I ix = t % s.in_cols;
    t /= s.in_cols;
    const I iy = t % s.in_rows;
    const I image = t / s.in_rows;
    // Windows oy with oy * stride - pad_top <= iy < oy * stride - pad_top + window_rows.
    const I y_last = (iy + s.pad_top) / s.stride_rows;
    const I y_first = max((iy + s.pad_top - s.window_rows + s.stride_rows) / s.stride_rows, I{0});
    const I x_last = (ix + s.pad_left) / s.stride_cols;
    const I x_first = max((ix + s.pad_left - s.window_cols + s.stride_cols) / s.stride_cols, I{0});
    float sum = 0.0f;
    for (I oy = y_first; oy <= y_last && oy < s.out_rows; ++oy) {
      if (oy * s.stride_rows - s.pad_top + s.window_rows <= iy) continue;
      for (I ox = x_first; ox <= x_last && ox < s.out_cols; ++ox) {
        if (ox * s.stride_cols - s.pad_left + s.window_cols <= ix) continue;
        if (first_max(input, s, image, oy, ox, c) == i) {
          sum += grad[((image * s.out_rows + oy) * s.out_cols + ox) * s.depth + c];
        }
      }
    }
    dx[i] = sum;
  }
}

// out[b][j][i] = in[b][i][j] for in [batch, rows, cols]: 32 x 32 tiles through shared memory, so
// that reads and writes are both coalesced. Blocks of 32 x 8 threads.
__global__ void batched_transpose_kernel(const float* in, float* out, int batch, int rows,
                                         int cols) {
  __shared__ float tile[32][33];
  for (int b = blockIdx.z; b < batch; b += gridDim.z) {
    const float* src = in + static_cast<int64_t>(b) * rows * cols;
    float* dst = out + static_cast<int64_t>(b) * rows * cols;
    int col = blockIdx.x * 32 + threadIdx.x;
    int row = blockIdx.y * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8) {
      if (col < cols && row + k < rows) {
        tile[threadIdx.y + k][threadIdx.x] = src[static_cast<int64_t>(row + k) * cols + col];
      }
    }
    __syncthreads();
    const int out_col = blockIdx.y * 32 + threadIdx.x;  // a row of `in`
    const int out_row = blockIdx.x * 32 + threadIdx.y;  // a column of `in`
    for (int k = 0; k < 32; k += 8) {
      if (out_col < rows && out_row + k < cols) {
        dst[static_cast<int64_t>(out_row + k) * rows + out_col] =
            tile[threadIdx.x][threadIdx.y + k];
      }
    }
    __syncthreads();
  }
}

// A filter [rows, cols, in, out] (HWIO) and [out, in, rows, cols] (OIHW): i indexes the HWIO
// array.
__global__ void hwio_oihw_kernel(const float* in, float* out, int64_t spatial, int64_t in_depth,
                                 int64_t out_depth, bool to_oihw) {
  TROUPE_GRID_LOOP(i, spatial * in_depth * out_depth) {
    const int64_t o = i % out_depth;
    const int64_t c = (i / out_depth) % in_depth;
    const int64_t k = i / (out_depth * in_depth);  // the spatial position
    const int64_t j = (o * in_depth + c) * spatial + k;
    if (to_oihw) {
      out[j] = in[i];
    } else {
      out[i] = in[j];
    }
  }
}

}  // namespace

void im2col(cudaStream_t stream, const float* input, float* patches, const WindowShape& s) {
  const int64_t n = s.batch * s.out_rows * s.out_cols * s.window_rows * s.window_cols * s.depth;
  if (n == 0) return;
  if (n < INT32_MAX && s.batch * s.in_rows * s.in_cols * s.depth < INT32_MAX) {
    im2col_kernel<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        input, patches, static_cast<int32_t>(n), ConvIndex<int32_t>(s));
  } else {
    im2col_kernel<int64_t>
        <<<blocks_for(n), kThreads, 0, stream>>>(input, patches, n, ConvIndex<int64_t>(s));
  }
}

void col2im(cudaStream_t stream, const float* patches, float* input, const WindowShape& s) {
  const int64_t n = s.batch * s.in_rows * s.in_cols * s.depth;
  const int64_t patch_elements =
      s.batch * s.out_rows * s.out_cols * s.window_rows * s.window_cols * s.depth;
  if (n == 0) return;
  if (n < INT32_MAX && patch_elements < INT32_MAX) {
    col2im_kernel<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        patches, input, static_cast<int32_t>(n), ConvIndex<int32_t>(s));
  } else {
    col2im_kernel<int64_t>
        <<<blocks_for(n), kThreads, 0, stream>>>(patches, input, n, ConvIndex<int64_t>(s));
  }
}

void hwio_to_ohwi(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth) {
  const int64_t n = rows * cols * in_depth * out_depth;
  if (n > 0) {
    filter_transpose_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, rows * cols * in_depth,
                                                                    out_depth, true);
  }
}

void ohwi_to_hwio(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth) {
  const int64_t n = rows * cols * in_depth * out_depth;
  if (n > 0) {
    filter_transpose_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, rows * cols * in_depth,
                                                                    out_depth, false);
  }
}

void max_pool(cudaStream_t stream, const float* input, float* output, const WindowShape& s) {
  const int64_t n = s.batch * s.out_rows * s.out_cols * s.depth;
  if (n == 0) return;
  if (fits_32_bits(s)) {
    max_pool_kernel<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(
        input, output, static_cast<int32_t>(n), ConvIndex<int32_t>(s));
  } else {
    max_pool_kernel<int64_t>
        <<<blocks_for(n), kThreads, 0, stream>>>(input, output, n, ConvIndex<int64_t>(s));
  }
}

void max_pool_grad(cudaStream_t stream, const float* input, const float* grad, float* dx,
                   const WindowShape& s) {
  const int64_t n_in = s.batch * s.in_rows * s.in_cols * s.depth;
  const int64_t n_out = s.batch * s.out_rows * s.out_cols * s.depth;
  if (n_in == 0) return;
  const bool disjoint = s.stride_rows >= s.window_rows && s.stride_cols >= s.window_cols;
  if (disjoint) {
    cudaMemsetAsync(dx, 0, static_cast<size_t>(n_in) * sizeof(float), stream);
    if (n_out == 0) return;
    if (fits_32_bits(s)) {
      max_pool_grad_disjoint_kernel<int32_t><<<blocks_for(n_out), kThreads, 0, stream>>>(
          input, grad, dx, static_cast<int32_t>(n_out), ConvIndex<int32_t>(s));
    } else {
      max_pool_grad_disjoint_kernel<int64_t><<<blocks_for(n_out), kThreads, 0, stream>>>(
          input, grad, dx, n_out, ConvIndex<int64_t>(s));
    }
  } else if (fits_32_bits(s)) {
    max_pool_grad_kernel<int32_t><<<blocks_for(n_in), kThreads, 0, stream>>>(
        input, grad, dx, static_cast<int32_t>(n_in), ConvIndex<int32_t>(s));
  } else {
    max_pool_grad_kernel<int64_t>
        <<<blocks_for(n_in), kThreads, 0, stream>>>(input, grad, dx, n_in, ConvIndex<int64_t>(s));
  }
}

bool transposable(int64_t batch, int64_t rows, int64_t cols) {
  return batch * rows * cols < INT32_MAX && (rows + 31) / 32 <= 65535;
}

void batched_transpose(cudaStream_t stream, const float* in, float* out, int64_t batch,
                       int64_t rows, int64_t cols) {
  if (batch * rows * cols == 0) return;
  const dim3 blocks(static_cast<unsigned>((cols + 31) / 32),
                    static_cast<unsigned>((rows + 31) / 32),
                    static_cast<unsigned>(batch < 65535 ? batch : 65535));
  batched_transpose_kernel<<<blocks, dim3(32, 8), 0, stream>>>(
      in, out, static_cast<int>(batch), static_cast<int>(rows), static_cast<int>(cols));
}

void hwio_to_oihw(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth) {
  const int64_t n = rows * cols * in_depth * out_depth;
  if (n > 0) {
    hwio_oihw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, rows * cols, in_depth,
                                                             out_depth, true);
  }
}

void oihw_to_hwio(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth) {
  const int64_t n = rows * cols * in_depth * out_depth;
  if (n > 0) {
    hwio_oihw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, rows * cols, in_depth,
                                                             out_depth, false);
  }
}

void fill(cudaStream_t stream, float* out, int64_t n, float value) {
  if (n > 0) fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, n, value);
}

void fill_from(cudaStream_t stream, float* out, int64_t n, const float* value) {
  if (n > 0) fill_from_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, n, value);
}

void unary(cudaStream_t stream, UnaryOp op, const float* in, float* out, int64_t n) {
  if (n == 0) return;
  const int blocks = blocks_for(n);
  switch (op) {
#define TROUPE_UNARY_CASE(OP)                                               \
  case UnaryOp::OP:                                                         \
    unary_kernel<UnaryOp::OP><<<blocks, kThreads, 0, stream>>>(in, out, n); \
    return;
    TROUPE_UNARY_CASE(kNeg)
    TROUPE_UNARY_CASE(kSquare)
    TROUPE_UNARY_CASE(kSqrt)
    TROUPE_UNARY_CASE(kRsqrt)
    TROUPE_UNARY_CASE(kExp)
    TROUPE_UNARY_CASE(kLog)
    TROUPE_UNARY_CASE(kTanh)
    TROUPE_UNARY_CASE(kSigmoid)
    TROUPE_UNARY_CASE(kRelu)
    TROUPE_UNARY_CASE(kAbs)
#undef TROUPE_UNARY_CASE
  }
}

void binary(cudaStream_t stream, BinaryOp op, const float* a, const float* b, float* out, int64_t n,
            bool a_scalar, bool b_scalar) {
  if (n == 0) return;
  const int blocks = blocks_for(n);
  const int64_t a_step = a_scalar ? 0 : 1, b_step = b_scalar ? 0 : 1;
  switch (op) {
#define TROUPE_BINARY_CASE(OP)                                                                  \
  case BinaryOp::OP:                                                                            \
    binary_kernel<BinaryOp::OP><<<blocks, kThreads, 0, stream>>>(a, b, out, n, a_step, b_step); \
    return;
    TROUPE_BINARY_CASE(kAdd)
    TROUPE_BINARY_CASE(kSub)
    TROUPE_BINARY_CASE(kMul)
    TROUPE_BINARY_CASE(kDiv)
    TROUPE_BINARY_CASE(kMaximum)
    TROUPE_BINARY_CASE(kMinimum)
    TROUPE_BINARY_CASE(kSquaredDifference)
    TROUPE_BINARY_CASE(kReluGrad)
    TROUPE_BINARY_CASE(kSigmoidGrad)
    TROUPE_BINARY_CASE(kTanhGrad)
#undef TROUPE_BINARY_CASE
  }
}

void binary(cudaStream_t stream, BinaryOp op, const float* a, const float* b, float* out, int64_t n,
            const Broadcast& shape) {
  if (n == 0) return;
  const int blocks = blocks_for(n);
  switch (op) {
#define TROUPE_BINARY_CASE(OP)                                                                   \
  case BinaryOp::OP:                                                                             \
    broadcast_binary_kernel<BinaryOp::OP><<<blocks, kThreads, 0, stream>>>(a, b, out, n, shape); \
    return;
    TROUPE_BINARY_CASE(kAdd)
    TROUPE_BINARY_CASE(kSub)
    TROUPE_BINARY_CASE(kMul)
    TROUPE_BINARY_CASE(kDiv)
    TROUPE_BINARY_CASE(kMaximum)
    TROUPE_BINARY_CASE(kMinimum)
    TROUPE_BINARY_CASE(kSquaredDifference)
    TROUPE_BINARY_CASE(kReluGrad)
    TROUPE_BINARY_CASE(kSigmoidGrad)
    TROUPE_BINARY_CASE(kTanhGrad)
#undef TROUPE_BINARY_CASE
  }
}

void broadcast(cudaStream_t stream, const float* in, float* out, int64_t n,
               const Broadcast& shape) {
  if (n > 0) broadcast_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n, shape);
}

void bias_add(cudaStream_t stream, const float* x, const float* bias, float* out, int64_t n,
              int64_t channels) {
  if (n > 0) bias_add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, bias, out, n, channels);
}

int reduce_parts(int64_t outer, int64_t reduced, int64_t inner) {
  if (inner == 1) return 1;
  // Enough threads to fill the GPU (about 64 K) when the outputs alone are too few, each
  // summing at least 32 rows.
  const int64_t outputs = outer * inner;
  int64_t parts = outputs >= 65536 ? 1 : 65536 / (outputs > 0 ? outputs : 1);
  parts = std::min<int64_t>(parts, (reduced + 31) / 32);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(parts, 256)));
}

void reduce_sum(cudaStream_t stream, const float* in, float* out, int64_t outer, int64_t reduced,
                int64_t inner, float scale, float* scratch) {
  if (outer * inner == 0) return;
  if (inner == 1) {
    reduce_rows_kernel<<<static_cast<unsigned>(outer), row_threads(reduced), 0, stream>>>(
        in, out, reduced, scale);
    return;
  }
  const int64_t outputs = outer * inner;
  const int parts = reduce_parts(outer, reduced, inner);
  const int64_t rows = (reduced + parts - 1) / parts;
  dim3 grid(blocks_for(outputs), parts);
  reduce_columns_kernel<<<grid, kThreads, 0, stream>>>(in, parts == 1 ? out : scratch, outer,
                                                       reduced, inner, rows, scale);
  if (parts > 1) {
    sum_parts_kernel<<<blocks_for(outputs), kThreads, 0, stream>>>(scratch, out, outputs, parts);
  }
}

void sparse_softmax_xent(cudaStream_t stream, const float* logits, const void* labels,
                         bool labels_int64, float* loss, float* backprop, int64_t rows,
                         int64_t classes) {
  if (rows == 0) return;
  const int threads = row_threads(classes);
  if (labels_int64) {
    sparse_xent_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        logits, static_cast<const int64_t*>(labels), loss, backprop, classes);
  } else {
    sparse_xent_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        logits, static_cast<const int32_t*>(labels), loss, backprop, classes);
  }
}

void softmax(cudaStream_t stream, const float* logits, float* out, int64_t rows, int64_t classes) {
  if (rows == 0) return;
  softmax_kernel<<<static_cast<unsigned>(rows), row_threads(classes), 0, stream>>>(logits, out,
                                                                                   classes);
}

void apply_update(cudaStream_t stream, UpdateRule rule, const Update& update, int64_t n) {
  if (n > 0) update_kernel<<<blocks_for(n), kThreads, 0, stream>>>(rule, update, n);
}

void sparse_apply_update(cudaStream_t stream, UpdateRule rule, const Update& update,
                         const int64_t* rows, int64_t n, int64_t inner, bool distinct) {
  if (n * inner == 0) return;
  if (distinct) {
    sparse_update_kernel<<<blocks_for(n * inner), kThreads, 0, stream>>>(rule, update, rows, n,
                                                                         inner);
  } else {
    sparse_update_in_order_kernel<<<blocks_for(inner), kThreads, 0, stream>>>(rule, update, rows, n,
                                                                              inner);
  }
}

void gather(cudaStream_t stream, const float* params, const int64_t* indices, float* out,
            int64_t outer, int64_t limit, int64_t n, int64_t inner) {
  const int64_t total = outer * n * inner;
  if (total == 0) return;
  gather_kernel<<<blocks_for(total), kThreads, 0, stream>>>(params, indices, out, limit, n, inner,
                                                            total);
}

void unsorted_segment_sum(cudaStream_t stream, const float* data, const int64_t* ids, float* out,
                          int64_t n, int64_t inner) {
  if (n * inner == 0) return;
  segment_sum_kernel<<<blocks_for(n * inner), kThreads, 0, stream>>>(data, ids, out, n, inner);
}

void scatter(cudaStream_t stream, ScatterOp op, float* ref, const int64_t* indices,
             const float* updates, int64_t n, int64_t inner, bool scalar_updates, bool distinct) {
  if (n * inner == 0) return;
  if (!distinct && (op == ScatterOp::kAdd || op == ScatterOp::kSub)) {
    scatter_add_kernel<<<blocks_for(n * inner), kThreads, 0, stream>>>(
        ref, indices, updates, n, inner, scalar_updates, op == ScatterOp::kSub ? -1.0f : 1.0f);
  } else if (distinct) {
    scatter_kernel<<<blocks_for(n * inner), kThreads, 0, stream>>>(op, ref, indices, updates, n,
                                                                   inner, scalar_updates);
  } else {
    scatter_in_order_kernel<<<blocks_for(inner), kThreads, 0, stream>>>(op, ref, indices, updates,
                                                                        n, inner, scalar_updates);
  }
}

}  // namespace troupe::cuda
