// CudnnGraphPlan: one part of one convolution (forward, filter gradient or input gradient; one
// geometry, one layout) as an execution plan of cuDNN's graph API, finalized once and kept.
//
// Why: cuDNN 9's legacy calls (cudnnConvolutionForward and its backward companions) cost the
// host 40-170 us each on an H200's host, most of it building what a plan holds; executing a
// kept plan costs about a kernel launch. A step whose GPU waits for its host runs at the
// host's pace, so the host's cost of a convolution is the step's.
//
// candidates() builds the operation graph of the one convolution and the plans of the engine
// configurations cuDNN's heuristics propose (mode A; its fallback list when mode A has none),
// best first, less those whose numerics are not float32's (tensor cores, which would compute in
// TF32, and down-converted inputs, as the legacy path's CUDNN_FMA_MATH) and those that need
// more workspace than allowed; engines compiled at run time (seconds each to finalize) only
// when nothing else is left. The caller times them (CudnnConvolution) or takes the first.
// A plan is immutable once built: kernels of one GPU may share it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace troupe {

// Which part of a convolution a kernel computes.
enum class ConvPart { kForward, kFilter, kInput };

// "forward", "filter gradient" or "input gradient", for errors and the GPU profile.
inline const char* part_name(ConvPart part) {
  switch (part) {
    case ConvPart::kForward:
      return "forward";
    case ConvPart::kFilter:
      return "filter gradient";
    case ConvPart::kInput:
      return "input gradient";
  }
  return "?";
}

}  // namespace troupe

#include "troupe/devices/gpu/cudnn_library.hpp"

#ifdef TROUPE_HAVE_CUDNN

namespace troupe {

// A convolution as the graph API describes it: each tensor's logical dims (x [N, C, H, W], w
// [K, C, R, S], y [N, K, P, Q]) and the strides that say its layout in memory; spatial
// (rows, cols) pairs for the rest.
struct CudnnConvGeometry {
  int64_t x_dims[4], x_strides[4];
  int64_t w_dims[4], w_strides[4];
  int64_t y_dims[4], y_strides[4];
  int64_t pre_padding[2], post_padding[2], strides[2], dilations[2];
};

class CudnnGraphPlan {
 public:
  // The buffers' alignment the plans are built for (execute() checks it).
  static constexpr uintptr_t kAlignment = 16;

  // At most `limit` plans for `part`, best first by cuDNN's heuristics; FailedPrecondition
  // when cuDNN proposes none that builds (the caller may then use the legacy API).
  static StatusOr<std::vector<std::shared_ptr<const CudnnGraphPlan>>> candidates(
      const CudnnLibrary& library, cudnnHandle_t handle, ConvPart part,
      const CudnnConvGeometry& geometry, size_t workspace_limit, int limit);

  ~CudnnGraphPlan();
  CudnnGraphPlan(const CudnnGraphPlan&) = delete;
  CudnnGraphPlan& operator=(const CudnnGraphPlan&) = delete;

  // Queues the part on the handle's stream. x, w and y as the part reads or writes them: the
  // forward part writes y, the filter gradient w (dw), the input gradient x (dx); y is dy for
  // the gradients. workspace: workspace_bytes() of GPU memory (may be null when that is 0).
  Status execute(cudnnHandle_t handle, const float* x, const float* w, const float* y,
                 void* workspace) const;
  // Whether execute() can take these buffers (their alignment).
  static bool aligned(const void* x, const void* w, const void* y) {
    auto ok = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; };
    return ok(x) && ok(w) && ok(y);
  }

  size_t workspace_bytes() const { return workspace_bytes_; }
  // "engine 12" (cuDNN's global index), for the GPU profile's notes.
  std::string name() const;

 private:
  struct Graph;  // the descriptors a plan refers to, shared by the candidates of one graph
  CudnnGraphPlan() = default;

  const CudnnLibrary* library_ = nullptr;
  std::shared_ptr<const Graph> graph_;
  cudnnBackendDescriptor_t config_ = nullptr;
  cudnnBackendDescriptor_t plan_ = nullptr;
  int64_t engine_ = -1;
  size_t workspace_bytes_ = 0;
};

}  // namespace troupe

#endif  // TROUPE_HAVE_CUDNN
