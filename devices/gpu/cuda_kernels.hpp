// The CUDA kernels of the GPU device, as plain functions that queue them on a stream (no
// error checking here: the caller checks cudaGetLastError). float32 only; n is an element count,
// and a function given n == 0 queues nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace troupe::cuda {

enum class UnaryOp { kNeg, kSquare, kSqrt, kRsqrt, kExp, kLog, kTanh, kSigmoid, kRelu, kAbs };
// kReluGrad(g, x) = x > 0 ? g : 0; kSigmoidGrad(y, g) = g * y * (1 - y); kTanhGrad(y, g) =
// g * (1 - y^2), with TensorFlow's operand order.
enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kSquaredDifference,
  kReluGrad,
  kSigmoidGrad,
  kTanhGrad,
};

// Row-major broadcasting of two operands to an output of `rank` dims: an operand's stride is 0
// along a dimension it is broadcast over.
constexpr int kMaxRank = 6;
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

void fill(cudaStream_t stream, float* out, int64_t n, float value);
// out[i] = *value, a scalar in GPU memory.
void fill_from(cudaStream_t stream, float* out, int64_t n, const float* value);
void unary(cudaStream_t stream, UnaryOp op, const float* in, float* out, int64_t n);
// Same shapes (or b a scalar when b_scalar) ...
void binary(cudaStream_t stream, BinaryOp op, const float* a, const float* b, float* out, int64_t n,
            bool a_scalar, bool b_scalar);
// ... or broadcast.
void binary(cudaStream_t stream, BinaryOp op, const float* a, const float* b, float* out, int64_t n,
            const Broadcast& shape);
// out = in broadcast to shape.dims (a_strides describe `in`).
void broadcast(cudaStream_t stream, const float* in, float* out, int64_t n, const Broadcast& shape);
// out[i] = x[i] + bias[i % channels].
void bias_add(cudaStream_t stream, const float* x, const float* bias, float* out, int64_t n,
              int64_t channels);
// out[o, i] = scale * sum over r of in[o, r, i]. With inner > 1 and few outputs the rows are
// summed in reduce_parts(...) parts, each into `scratch` (reduce_parts * outer * inner floats;
// unused for one part), then the parts added in order: the same result on every run.
int reduce_parts(int64_t outer, int64_t reduced, int64_t inner);
void reduce_sum(cudaStream_t stream, const float* in, float* out, int64_t outer, int64_t reduced,
                int64_t inner, float scale, float* scratch);
// Softmax cross entropy of each row of logits [rows, classes] against a class index (int32 or
// int64 labels, in GPU memory): loss[rows], backprop = softmax - one_hot. A label outside
// [0, classes) gives NaN in its row, as TensorFlow's GPU kernel does.
void sparse_softmax_xent(cudaStream_t stream, const float* logits, const void* labels,
                         bool labels_int64, float* loss, float* backprop, int64_t rows,
                         int64_t classes);
// Softmax of each row.
void softmax(cudaStream_t stream, const float* logits, float* out, int64_t rows, int64_t classes);

// A 2-D convolution's or pooling's geometry over NHWC images (graph/ops/window_geometry.hpp).
struct WindowShape {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;  // the input
  int64_t window_rows = 1, window_cols = 1;                // the filter or pooling window
  int64_t out_rows = 0, out_cols = 0;                      // output positions
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t pad_top = 0, pad_left = 0;
};
// The im2col patches of a convolution: [batch * out_rows * out_cols, window_rows * window_cols *
// depth], zeros where the window hangs over the padding.
void im2col(cudaStream_t stream, const float* input, float* patches, const WindowShape& shape);
// The reverse: each input element the sum of the patch entries it was copied to.
void col2im(cudaStream_t stream, const float* patches, float* input, const WindowShape& shape);
// A filter [rows, cols, in, out] (TensorFlow's layout) as [out, rows, cols, in] (cuDNN's NHWC
// filters), and back.
void hwio_to_ohwi(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth);
void ohwi_to_hwio(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth);
// A filter [rows, cols, in, out] as [out, in, rows, cols] (cuDNN's NCHW filters), and back.
void hwio_to_oihw(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth);
void oihw_to_hwio(cudaStream_t stream, const float* in, float* out, int64_t rows, int64_t cols,
                  int64_t in_depth, int64_t out_depth);
// out[b][j][i] = in[b][i][j] for `in` [batch, rows, cols]: NHWC to NCHW is (batch, H*W, C), and
// back (batch, C, H*W). transposable() says whether the kernel takes such sizes.
bool transposable(int64_t batch, int64_t rows, int64_t cols);
void batched_transpose(cudaStream_t stream, const float* in, float* out, int64_t batch,
                       int64_t rows, int64_t cols);
// Max pooling over the real elements of each window, and its gradient: each output's gradient
// to the first maximum of its window (row-major), as troupe's CPU kernel does.
void max_pool(cudaStream_t stream, const float* input, float* output, const WindowShape& shape);
void max_pool_grad(cudaStream_t stream, const float* input, const float* grad, float* dx,
                   const WindowShape& shape);

// The optimizer updates, with TensorFlow's formulas (graph/ops/training_ops.hpp); scalars are
// in GPU memory, read by the kernel. refs: the variable, then its slots.
enum class UpdateRule { kGradientDescent, kMomentum, kAdagrad, kAdam };
struct Update {
  float* refs[3] = {};
  const float* grad = nullptr;
  const float* scalars[6] = {};  // in the Apply op's order after the refs, without the grad
  bool nesterov = false;
};
void apply_update(cudaStream_t stream, UpdateRule rule, const Update& update, int64_t n);
// The same update of the rows `rows[k]` (k < n, in GPU memory, each in range: the caller
// checks) of the variable and its slots, each `inner` elements wide, by the gradient's row k.
// distinct: no row twice, so every element runs in parallel; otherwise the rows are applied in
// order along each column, so a repeated row sees the earlier update, as the CPU kernel does.
void sparse_apply_update(cudaStream_t stream, UpdateRule rule, const Update& update,
                         const int64_t* rows, int64_t n, int64_t inner, bool distinct);

// ---- gathers and scatters (indices int64 in GPU memory, checked in range by the caller) ----

// out[o][i][j] = params[o][indices[i]][j], o < outer, i < n, j < inner; params has `limit`
// rows per o.
void gather(cudaStream_t stream, const float* params, const int64_t* indices, float* out,
            int64_t outer, int64_t limit, int64_t n, int64_t inner);
// out[ids[i]][j] += data[i][j] for every ids[i] >= 0 (out zeroed first by the caller).
void unsorted_segment_sum(cudaStream_t stream, const float* data, const int64_t* ids, float* out,
                          int64_t n, int64_t inner);
// ref[indices[k]][j] op= updates[k][j] (updates[0] for every element when scalar_updates);
// distinct as for sparse_apply_update, but repeated rows of Add and Sub are summed atomically,
// in no particular order. Min and Max as std::min and std::max (a NaN in ref stays).
enum class ScatterOp { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };
void scatter(cudaStream_t stream, ScatterOp op, float* ref, const int64_t* indices,
             const float* updates, int64_t n, int64_t inner, bool scalar_updates, bool distinct);

}  // namespace troupe::cuda
