// CudnnConvolution: descriptors in both layouts, the measured choice of algorithm and layout,
// and the calls.
#include "troupe/devices/gpu/cudnn_convolution.hpp"

#ifdef TROUPE_HAVE_CUDNN

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace troupe {
namespace {

// TF_CUDNN_USE_AUTOTUNE, read once: on unless "0" or "false" (TensorFlow's variable and rule).
bool autotune() {
  static const bool on = [] {
    const char* value = std::getenv("TF_CUDNN_USE_AUTOTUNE");
    if (value == nullptr) return true;
    std::string v = value;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    return !(v == "0" || v == "false");
  }();
  return on;
}

// The workspace the measurements may use: 64 MiB, or an eighth of the GPU's free memory when
// that is less (an algorithm that needs more is not considered).
size_t measuring_workspace_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  size_t limit = size_t{64} << 20;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    limit = std::min(limit, free_bytes / 8);
  } else {
    cudaGetLastError();
  }
  return limit;
}

std::atomic<CudnnLayouts> layouts{CudnnLayouts::kMeasureBoth};
std::atomic<CudnnApi> api_for_testing{CudnnApi::kByEnvironment};

// Which of cuDNN's APIs the choices may take: the test's choice, else TROUPE_CUDNN_API's
// ("graph", the default: the graph API where it has a plan, else the legacy one; "legacy":
// only the legacy one). InvalidArgument for any other value.
enum class Apis { kGraphElseLegacy, kOnlyGraph, kOnlyLegacy };
StatusOr<Apis> apis() {
  switch (api_for_testing.load()) {
    case CudnnApi::kOnlyGraph:
      return Apis::kOnlyGraph;
    case CudnnApi::kOnlyLegacy:
      return Apis::kOnlyLegacy;
    case CudnnApi::kByEnvironment:
      break;
  }
  static const StatusOr<Apis> by_environment = []() -> StatusOr<Apis> {
    const char* value = std::getenv("TROUPE_CUDNN_API");
    if (value == nullptr || std::string(value).empty() || std::string(value) == "graph") {
      return Apis::kGraphElseLegacy;
    }
    if (std::string(value) == "legacy") return Apis::kOnlyLegacy;
    return errors::InvalidArgument("TROUPE_CUDNN_API is '{}': expected 'graph' or 'legacy'", value);
  }();
  return by_environment;
}

// A way for the GPU profile's notes.
template <class Choice>
std::string way(const Choice& choice) {
  if (choice.plan != nullptr) return "graph API " + choice.plan->name();
  return fmt::format("algorithm {}", choice.algorithm);
}

// How many of the graph API's plans a measurement times.
constexpr int kPlansTimed = 8;
// How much faster than the heuristics' first plan another must measure to be taken.
constexpr float kClearlyFaster = 0.9f;

// The first algorithm of cuDNN's list (fastest or most promising first) that ran.
template <class Perf>
std::optional<Perf> first_success(const Perf* perfs, int found) {
  for (int k = 0; k < found; ++k) {
    if (perfs[k].status == CUDNN_STATUS_SUCCESS) return perfs[k];
  }
  return std::nullopt;
}

}  // namespace

void set_cudnn_layouts_for_testing(CudnnLayouts value) {
  layouts = value;
}

void set_cudnn_api_for_testing(CudnnApi value) {
  api_for_testing = value;
}

// The choices of the process: by GPU, part, autotuning and geometry.
struct CudnnConvolution::ProcessChoices {
  std::mutex mutex;
  std::map<std::vector<int64_t>, Choice> chosen;
  static ProcessChoices& get() {
    static auto* choices = new ProcessChoices();
    return *choices;
  }
};

CudnnConvolution::~CudnnConvolution() {
  if (library_ == nullptr) return;
  for (Descriptors* d : {&nhwc_, &nchw_}) {
    library_->destroy_tensor(d->x);
    library_->destroy_tensor(d->y);
    library_->destroy_filter(d->w);
  }
  library_->destroy_convolution(conv_);
}

