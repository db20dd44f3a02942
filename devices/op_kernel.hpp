// OpKernel: the code that computes one node, and the contexts it sees.
//
// A kernel is built once per node when a partition is registered (OpKernelConstruction: read
// and check attributes there) and then computes once per step (OpKernelContext: inputs,
// outputs, errors, the device). Kernels are called from one thread at a time; they may use the
// device's Eigen thread pool inside compute(). A kernel that may have to wait (for a tensor
// from another device, a queue element) is an AsyncOpKernel: it finishes by calling `done`.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "troupe/devices/device.hpp"
#include "troupe/devices/step_context.hpp"
#include "troupe/graph/graph.hpp"

namespace troupe {

class OpKernelConstruction {
 public:
  OpKernelConstruction(const Node& node, Device& device) : node_(node), device_(device) {}

  const Node& node() const { return node_; }
  const std::string& name() const { return node_.name(); }
  Device& device() const { return device_; }
  // A declared attribute (always present once the node is in a Graph).
  template <class T>
  const T& attr(std::string_view name) const {
    return node_.def().find_attr(name)->get<T>();
  }
  DataType input_type(int i) const { return node_.input_type(i); }
  DataType output_type(int i) const { return node_.output_type(i); }

  // InvalidArgument naming the node.
  template <class... Args>
  Status invalid(fmt::format_string<Args...> format, Args&&... args) const {
    return errors::InvalidArgument("node '{}' ({}): {}", node_.name(), node_.op_name(),
                                   fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  const Node& node_;
  Device& device_;
};

// One value flowing along an edge during a step: a tensor, or a reference to a resource; or
// dead — an output of a conditional branch that did not run (Switch's untaken side and
// everything that depends on it; see Executor).
struct Entry {
  Tensor value;
  std::shared_ptr<Resource> ref;
  bool dead = false;
};

class OpKernel;

class OpKernelContext {
 public:
  OpKernelContext(Device& device, StepContext& step) : device_(device), step_(step) {}

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // The value of input i (for an input fed by a variable: its value when this node started).
  const Tensor& input(int i) const { return *inputs_[i]; }
  // The resource behind reference input i (for inputs declared Ref(T)), or nullptr if it is
  // not a T (a variable where a queue is expected, say).
  template <class T>
  T* input_resource(int i) const {
    return dynamic_cast<T*>(refs_[i].get());
  }
  const std::shared_ptr<Resource>& input_ref_ptr(int i) const { return refs_[i]; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, Tensor value) { outputs_[i].value = std::move(value); }
  // A fresh tensor of the node's output dtype and `shape`, installed as output i.
  Tensor& allocate_output(int i, const TensorShape& shape);
  void set_output_ref(int i, std::shared_ptr<Resource> resource) {
    outputs_[i].ref = std::move(resource);
  }
  // Output i carries no value this step (Switch's untaken side; a _Recv of a dead value).
  void set_output_dead(int i) { outputs_[i].dead = true; }
  // Whether this node's inputs are dead (it is downstream of a cond's untaken side). Only a
  // _Send runs then, to send the deadness on to the device that receives it.
  bool inputs_dead() const { return inputs_dead_; }

  // Records an error; the step stops after this kernel returns.
  void set_status(Status status) {
    if (status_.ok()) status_ = std::move(status);
  }
  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  // Records InvalidArgument naming the node.
  template <class... Args>
  void fail_invalid(fmt::format_string<Args...> format, Args&&... args) {
    set_status(errors::InvalidArgument("node '{}' ({}): {}", node_->name(), node_->op_name(),
                                       fmt::format(format, std::forward<Args>(args)...)));
  }

  const Node& node() const { return *node_; }
  Device& device() const { return device_; }
  StepContext& step() const { return step_; }

  // The inputs as the executor set them. A kernel that wraps another (devices/gpu/host_kernel)
  // presents other tensors to it, host copies of a GPU's, with set_inputs; they must stay valid
  // while the wrapped kernel runs.
  std::span<const Tensor* const> inputs() const { return inputs_; }
  void set_inputs(std::span<const Tensor* const> inputs) { inputs_ = inputs; }
  std::span<Entry> outputs() const { return outputs_; }

 private:
  friend class ExecutorStep;
  // Set by the executor before each compute().
  const Node* node_ = nullptr;
  std::span<const Tensor* const> inputs_;
  std::span<const std::shared_ptr<Resource>> refs_;
  std::span<Entry> outputs_;
  bool inputs_dead_ = false;
  Status status_;
  Device& device_;
  StepContext& step_;
};

class OpKernel {
 public:
  explicit OpKernel(const OpKernelConstruction& construction) : node_(construction.node()) {}
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  virtual void compute(OpKernelContext& ctx) = 0;

  const Node& node() const { return node_; }

 private:
  const Node& node_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;

  // Starts the work and calls `done` exactly once when the outputs, or an error, are set in
  // `ctx` — possibly before returning. `ctx` stays valid until then. Work that may wait must
  // register with ctx.step().cancellation, so a cancelled step finishes it with the reason.
  virtual void compute_async(OpKernelContext& ctx, DoneCallback done) = 0;

  void compute(OpKernelContext&) final {}
};

}  // namespace troupe
