// CudnnConvolution: one Conv2D kernel's convolutions through cuDNN (float32 without TF32, as
// the cuBLAS products): its descriptors, remade when the shapes change, and a way per direction
// (forward, filter gradient, input gradient): an algorithm and a layout, or the caller's im2col
// products.
//
// Each way is an execution plan of cuDNN's graph API, built once per geometry and kept
// (cudnn_graph_plan.hpp: a legacy call costs the host 40-170 us, executing a kept plan about a
// launch); the legacy API's algorithms where the graph API has no plan for a convolution, or
// with TROUPE_CUDNN_API=legacy.
//
// The ways are measured, as TensorFlow (TF_CUDNN_USE_AUTOTUNE, on by default) and PyTorch
// (cudnn.benchmark) do: the first time a direction runs with a geometry, cuDNN times each
// algorithm on the kernel's own buffers and the fastest is kept, for every kernel of the
// process with that geometry on that GPU. TF_CUDNN_USE_AUTOTUNE=0 (or "false") takes cuDNN's
// heuristic choice instead (its first plan), without timing. Measuring also tries NCHW,
// TensorFlow's layout for float32 convolutions on GPUs (its layout optimizer): the inputs are
// transposed to it and the output back where that is faster in all, transposes included. And it
// times the caller's im2col products against cuDNN's best, each the larger of the host's time to
// queue it and the stream's to run it (a cuDNN call costs the host 40-170 us on an H200's host, and
// a step whose GPU waits for its host runs at the host's pace), and leaves the part to them where
// they cost less. With TROUPE_GPU_PROFILE set, the choices are noted in the GPU profile.
//
// cuDNN's filters are [out, rows, cols, in] in NHWC and [out, in, rows, cols] in NCHW:
// TensorFlow's [rows, cols, in, out] is transposed on the way in (and the filter gradient on
// the way out).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "troupe/devices/gpu/cuda_kernels.hpp"
#include "troupe/devices/gpu/cudnn_graph_plan.hpp"
#include "troupe/devices/gpu/cudnn_library.hpp"
#include "troupe/devices/gpu/gpu_context.hpp"
#include "troupe/devices/op_kernel.hpp"

namespace troupe {

#ifdef TROUPE_HAVE_CUDNN

// For tests: which layout the measured choice may take (both, and the im2col products, by
// default), so that each cuDNN path can be checked whatever the GPU finds faster. Applies to
// choices made after the call.
enum class CudnnLayouts { kMeasureBoth, kOnlyNhwc, kOnlyNchw };
void set_cudnn_layouts_for_testing(CudnnLayouts layouts);
// For tests: which of cuDNN's APIs the choices made after the call may take (by default the
// graph API, the legacy one where the graph API has no plan, or only the legacy one with
// TROUPE_CUDNN_API=legacy).
enum class CudnnApi { kByEnvironment, kOnlyGraph, kOnlyLegacy };
void set_cudnn_api_for_testing(CudnnApi api);

class CudnnConvolution {
 public:
  CudnnConvolution() = default;
  ~CudnnConvolution();
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;

  // Queues `part`, or records a cuDNN error in ctx; false where cuDNN cannot take it (not
  // loaded, padding it cannot express): the caller then runs the im2col products.
  // x [batch, in_rows, in_cols, depth], w [rows, cols, depth, out_depth] (HWIO) and dy [batch,
  // out_rows, out_cols, out_depth] as `part` reads them; out is y, dw (HWIO) or dx.
  // im2col_products queues the same part without cuDNN; false also where it is measured faster.
  bool run(ConvPart part, OpKernelContext& ctx, GpuContext& gpu, const cuda::WindowShape& s,
           int64_t out_depth, const float* x, const float* w, const float* dy, float* out,
           const std::function<Status()>& im2col_products);

 private:
  struct Choice {
    std::shared_ptr<const CudnnGraphPlan> plan{};  // the graph API's way, else the legacy one's:
    int algorithm = 0;
    size_t workspace_bytes = 0;
    float milliseconds = -1;  // as cuDNN measured it (NCHW: with the transposes); -1: heuristic
    bool nchw = false;        // inputs transposed to NCHW, the output back
    bool im2col = false;      // not cuDNN: the caller's im2col products are faster
    std::string measured{};   // how the graph API's plan was chosen, for the GPU profile
  };
  struct Cost {
    double host_us = 0, stream_us = 0;
    double per_call() const { return host_us > stream_us ? host_us : stream_us; }
  };
  struct Descriptors {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
  };
  struct ProcessChoices;

  Status check(cudnnStatus_t status, const char* what) const;
  // The descriptors for `s`, remade (and the choices forgotten) when it differs from the last
  // call's.
  Status prepare(const cuda::WindowShape& s, int64_t out_depth);
  // The algorithm and layout of `part`: chosen before, chosen by the process, measured, or the
  // heuristics' (NHWC).
  StatusOr<Choice> choose(ConvPart part, OpKernelContext& ctx, GpuContext& gpu, const float* x,
                          const float* w, const float* dy, float* out,
                          const std::function<Status()>& im2col_products);
  // Queues `part` the cuDNN way `choice` says (with shape_ and out_depth_).
  Status queue(ConvPart part, GpuContext& gpu, const Choice& choice, const float* x, const float* w,
               const float* dy, float* out);
  // The host and stream time of one call of `launch` (the mean of three after a first).
  static StatusOr<Cost> time(GpuContext& gpu, const std::function<Status()>& launch);
  // The fastest way on these buffers in this layout (w: a filter-sized scratch buffer): of the
  // graph API's plans as timed here (the host's time included), else of the legacy algorithms
  // as cuDNN times them.
  StatusOr<Choice> measure(ConvPart part, GpuContext& gpu, bool nchw, const float* x, float* w,
                           const float* dy, float* out);
  // The graph API's plans of `part` in a layout (at most `limit`), or why there are none.
  StatusOr<std::vector<std::shared_ptr<const CudnnGraphPlan>>> plans(ConvPart part, GpuContext& gpu,
                                                                     bool nchw,
                                                                     size_t workspace_limit,
                                                                     int limit) const;
  // Milliseconds the NCHW transposes of `part` take.
  StatusOr<float> measure_transposes(ConvPart part, GpuContext& gpu);
  StatusOr<Choice> heuristic(ConvPart part, GpuContext& gpu);

  const CudnnLibrary* library_ = nullptr;
  Descriptors nhwc_, nchw_;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  std::vector<int64_t> key_;
  cuda::WindowShape shape_;
  int64_t out_depth_ = 0;
  bool nchw_possible_ = false;
  std::optional<Choice> choices_[3];  // by ConvPart
};

#endif  // TROUPE_HAVE_CUDNN

}  // namespace troupe