Status CudnnConvolution::check(cudnnStatus_t status, const char* what) const {
  if (status == CUDNN_STATUS_SUCCESS) return Status::OK();
  return errors::Internal("{}: {}", what, library_->error_string(status));
}

bool CudnnConvolution::run(ConvPart part, OpKernelContext& ctx, GpuContext& gpu,
                           const cuda::WindowShape& s, int64_t out_depth, const float* x,
                           const float* w, const float* dy, float* out,
                           const std::function<Status()>& im2col_products) {
  auto* handle = static_cast<cudnnHandle_t>(gpu.cudnn());
  if (handle == nullptr) return false;
  // cuDNN pads symmetrically: its output size must be ours.
  auto cudnn_out = [](int64_t in, int64_t pad, int64_t window, int64_t dilation, int64_t stride) {
    return (in + 2 * pad - (window - 1) * dilation - 1) / stride + 1;
  };
  auto fits = [](std::initializer_list<int64_t> sizes) {
    return std::all_of(sizes.begin(), sizes.end(), [](int64_t v) { return v <= INT_MAX; });
  };
  if (cudnn_out(s.in_rows, s.pad_top, s.window_rows, s.dilation_rows, s.stride_rows) !=
          s.out_rows ||
      cudnn_out(s.in_cols, s.pad_left, s.window_cols, s.dilation_cols, s.stride_cols) !=
          s.out_cols ||
      !fits({s.batch, s.depth, s.in_rows, s.in_cols, out_depth, s.out_rows, s.out_cols})) {
    return false;
  }
  auto fail = [&](const Status& status) {
    ctx.set_status(status.with_context(fmt::format("node '{}' ({}) on {}: cuDNN", ctx.node().name(),
                                                   ctx.node().op_name(), ctx.device().name())));
    return true;
  };
  if (Status prepared = prepare(s, out_depth); !prepared.ok()) return fail(prepared);
  auto choice = choose(part, ctx, gpu, x, w, dy, out, im2col_products);
  if (!choice.ok()) return fail(choice.status());
  if (choice->im2col) return false;
  // The graph API's plans take buffers aligned as they were built for; GPU allocations are,
  // a buffer that is not (a view into another) goes the im2col way.
  if (choice->plan != nullptr &&
      !CudnnGraphPlan::aligned(x != nullptr ? x : out, dy != nullptr ? dy : out, out)) {
    return false;
  }
  if (Status queued = queue(part, gpu, *choice, x, w, dy, out); !queued.ok()) return fail(queued);
  return true;
}

