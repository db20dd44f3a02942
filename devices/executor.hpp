// Executor: runs a graph partition on a device, each node once per step, in dataflow order.
//
// Built once per partition (kernels instantiated, edges flattened into arrays); each step then
// walks the graph with per-step counters only. A value is dropped as soon as its last consumer
// has run, so a step holds only the tensors it still needs. Synchronous kernels run inline;
// an async kernel (a Recv, a Dequeue) parks its node, and the step resumes when it completes,
// through StepContext::schedule. Many steps may be in flight at once.
// Feeds and fetches are _Arg and _Retval nodes (see graph/subgraph.hpp): _Arg i reads
// step.args[i], _Retval j writes step.rets[j].
// Conditionals (tf.cond), as TensorFlow's executor runs them within a partition: Switch marks
// its untaken output dead; a node with a dead data input, or a dead node among its control
// inputs, does not run and its outputs are dead in turn; Merge waits for all its inputs and
// forwards the live one (its outputs are dead when none is). A dead value reaching _Send is
// sent on as dead (an uninitialised Tensor), and the _Recv on the other device gives a dead
// output, so a cond's branches may run on other devices and tasks, as TensorFlow's; one
// reaching _Retval (a fetch) fails the step naming the node. Graphs without a Switch or a
// _Recv skip all of this.
// Not thread-safe: the owner (the device actor) calls it, and runs scheduled work, on one
// thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "troupe/devices/kernel_registry.hpp"

namespace troupe {

class ExecutorStep;

class Executor {
 public:
  using Done = std::function<void(const Status&)>;

  // Instantiates a kernel for every node. Errors name the node: a missing kernel, bad
  // attributes, _Arg/_Retval indices that are not 0..n-1.
  static StatusOr<std::unique_ptr<Executor>> create(
      std::shared_ptr<const Graph> graph, Device& device,
      const KernelRegistry& kernels = KernelRegistry::global());
  ~Executor();

  // Starts one step; `done` is called once with its status, after every kernel the step
  // started has finished. step.args must hold num_args() tensors; step.rets gets num_rets().
  // `step` must stay valid, and step.schedule set, until `done` runs. The first kernel error
  // (naming the node) cancels the step's pending work and becomes its status.
  void run_async(StepContext& step, Done done);

  // Runs one step to the end on this thread, doing its scheduled work itself (step.schedule is
  // replaced). For steps that do not wait on other devices; a step left waiting for something
  // nothing in it will produce fails with Internal.
  Status run(StepContext& step);

  const Graph& graph() const { return *graph_; }
  Device& device() const { return device_; }
  int num_args() const { return num_args_; }
  int num_rets() const { return num_rets_; }

 private:
  friend class ExecutorStep;
  struct NodeItem {
    const Node* node = nullptr;
    OpKernel* kernel = nullptr;
    AsyncOpKernel* async = nullptr;  // kernel, if it is async
    int input_begin = 0;             // into input_entries_
    int num_inputs = 0;
    int output_begin = 0;  // first entry id of this node's outputs
    int num_outputs = 0;
    int consumer_begin = 0;  // into consumers_
    int num_consumers = 0;
    int num_in_edges = 0;  // data + control edges that must complete first
    int id = 0;
    int control_begin = 0;  // into control_preds_: the nodes of its control inputs
    int num_controls = 0;
    bool is_merge = false;        // forwards its first live input (executor.cpp)
    bool must_be_live = false;    // _Retval: a dead input is an error
    bool sends_deadness = false;  // _Send: a dead input is sent on as dead
  };

  Executor(std::shared_ptr<const Graph> graph, Device& device);

  std::shared_ptr<const Graph> graph_;
  Device& device_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  std::vector<NodeItem> items_;
  std::vector<int> input_entries_;
  std::vector<int> control_preds_;
  bool has_control_flow_ = false;  // a Switch is in the graph: deadness is tracked
  std::vector<char> input_is_ref_;
  std::vector<int> consumers_;
  std::vector<int> entry_uses_;  // data consumers per entry
  std::vector<int> roots_;
  int num_entries_ = 0;
  int max_inputs_ = 0;
  int num_args_ = 0;
  int num_rets_ = 0;
};

}  // namespace troupe
