// CudnnGraphPlan: the operation graph, the heuristics' engine configurations, their plans, and
// execution through a variant pack.
#include "troupe/devices/gpu/cudnn_graph_plan.hpp"

#ifdef TROUPE_HAVE_CUDNN

#include <fmt/core.h>

#include <algorithm>
#include <utility>

namespace troupe {
namespace {

// The tensors' ids in the graph and in every variant pack.
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

// One backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  Descriptor() = default;
  Descriptor(const CudnnLibrary* library, cudnnBackendDescriptor_t d) : library_(library), d_(d) {}
  Descriptor(Descriptor&& other) noexcept
      : library_(other.library_), d_(std::exchange(other.d_, nullptr)) {}
  Descriptor& operator=(Descriptor&& other) noexcept {
    std::swap(library_, other.library_);
    std::swap(d_, other.d_);
    return *this;
  }
  ~Descriptor() {
    if (d_ != nullptr) library_->backend_destroy(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() { return std::exchange(d_, nullptr); }

 private:
  const CudnnLibrary* library_ = nullptr;
  cudnnBackendDescriptor_t d_ = nullptr;
};

// Builds descriptors, naming the first call that failed.
class Builder {
 public:
  explicit Builder(const CudnnLibrary& library) : l_(library) {}

  StatusOr<Descriptor> make(cudnnBackendDescriptorType_t type, const char* what) {
    cudnnBackendDescriptor_t d = nullptr;
    TROUPE_RETURN_IF_ERROR(check(l_.backend_create(type, &d), "creating", what));
    return Descriptor(&l_, d);
  }
  template <class T>
  Status set(const Descriptor& d, cudnnBackendAttributeName_t name,
             cudnnBackendAttributeType_t type, const T* values, int64_t count, const char* what) {
    return check(l_.backend_set(d.get(), name, type, count, values), "setting", what);
  }
  Status finalize(const Descriptor& d, const char* what) {
    return check(l_.backend_finalize(d.get()), "finalizing", what);
  }
  Status check(cudnnStatus_t status, const char* doing, const char* what) const {
    if (status == CUDNN_STATUS_SUCCESS) return Status::OK();
    return errors::Internal("cuDNN graph API: {} {}: {}", doing, what, l_.error_string(status));
  }

  // A finalized tensor descriptor.
  StatusOr<Descriptor> tensor(int64_t id, const int64_t dims[4], const int64_t strides[4]) {
    TROUPE_ASSIGN_OR_RETURN(Descriptor t, make(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "a tensor"));
    const cudnnDataType_t type = CUDNN_DATA_FLOAT;
    const int64_t alignment = static_cast<int64_t>(CudnnGraphPlan::kAlignment);
    TROUPE_RETURN_IF_ERROR(
        set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type, 1, "a tensor's type"));
    TROUPE_RETURN_IF_ERROR(
        set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims, 4, "a tensor's dims"));
    TROUPE_RETURN_IF_ERROR(
        set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4, "a tensor's strides"));
    TROUPE_RETURN_IF_ERROR(
        set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id, 1, "a tensor's id"));
    TROUPE_RETURN_IF_ERROR(set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment, 1,
                               "a tensor's alignment"));
    TROUPE_RETURN_IF_ERROR(finalize(t, "a tensor"));
    return t;
  }

  // The engine configurations the heuristics propose in `mode` (none where they have none).
  StatusOr<std::vector<Descriptor>> configurations(const Descriptor& graph,
                                                   cudnnBackendHeurMode_t mode) {
    TROUPE_ASSIGN_OR_RETURN(Descriptor heuristics,
                            make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "the heuristics"));
    cudnnBackendDescriptor_t g = graph.get();
    TROUPE_RETURN_IF_ERROR(set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, &g, 1, "the heuristics' graph"));
    TROUPE_RETURN_IF_ERROR(set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode,
                               1, "the heuristics' mode"));
    TROUPE_RETURN_IF_ERROR(finalize(heuristics, "the heuristics"));
    int64_t count = 0;
    TROUPE_RETURN_IF_ERROR(check(l_.backend_get(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                                 "counting", "the heuristics' results"));
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      TROUPE_ASSIGN_OR_RETURN(Descriptor c,
                              make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "an engine configuration"));
      raw.push_back(c.get());
      configs.push_back(std::move(c));
    }
    int64_t got = 0;
    if (count > 0) {
      TROUPE_RETURN_IF_ERROR(
          check(l_.backend_get(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
                "reading", "the heuristics' results"));
    }
    configs.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, count)));
    return configs;
  }

  struct Engine {
    int64_t index = -1;
    bool float32 = true;  // neither tensor cores (TF32) nor down-converted inputs
    bool runtime_compiled = false;
  };
  // What a configuration's engine is.
  StatusOr<Engine> engine_of(const Descriptor& config) {
    TROUPE_ASSIGN_OR_RETURN(Descriptor engine, make(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "an engine"));
    cudnnBackendDescriptor_t e = engine.get();
    int64_t n = 0;
    TROUPE_RETURN_IF_ERROR(check(l_.backend_get(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e),
                                 "reading", "a configuration's engine"));
    Engine info;
    TROUPE_RETURN_IF_ERROR(check(
        l_.backend_get(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &info.index),
        "reading", "an engine's index"));
    cudnnBackendNumericalNote_t numerics[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    TROUPE_RETURN_IF_ERROR(
        check(l_.backend_get(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                             CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, numerics),
              "reading", "an engine's numerical notes"));
    for (int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i) {
      if (numerics[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
          numerics[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) {
        info.float32 = false;
      }
    }
    // Behaviour notes only order the engines: a cuDNN that cannot say is taken as precompiled.
    cudnnBackendBehaviorNote_t behaviour[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    if (l_.backend_get(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                       CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, behaviour) != CUDNN_STATUS_SUCCESS) {
      n = 0;
    }
    for (int64_t i = 0; i < n && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++i) {
      if (behaviour[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) info.runtime_compiled = true;
    }
    return info;
  }

 private:
  const CudnnLibrary& l_;
};

}  // namespace

struct CudnnGraphPlan::Graph {
  Descriptor x, w, y, convolution, operation, graph;
};

CudnnGraphPlan::~CudnnGraphPlan() {
  if (plan_ != nullptr) library_->backend_destroy(plan_);
  if (config_ != nullptr) library_->backend_destroy(config_);
}

std::string CudnnGraphPlan::name() const {
  return fmt::format("engine {}", engine_);
}

StatusOr<std::vector<std::shared_ptr<const CudnnGraphPlan>>> CudnnGraphPlan::candidates(
    const CudnnLibrary& library, cudnnHandle_t handle, ConvPart part, const CudnnConvGeometry& g,
    size_t workspace_limit, int limit) {
  Builder b(library);
  auto graph = std::make_shared<Graph>();
  TROUPE_ASSIGN_OR_RETURN(graph->x, b.tensor(kX, g.x_dims, g.x_strides));
  TROUPE_ASSIGN_OR_RETURN(graph->w, b.tensor(kW, g.w_dims, g.w_strides));
  TROUPE_ASSIGN_OR_RETURN(graph->y, b.tensor(kY, g.y_dims, g.y_strides));

  TROUPE_ASSIGN_OR_RETURN(graph->convolution,
                          b.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "the convolution"));
  const Descriptor& c = graph->convolution;
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2;
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute,
                               1, "the convolution's compute type"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
                               &mode, 1, "the convolution's mode"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial,
                               1, "the convolution's spatial dims"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, g.dilations,
                               2, "the convolution's dilations"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
                               g.strides, 2, "the convolution's strides"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
                               g.pre_padding, 2, "the convolution's paddings"));
  TROUPE_RETURN_IF_ERROR(b.set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
                               g.post_padding, 2, "the convolution's paddings"));
  TROUPE_RETURN_IF_ERROR(b.finalize(c, "the convolution"));

  // The operation: its type and attribute names by part.
  struct Names {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, alpha, beta, convolution;
  };
  const Names names = part == ConvPart::kForward
                          ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC}
                      : part == ConvPart::kFilter
                          ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC}
                          : Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
                                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC};
  TROUPE_ASSIGN_OR_RETURN(graph->operation, b.make(names.type, "the convolution operation"));
  const Descriptor& op = graph->operation;
  const cudnnBackendDescriptor_t x = graph->x.get(), w = graph->w.get(), y = graph->y.get(),
                                 conv = c.get();
  const float alpha = 1.0f, beta = 0.0f;
  TROUPE_RETURN_IF_ERROR(
      b.set(op, names.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, &x, 1, "the operation's x"));
  TROUPE_RETURN_IF_ERROR(
      b.set(op, names.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, &w, 1, "the operation's w"));
  TROUPE_RETURN_IF_ERROR(
      b.set(op, names.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, &y, 1, "the operation's y"));
  TROUPE_RETURN_IF_ERROR(b.set(op, names.convolution, CUDNN_TYPE_BACKEND_DESCRIPTOR, &conv, 1,
                               "the operation's convolution"));
  TROUPE_RETURN_IF_ERROR(
      b.set(op, names.alpha, CUDNN_TYPE_FLOAT, &alpha, 1, "the operation's alpha"));
  TROUPE_RETURN_IF_ERROR(b.set(op, names.beta, CUDNN_TYPE_FLOAT, &beta, 1, "the operation's beta"));
  TROUPE_RETURN_IF_ERROR(b.finalize(op, "the convolution operation"));

  TROUPE_ASSIGN_OR_RETURN(graph->graph,
                          b.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "the operation graph"));
  const cudnnBackendDescriptor_t ops = op.get();
  TROUPE_RETURN_IF_ERROR(b.set(graph->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, &ops, 1, "the graph's operation"));
  TROUPE_RETURN_IF_ERROR(b.set(graph->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
                               &handle, 1, "the graph's handle"));
  TROUPE_RETURN_IF_ERROR(b.finalize(graph->graph, "the operation graph"));

  // Plans of the configurations mode A proposes, else of the fallback list: precompiled engines
  // first (in the heuristics' order), engines compiled at run time only when none is left.
  std::vector<std::shared_ptr<const CudnnGraphPlan>> plans;
  std::string why_none = "the heuristics proposed no engine";
  for (cudnnBackendHeurMode_t heuristics : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    auto configs = b.configurations(graph->graph, heuristics);
    if (!configs.ok()) {
      why_none = configs.status().message();
      continue;
    }
    std::vector<std::pair<Descriptor, Builder::Engine>> precompiled, compiled;
    for (Descriptor& config : *configs) {
      auto engine = b.engine_of(config);
      if (!engine.ok()) {
        why_none = engine.status().message();
        continue;
      }
      if (!engine->float32) {
        why_none = "every engine proposed computes in reduced precision";
        continue;
      }
      (engine->runtime_compiled ? compiled : precompiled).emplace_back(std::move(config), *engine);
    }
    for (auto* list : {&precompiled, &compiled}) {
      if (list == &compiled && !plans.empty()) break;
      for (auto& [config, engine] : *list) {
        if (static_cast<int>(plans.size()) >= limit) break;
        auto plan_d = b.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "an execution plan");
        if (!plan_d.ok()) return plan_d.status();
        const cudnnBackendDescriptor_t cfg = config.get();
        Status built = b.set(*plan_d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, &cfg, 1, "a plan's configuration");
        if (built.ok()) {
          built = b.set(*plan_d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle, 1,
                        "a plan's handle");
        }
        if (built.ok()) built = b.finalize(*plan_d, "an execution plan");
        int64_t workspace = 0, n = 0;
        if (built.ok()) {
          built =
              b.check(library.backend_get(plan_d->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                          CUDNN_TYPE_INT64, 1, &n, &workspace),
                      "reading", "a plan's workspace size");
        }
        if (!built.ok()) {  // this engine cannot take this convolution: the next may
          why_none = built.message();
          continue;
        }
        if (workspace < 0 || static_cast<size_t>(workspace) > workspace_limit) {
          why_none = fmt::format("engine {} needs {} bytes of workspace", engine.index, workspace);
          continue;
        }
        std::shared_ptr<CudnnGraphPlan> plan(new CudnnGraphPlan());
        plan->library_ = &library;
        plan->graph_ = graph;
        plan->config_ = config.release();
        plan->plan_ = plan_d->release();
        plan->engine_ = engine.index;
        plan->workspace_bytes_ = static_cast<size_t>(workspace);
        plans.push_back(std::move(plan));
      }
    }
    if (!plans.empty()) break;
  }
  if (plans.empty()) {
    return errors::FailedPrecondition("cuDNN's graph API has no plan for this convolution's {}: {}",
                                      part_name(part), why_none);
  }
  return plans;
}

Status CudnnGraphPlan::execute(cudnnHandle_t handle, const float* x, const float* w, const float* y,
                               void* workspace) const {
  Builder b(*library_);
  TROUPE_ASSIGN_OR_RETURN(Descriptor pack,
                          b.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "a variant pack"));
  const int64_t ids[3] = {kX, kW, kY};
  void* pointers[3] = {const_cast<float*>(x), const_cast<float*>(w), const_cast<float*>(y)};
  TROUPE_RETURN_IF_ERROR(b.set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids, 3,
                               "the variant pack's ids"));
  TROUPE_RETURN_IF_ERROR(b.set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                               pointers, 3, "the variant pack's pointers"));
  TROUPE_RETURN_IF_ERROR(b.set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                               &workspace, 1, "the variant pack's workspace"));
  TROUPE_RETURN_IF_ERROR(b.finalize(pack, "a variant pack"));
  return b.check(library_->backend_execute(handle, plan_, pack.get()), "executing",
                 fmt::format("the plan of {}", name()).c_str());
}

}  // namespace troupe

#endif  // TROUPE_HAVE_CUDNN