Status CudnnConvolution::queue(ConvPart part, GpuContext& gpu, const Choice& choice, const float* x,
                               const float* w, const float* dy, float* out) {
  auto* handle = static_cast<cudnnHandle_t>(gpu.cudnn());
  const cuda::WindowShape& s = shape_;
  const int64_t out_depth = out_depth_;
  const Descriptors& d = choice.nchw ? nchw_ : nhwc_;
  const cudaStream_t stream = gpu.stream();
  const int64_t in_area = s.in_rows * s.in_cols, out_area = s.out_rows * s.out_cols;
  const int64_t x_elements = s.batch * in_area * s.depth;
  const int64_t y_elements = s.batch * out_area * out_depth;
  // The buffers cuDNN reads and writes: the kernel's own in NHWC, transposed copies in NCHW.
  // (An allocation of 0 bytes, a workspace cuDNN does not need, is a null pointer.)
  auto allocate = [&](int64_t elements) {
    return gpu.allocate(DataType::kFloat, TensorShape{elements});
  };
  TROUPE_ASSIGN_OR_RETURN(Tensor filter_tensor,
                          allocate(s.window_rows * s.window_cols * s.depth * out_depth));
  TROUPE_ASSIGN_OR_RETURN(Tensor workspace,
                          allocate(static_cast<int64_t>((choice.workspace_bytes + 3) / 4)));
  float* filter = filter_tensor.data<float>();
  if (part != ConvPart::kFilter) {
    (choice.nchw ? cuda::hwio_to_oihw : cuda::hwio_to_ohwi)(stream, w, filter, s.window_rows,
                                                            s.window_cols, s.depth, out_depth);
  }
  const float* x_in = x;
  const float* dy_in = dy;
  float* result = out;
  Tensor x_t, dy_t, result_t;
  if (choice.nchw) {
    if (part != ConvPart::kInput) {
      TROUPE_ASSIGN_OR_RETURN(x_t, allocate(x_elements));
      cuda::batched_transpose(stream, x, x_t.data<float>(), s.batch, in_area, s.depth);
      x_in = x_t.data<float>();
    }
    if (part != ConvPart::kForward) {
      TROUPE_ASSIGN_OR_RETURN(dy_t, allocate(y_elements));
      cuda::batched_transpose(stream, dy, dy_t.data<float>(), s.batch, out_area, out_depth);
      dy_in = dy_t.data<float>();
    }
    if (part != ConvPart::kFilter) {
      TROUPE_ASSIGN_OR_RETURN(result_t,
                              allocate(part == ConvPart::kForward ? y_elements : x_elements));
      result = result_t.data<float>();
    }
  }
  void* space = workspace.raw_data();
  const float one = 1.0f, zero = 0.0f;
  const size_t space_bytes = choice.workspace_bytes;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  if (choice.plan != nullptr) {
    // x, w and y as the part reads or writes them.
    const float* plan_x = part == ConvPart::kInput ? result : x_in;
    const float* plan_y = part == ConvPart::kForward ? result : dy_in;
    TROUPE_RETURN_IF_ERROR(choice.plan->execute(handle, plan_x, filter, plan_y, space)
                               .with_context(choice.nchw ? "NCHW" : "NHWC"));
  } else if (part == ConvPart::kForward) {
    status = library_->forward(handle, &one, d.x, x_in, d.w, filter, conv_,
                               static_cast<cudnnConvolutionFwdAlgo_t>(choice.algorithm), space,
                               space_bytes, &zero, d.y, result);
  } else if (part == ConvPart::kInput) {
    status = library_->backward_data(handle, &one, d.w, filter, d.y, dy_in, conv_,
                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(choice.algorithm),
                                     space, space_bytes, &zero, d.x, result);
  } else {
    status =
        library_->backward_filter(handle, &one, d.x, x_in, d.y, dy_in, conv_,
                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(choice.algorithm),
                                  space, space_bytes, &zero, d.w, filter);
  }
  if (status != CUDNN_STATUS_SUCCESS) {
    return errors::Internal("algorithm {} ({}): {}", choice.algorithm,
                            choice.nchw ? "NCHW" : "NHWC", library_->error_string(status));
  }
  if (part == ConvPart::kFilter) {
    (choice.nchw ? cuda::oihw_to_hwio : cuda::ohwi_to_hwio)(stream, filter, out, s.window_rows,
                                                            s.window_cols, s.depth, out_depth);
  } else if (choice.nchw && part == ConvPart::kForward) {
    cuda::batched_transpose(stream, result, out, s.batch, out_depth, out_area);
  } else if (choice.nchw) {
    cuda::batched_transpose(stream, result, out, s.batch, s.depth, in_area);
  }
  return Status::OK();
}

StatusOr<CudnnConvolution::Cost> CudnnConvolution::time(GpuContext& gpu,
                                                        const std::function<Status()>& launch) {
  constexpr int kTimes = 3;
  TROUPE_RETURN_IF_ERROR(launch());  // the first call may load kernels
  TROUPE_RETURN_IF_ERROR(gpu.synchronize());
  cudaEvent_t start = nullptr, stop = nullptr;
  TROUPE_RETURN_IF_ERROR(gpu.check(cudaEventCreate(&start), "cudaEventCreate"));
  TROUPE_RETURN_IF_ERROR(gpu.check(cudaEventCreate(&stop), "cudaEventCreate"));
  Status status = gpu.check(cudaEventRecord(start, gpu.stream()), "cudaEventRecord");
  const auto host_start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTimes && status.ok(); ++i)
    status = launch();
  const auto host_stop = std::chrono::steady_clock::now();
  if (status.ok()) status = gpu.check(cudaEventRecord(stop, gpu.stream()), "cudaEventRecord");
  if (status.ok()) status = gpu.check(cudaEventSynchronize(stop), "timing a convolution");
  float ms = 0;
  if (status.ok())
    status = gpu.check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  TROUPE_RETURN_IF_ERROR(status);
  Cost cost;
  cost.host_us = std::chrono::duration<double, std::micro>(host_stop - host_start).count() / kTimes;
  cost.stream_us = ms * 1000.0 / kTimes;
  return cost;
}

Status CudnnConvolution::prepare(const cuda::WindowShape& s, int64_t out_depth) {
  const std::vector<int64_t> key = {s.batch,       s.in_rows,       s.in_cols,       s.depth,
                                    s.window_rows, s.window_cols,   out_depth,       s.stride_rows,
                                    s.stride_cols, s.dilation_rows, s.dilation_cols, s.pad_top,
                                    s.pad_left};
  if (key == key_) return Status::OK();
  if (library_ == nullptr) {
    TROUPE_ASSIGN_OR_RETURN(library_, cudnn_library());
    for (Descriptors* d : {&nhwc_, &nchw_}) {
      TROUPE_RETURN_IF_ERROR(check(library_->create_tensor(&d->x), "cudnnCreateTensorDescriptor"));
      TROUPE_RETURN_IF_ERROR(check(library_->create_tensor(&d->y), "cudnnCreateTensorDescriptor"));
      TROUPE_RETURN_IF_ERROR(check(library_->create_filter(&d->w), "cudnnCreateFilterDescriptor"));
    }
    TROUPE_RETURN_IF_ERROR(
        check(library_->create_convolution(&conv_), "cudnnCreateConvolutionDescriptor"));
  }
  key_.clear();
  for (auto& choice : choices_)
    choice.reset();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  for (auto [d, format] : {std::pair{&nhwc_, CUDNN_TENSOR_NHWC}, {&nchw_, CUDNN_TENSOR_NCHW}}) {
    TROUPE_RETURN_IF_ERROR(check(library_->set_tensor(d->x, format, CUDNN_DATA_FLOAT, i(s.batch),
                                                      i(s.depth), i(s.in_rows), i(s.in_cols)),
                                 "cudnnSetTensor4dDescriptor"));
    TROUPE_RETURN_IF_ERROR(check(library_->set_tensor(d->y, format, CUDNN_DATA_FLOAT, i(s.batch),
                                                      i(out_depth), i(s.out_rows), i(s.out_cols)),
                                 "cudnnSetTensor4dDescriptor"));
    TROUPE_RETURN_IF_ERROR(
        check(library_->set_filter(d->w, CUDNN_DATA_FLOAT, format, i(out_depth), i(s.depth),
                                   i(s.window_rows), i(s.window_cols)),
              "cudnnSetFilter4dDescriptor"));
  }
  TROUPE_RETURN_IF_ERROR(
      check(library_->set_convolution(conv_, i(s.pad_top), i(s.pad_left), i(s.stride_rows),
                                      i(s.stride_cols), i(s.dilation_rows), i(s.dilation_cols),
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "cudnnSetConvolution2dDescriptor"));
  TROUPE_RETURN_IF_ERROR(
      check(library_->set_math_type(conv_, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType"));
  const int64_t in_area = s.in_rows * s.in_cols, out_area = s.out_rows * s.out_cols;
  nchw_possible_ = cuda::transposable(s.batch, in_area, s.depth) &&
                   cuda::transposable(s.batch, s.depth, in_area) &&
                   cuda::transposable(s.batch, out_area, out_depth) &&
                   cuda::transposable(s.batch, out_depth, out_area);
  shape_ = s;
  out_depth_ = out_depth;
  key_ = key;
  return Status::OK();
}

StatusOr<CudnnConvolution::Choice> CudnnConvolution::choose(
    ConvPart part, OpKernelContext& ctx, GpuContext& gpu, const float* x, const float* w,
    const float* dy, float* out, const std::function<Status()>& im2col_products) {
  auto& mine = choices_[static_cast<int>(part)];
  if (mine) return *mine;
  const CudnnLayouts allowed = layouts.load();
  TROUPE_ASSIGN_OR_RETURN(Apis api, apis());
  // By context, not only by GPU: a graph-API plan is bound to the cuDNN handle it was built
  // with, and each context (each task's device) has its own.
  std::vector<int64_t> process_key = {static_cast<int64_t>(gpu.serial()),
                                      static_cast<int64_t>(part), autotune() ? 1 : 0,
                                      static_cast<int64_t>(allowed), static_cast<int64_t>(api)};
  process_key.insert(process_key.end(), key_.begin(), key_.end());
  ProcessChoices& process = ProcessChoices::get();
  {
    std::lock_guard lock(process.mutex);
    auto found = process.chosen.find(process_key);
    if (found != process.chosen.end()) {
      mine = found->second;
      return *mine;
    }
  }
  if (!autotune()) {
    TROUPE_ASSIGN_OR_RETURN(Choice choice, heuristic(part, gpu));
    mine = choice;
  } else {
    // cuDNN's algorithms in both layouts, timed by cuDNN on the kernel's buffers (their
    // contents do not matter to the timing; what is written is overwritten by the call that
    // follows), NCHW with the cost of its transposes.
    const cuda::WindowShape& s = shape_;
    TROUPE_ASSIGN_OR_RETURN(
        Tensor filter, gpu.allocate(DataType::kFloat, TensorShape{s.window_rows * s.window_cols *
                                                                  s.depth * out_depth_}));
    float* scratch_w = filter.data<float>();
    TROUPE_ASSIGN_OR_RETURN(Choice nhwc, measure(part, gpu, false, x, scratch_w, dy, out));
    Choice best = nhwc;
    std::string nchw_note = !nchw_possible_ ? "not measured (too large for the transposes)"
                                            : "not measured (NHWC only, for a test)";
    // The graph API's plans read NHWC as it is, with engines made for it: NCHW's transposes,
    // measured on their own, cost a step more than they save (a test may still ask for them).
    if (nhwc.plan != nullptr && allowed == CudnnLayouts::kMeasureBoth) {
      nchw_note = "not measured (the graph API's plans take NHWC as it is)";
    } else if (nchw_possible_ && allowed != CudnnLayouts::kOnlyNhwc) {
      TROUPE_ASSIGN_OR_RETURN(Choice nchw, measure(part, gpu, true, x, scratch_w, dy, out));
      TROUPE_ASSIGN_OR_RETURN(float transposes, measure_transposes(part, gpu));
      nchw.nchw = true;
      nchw.milliseconds += transposes;
      nchw_note = fmt::format("{} {:.4f} ms with {:.4f} ms of transposes", way(nchw),
                              nchw.milliseconds, transposes);
      if (nchw.milliseconds < nhwc.milliseconds || allowed == CudnnLayouts::kOnlyNchw) {
        best = nchw;
      }
    }
    // What a step pays for each way, the host's time to queue it included: cuDNN's calls cost
    // the host far more than a kernel launch, and a step whose GPU waits for its host runs at
    // the host's pace. Each way costs the larger of its host and its stream time.
    std::string im2col_note = "not measured (cuDNN only, for a test)";
    if (allowed == CudnnLayouts::kMeasureBoth) {
      TROUPE_ASSIGN_OR_RETURN(Cost cudnn_cost,
                              time(gpu, [&] { return queue(part, gpu, best, x, w, dy, out); }));
      TROUPE_ASSIGN_OR_RETURN(Cost im2col_cost, time(gpu, im2col_products));
      im2col_note = fmt::format(
          "cuDNN {:.1f} us on the host, {:.1f} on the stream; im2col products {:.1f} "
          "and {:.1f}",
          cudnn_cost.host_us, cudnn_cost.stream_us, im2col_cost.host_us, im2col_cost.stream_us);
      if (im2col_cost.per_call() < cudnn_cost.per_call()) best.im2col = true;
    }
    if (GpuProfiler* profiler = gpu.profiler(); profiler != nullptr) {
      profiler->note(fmt::format(
          "{} '{}' {} of [{}x{}x{}x{}] by [{}x{}x{}x{}]: NHWC {} {:.4f} ms{}; NCHW {}; "
          "{}; chosen {}",
          ctx.node().op_name(), ctx.node().name(), part_name(part), s.batch, s.in_rows, s.in_cols,
          s.depth, s.window_rows, s.window_cols, s.depth, out_depth_, way(nhwc), nhwc.milliseconds,
          nhwc.measured.empty() ? "" : " " + nhwc.measured, nchw_note, im2col_note,
          best.im2col ? "im2col products"
          : best.nchw ? "cuDNN NCHW"
                      : "cuDNN NHWC"));
    }
    mine = best;
  }
  std::lock_guard lock(process.mutex);
  process.chosen[process_key] = *mine;
  return *mine;
}

StatusOr<std::vector<std::shared_ptr<const CudnnGraphPlan>>> CudnnConvolution::plans(
    ConvPart part, GpuContext& gpu, bool nchw, size_t workspace_limit, int limit) const {
  const cuda::WindowShape& s = shape_;
  const int64_t n = s.batch, c = s.depth, h = s.in_rows, w = s.in_cols, k = out_depth_,
                r = s.window_rows, q = s.window_cols, p = s.out_rows, o = s.out_cols;
  // Logical dims [N, C, H, W], [K, C, R, S], [N, K, P, Q]; the strides say the layout.
  CudnnConvGeometry g = {
      .x_dims = {n, c, h, w},
      .x_strides = {h * w * c, 1, w * c, c},
      .w_dims = {k, c, r, q},
      .w_strides = {r * q * c, 1, q * c, c},
      .y_dims = {n, k, p, o},
      .y_strides = {p * o * k, 1, o * k, k},
      .pre_padding = {s.pad_top, s.pad_left},
      .post_padding = {s.pad_top, s.pad_left},  // symmetric, as run() checked
      .strides = {s.stride_rows, s.stride_cols},
      .dilations = {s.dilation_rows, s.dilation_cols},
  };
  if (nchw) {
    const int64_t x_strides[4] = {c * h * w, h * w, w, 1};
    const int64_t w_strides[4] = {c * r * q, r * q, q, 1};
    const int64_t y_strides[4] = {k * p * o, p * o, o, 1};
    std::copy(std::begin(x_strides), std::end(x_strides), g.x_strides);
    std::copy(std::begin(w_strides), std::end(w_strides), g.w_strides);
    std::copy(std::begin(y_strides), std::end(y_strides), g.y_strides);
  }
  return CudnnGraphPlan::candidates(*library_, static_cast<cudnnHandle_t>(gpu.cudnn()), part, g,
                                    workspace_limit, limit);
}

StatusOr<CudnnConvolution::Choice> CudnnConvolution::measure(ConvPart part, GpuContext& gpu,
                                                             bool nchw, const float* x, float* w,
                                                             const float* dy, float* out) {
  auto* handle = static_cast<cudnnHandle_t>(gpu.cudnn());
  const size_t limit = measuring_workspace_bytes();
  TROUPE_ASSIGN_OR_RETURN(
      Tensor workspace,
      gpu.allocate(DataType::kFloat, TensorShape{static_cast<int64_t>(limit / sizeof(float))}));
  void* space = workspace.raw_data();
  TROUPE_ASSIGN_OR_RETURN(Apis api, apis());
  if (api != Apis::kOnlyLegacy) {
    auto candidates = plans(part, gpu, nchw, limit, kPlansTimed);
    Status failure = candidates.status();
    if (candidates.ok()) {
      // Each plan on these buffers (what is written is overwritten by the call that follows),
      // costing the larger of its host and its stream time.
      const float* plan_x = part == ConvPart::kInput ? out : x;
      const float* plan_w = w;
      const float* plan_y = part == ConvPart::kForward ? out : dy;
      std::optional<Choice> first, best;
      for (const auto& plan : *candidates) {
        auto timed =
            time(gpu, [&] { return plan->execute(handle, plan_x, plan_w, plan_y, space); });
        if (!timed.ok()) {  // this plan cannot run here: the others may
          failure = timed.status();
          continue;
        }
        const float ms = static_cast<float>(timed->per_call() / 1000.0);
        const Choice choice{.plan = plan,
                            .workspace_bytes = plan->workspace_bytes(),
                            .milliseconds = ms,
                            .nchw = nchw};
        if (!first) first = choice;
        if (!best || ms < best->milliseconds) best = choice;
      }
      if (best) {
        // The heuristics' first plan unless another measures clearly faster: one call timed
        // alone, on an idle GPU with warm caches, is not the call inside a step (docs/gpu.md,
        // "Convolutions").
        if (best->milliseconds > kClearlyFaster * first->milliseconds) best = first;
        best->measured =
            fmt::format("({} of {} plans timed; the heuristics' first: {} {:.4f} ms)", way(*best),
                        candidates->size(), way(*first), first->milliseconds);
        return *best;
      }
    }
    // No plan: the legacy API's algorithms, below, unless only the graph API may be used.
    if (api == Apis::kOnlyGraph) return failure;
  }
  const Descriptors& d = nchw ? nchw_ : nhwc_;
  constexpr int kAsk = 16;
  int found = 0;
  std::optional<Choice> best;
  auto keep = [&](const auto& perf) {
    if (perf) {
      best = Choice{.plan = nullptr,
                    .algorithm = static_cast<int>(perf->algo),
                    .workspace_bytes = perf->memory,
                    .milliseconds = perf->time};
    }
  };
  // Each call times the algorithms on the stream and returns when it is done.
  if (part == ConvPart::kForward) {
    cudnnConvolutionFwdAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(check(library_->find_forward(handle, d.x, x, d.w, w, conv_, d.y, out,
                                                        kAsk, &found, perfs, space, limit),
                                 "cudnnFindConvolutionForwardAlgorithmEx"));
    keep(first_success(perfs, found));
  } else if (part == ConvPart::kInput) {
    cudnnConvolutionBwdDataAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(check(library_->find_data(handle, d.w, w, d.y, dy, conv_, d.x, out, kAsk,
                                                     &found, perfs, space, limit),
                                 "cudnnFindConvolutionBackwardDataAlgorithmEx"));
    keep(first_success(perfs, found));
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(check(library_->find_filter(handle, d.x, x, d.y, dy, conv_, d.w, w, kAsk,
                                                       &found, perfs, space, limit),
                                 "cudnnFindConvolutionBackwardFilterAlgorithmEx"));
    keep(first_success(perfs, found));
  }
  if (!best) {
    return errors::Internal("cuDNN has no {} algorithm for this convolution", part_name(part));
  }
  best->nchw = nchw;
  return *best;
}

StatusOr<float> CudnnConvolution::measure_transposes(ConvPart part, GpuContext& gpu) {
  const cuda::WindowShape& s = shape_;
  const int64_t in_area = s.in_rows * s.in_cols, out_area = s.out_rows * s.out_cols;
  const int64_t x_elements = s.batch * in_area * s.depth;
  const int64_t y_elements = s.batch * out_area * out_depth_;
  TROUPE_ASSIGN_OR_RETURN(Tensor x_a, gpu.allocate(DataType::kFloat, TensorShape{x_elements}));
  TROUPE_ASSIGN_OR_RETURN(Tensor x_b, gpu.allocate(DataType::kFloat, TensorShape{x_elements}));
  TROUPE_ASSIGN_OR_RETURN(Tensor y_a, gpu.allocate(DataType::kFloat, TensorShape{y_elements}));
  TROUPE_ASSIGN_OR_RETURN(Tensor y_b, gpu.allocate(DataType::kFloat, TensorShape{y_elements}));
  const cudaStream_t stream = gpu.stream();
  auto transposes = [&] {
    // What run() adds in NCHW: the inputs in, the output (not the filter) back.
    if (part != ConvPart::kInput) {
      cuda::batched_transpose(stream, x_a.data<float>(), x_b.data<float>(), s.batch, in_area,
                              s.depth);
    }
    if (part != ConvPart::kForward) {
      cuda::batched_transpose(stream, y_a.data<float>(), y_b.data<float>(), s.batch, out_area,
                              out_depth_);
    }
    if (part == ConvPart::kForward) {
      cuda::batched_transpose(stream, y_b.data<float>(), y_a.data<float>(), s.batch, out_depth_,
                              out_area);
    } else if (part == ConvPart::kInput) {
      cuda::batched_transpose(stream, x_b.data<float>(), x_a.data<float>(), s.batch, s.depth,
                              in_area);
    }
  };
  TROUPE_ASSIGN_OR_RETURN(Cost cost, time(gpu, [&] {
                            transposes();
                            return Status::OK();
                          }));
  return static_cast<float>(cost.stream_us / 1000.0);
}

StatusOr<CudnnConvolution::Choice> CudnnConvolution::heuristic(ConvPart part, GpuContext& gpu) {
  auto* handle = static_cast<cudnnHandle_t>(gpu.cudnn());
  TROUPE_ASSIGN_OR_RETURN(Apis api, apis());
  if (api != Apis::kOnlyLegacy) {
    auto first = plans(part, gpu, false, measuring_workspace_bytes(), 1);
    if (first.ok()) {
      return Choice{.plan = first->front(), .workspace_bytes = first->front()->workspace_bytes()};
    }
    if (api == Apis::kOnlyGraph) return first.status();
  }
  const Descriptors& d = nhwc_;
  constexpr int kAsk = 16;
  int found = 0;
  Choice choice;
  if (part == ConvPart::kForward) {
    cudnnConvolutionFwdAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(
        check(library_->forward_algorithms(handle, d.x, d.w, conv_, d.y, kAsk, &found, perfs),
              "cudnnGetConvolutionForwardAlgorithm_v7"));
    auto perf = first_success(perfs, found);
    if (!perf) return errors::Internal("cuDNN has no forward algorithm for this convolution");
    choice.algorithm = perf->algo;
    TROUPE_RETURN_IF_ERROR(check(library_->forward_workspace(handle, d.x, d.w, conv_, d.y,
                                                             perf->algo, &choice.workspace_bytes),
                                 "cudnnGetConvolutionForwardWorkspaceSize"));
  } else if (part == ConvPart::kInput) {
    cudnnConvolutionBwdDataAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(
        check(library_->data_algorithms(handle, d.w, d.y, conv_, d.x, kAsk, &found, perfs),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
    auto perf = first_success(perfs, found);
    if (!perf) {
      return errors::Internal("cuDNN has no input gradient algorithm for this convolution");
    }
    choice.algorithm = perf->algo;
    TROUPE_RETURN_IF_ERROR(check(
        library_->data_workspace(handle, d.w, d.y, conv_, d.x, perf->algo, &choice.workspace_bytes),
        "cudnnGetConvolutionBackwardDataWorkspaceSize"));
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perfs[kAsk];
    TROUPE_RETURN_IF_ERROR(
        check(library_->filter_algorithms(handle, d.x, d.y, conv_, d.w, kAsk, &found, perfs),
              "cudnnGetConvolutionBackwardFilterAlgorithm_v7"));
    auto perf = first_success(perfs, found);
    if (!perf) {
      return errors::Internal("cuDNN has no filter gradient algorithm for this convolution");
    }
    choice.algorithm = perf->algo;
    TROUPE_RETURN_IF_ERROR(check(library_->filter_workspace(handle, d.x, d.y, conv_, d.w,
                                                            perf->algo, &choice.workspace_bytes),
                                 "cudnnGetConvolutionBackwardFilterWorkspaceSize"));
  }
  return choice;
}

}  // namespace troupe

#endif  // TROUPE_HAVE_CUDNN
