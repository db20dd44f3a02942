// Executor: flattening a graph into arrays, and the per-step dataflow walk.
#include "troupe/devices/executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <optional>

namespace troupe {

Tensor& OpKernelContext::allocate_output(int i, const TensorShape& shape) {
  outputs_[i].value = Tensor(node_->output_type(i), shape);
  return outputs_[i].value;
}

namespace {

// Checks that the `index` attributes of nodes of `op` are exactly 0..n-1; returns n.
// The number of `op` nodes (and `also` nodes, which share their indices), checking that their
// indices are 0..n-1.
StatusOr<int> count_indexed(const Graph& graph, std::string_view op, std::string_view also = {}) {
  std::vector<bool> seen;
  for (int id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (node.op_name() != op && (also.empty() || node.op_name() != also)) continue;
    int64_t index = node.def().find_attr("index")->get<int64_t>();
    if (index >= static_cast<int64_t>(seen.size())) seen.resize(index + 1, false);
    if (seen[index]) {
      return errors::Internal("node '{}': two {} nodes have index {}", node.name(), op, index);
    }
    seen[index] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) return errors::Internal("no {} node has index {}", op, i);
  }
  return static_cast<int>(seen.size());
}

// An exception escaping a kernel — std::bad_alloc when memory runs out, or one from the
// standard library — becomes the step's error rather than the end of the process. Returns
// whether `call` threw.
template <class F>
bool guarded(OpKernelContext& ctx, F&& call) {
  try {
    call();
    return false;
  } catch (const std::bad_alloc&) {
    ctx.set_status(errors::ResourceExhausted("out of memory"));
  } catch (const std::exception& e) {
    ctx.set_status(errors::Internal("kernel threw: {}", e.what()));
  }
  return true;
}

// A kernel's error, named after its node unless it already is.
Status node_error(const Status& status, const Node& node) {
  if (status.message().starts_with("node '")) return status;
  return status.with_context(fmt::format("node '{}' ({})", node.name(), node.op_name()));
}

// A traced node's clock: the wall-clock start and steady-clock offsets from it.
class NodeClock {
 public:
  NodeClock()
      : steady_start_(std::chrono::steady_clock::now()),
        wall_start_micros_(std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count()) {}
  int64_t wall_start_micros() const { return wall_start_micros_; }
  int64_t micros_since_start() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 steady_start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point steady_start_;
  int64_t wall_start_micros_;
};

// The record of `node` started at `clock`, without its end and outputs yet.
NodeExecStats start_record(const Node& node, const NodeClock& clock) {
  NodeExecStats stats;
  stats.node_name = node.name();
  stats.timeline_label =
      fmt::format("{} = {}({})", node.name(), node.op_name(), fmt::join(node.def().inputs, ", "));
  stats.all_start_micros = clock.wall_start_micros();
  stats.thread_id = static_cast<uint32_t>(::gettid());
  return stats;
}

// Adds what `outputs` hold to `stats`; they live in the memory of `device`.
void record_outputs(NodeExecStats& stats, std::span<const Entry> outputs, const Device& device) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& value = outputs[o].value;
    NodeOutputStats out;
    out.slot = static_cast<int32_t>(o);
    if (value.is_initialized() && !outputs[o].dead) {
      out.dtype = value.dtype();
      out.shape = value.shape().dims();
      out.bytes = value.total_bytes();
      out.allocator_name = device.type() == "GPU" ? "gpu" : "cpu";
    }
    stats.outputs.push_back(std::move(out));
  }
}

}  // namespace

// The state of one step: per-entry values, pending counts, the ready stack, async kernels in
// flight. Async completions hold it alive through a shared_ptr.
class ExecutorStep : public std::enable_shared_from_this<ExecutorStep> {
 public:
  ExecutorStep(Executor& executor, StepContext& step, Executor::Done done)
      : ex_(executor),
        step_(step),
        done_(std::move(done)),
        entries_(executor.num_entries_),
        uses_(executor.entry_uses_),
        ready_(executor.roots_),
        inputs_(executor.max_inputs_),
        snapshots_(executor.max_inputs_),
        refs_(executor.max_inputs_),
        ctx_(executor.device_, step) {
    if (ex_.has_control_flow_) dead_nodes_.assign(ex_.items_.size(), 0);
    pending_.reserve(ex_.items_.size());
    for (const auto& item : ex_.items_)
      pending_.push_back(item.num_in_edges);
  }

  // Runs ready nodes until none is left or the step failed, then finishes if nothing is out.
  void process() {
    running_ = true;
    while (!ready_.empty() && status_.ok()) {
      const auto& item = ex_.items_[ready_.back()];
      ready_.pop_back();
      if (ex_.has_control_flow_ && !run_live(item)) continue;
      std::optional<NodeClock> clock;
      if (step_.stats != nullptr) clock.emplace();
      Status prepared = prepare_inputs(item);
      if (!prepared.ok()) {
        fail(prepared);
        break;
      }
      if (item.async != nullptr) {
        send_dead_ = false;  // only a synchronous _Send reads it
        start_async(item, clock);
        continue;
      }
      if (!(clock ? compute_traced(item, *clock) : compute(item))) break;
    }
    running_ = false;
    maybe_finish();
  }

 private:
  // Runs `item`'s synchronous kernel and hands its outputs on; false if it failed the step.
  bool compute(const Executor::NodeItem& item) {
    bind(ctx_, item);
    ctx_.inputs_dead_ = std::exchange(send_dead_, false);
    guarded(ctx_, [&] { item.kernel->compute(ctx_); });
    ctx_.inputs_dead_ = false;
    if (!ctx_.ok()) {
      fail(node_error(ctx_.status(), *item.node));
      ctx_.status_ = Status::OK();
      return false;
    }
    complete(item);
    return true;
  }

  // compute(), recording the node in step_.stats (a traced step).
  bool compute_traced(const Executor::NodeItem& item, const NodeClock& clock) {
    NodeExecStats stats = start_record(*item.node, clock);
    stats.op_start_rel_micros = clock.micros_since_start();
    bind(ctx_, item);
    ctx_.inputs_dead_ = std::exchange(send_dead_, false);
    guarded(ctx_, [&] { item.kernel->compute(ctx_); });
    ctx_.inputs_dead_ = false;
    if (!ctx_.ok()) {
      fail(node_error(ctx_.status(), *item.node));
      ctx_.status_ = Status::OK();
      return false;
    }
    stats.op_end_rel_micros = clock.micros_since_start();
    record_outputs(stats, ctx_.outputs_, ex_.device_);
    complete(item);
    stats.all_end_rel_micros = clock.micros_since_start();
    step_.stats->push_back(std::move(stats));
    return true;
  }

  // Deadness (executor.hpp): false when `item` was handled here (a Merge, or a dead node whose
  // outputs are now dead) or failed the step; true when it should run as usual.
  bool run_live(const Executor::NodeItem& item) {
    auto input_dead = [&](int i) {
      return entries_[ex_.input_entries_[item.input_begin + i]].dead;
    };
    if (item.is_merge) {
      std::optional<NodeClock> clock;
      if (step_.stats != nullptr) clock.emplace();
      int live = -1;
      for (int i = 0; i < item.num_inputs && live < 0; ++i) {
        if (!input_dead(i)) live = i;
      }
      if (live < 0) {
        kill(item);
        complete(item);
        return false;
      }
      entries_[item.output_begin] = entries_[ex_.input_entries_[item.input_begin + live]];
      entries_[item.output_begin].dead = false;
      entries_[item.output_begin + 1].value = Tensor(static_cast<int32_t>(live));
      if (!clock) {
        complete(item);
        return false;
      }
      // A traced step records a live Merge as the kernel TensorFlow runs for it.
      NodeExecStats stats = start_record(*item.node, *clock);
      stats.op_end_rel_micros = clock->micros_since_start();
      record_outputs(stats,
                     std::span<const Entry>(entries_.data() + item.output_begin, item.num_outputs),
                     ex_.device_);
      complete(item);
      stats.all_end_rel_micros = clock->micros_since_start();
      step_.stats->push_back(std::move(stats));
      return false;
    }
    bool dead = false;
    for (int i = 0; i < item.num_inputs && !dead; ++i)
      dead = input_dead(i);
    for (int c = 0; c < item.num_controls && !dead; ++c)
      dead = dead_nodes_[ex_.control_preds_[item.control_begin + c]] != 0;
    if (!dead) return true;
    if (item.sends_deadness) {  // runs, sending the deadness on (its kernel reads inputs_dead)
      send_dead_ = true;
      return true;
    }
    if (item.must_be_live) {
      fail(errors::InvalidArgument(
          "node '{}' ({}): its input was not computed — it comes from the branch of a cond "
          "that was not taken",
          item.node->name(), item.node->op_name()));
      return false;
    }
    kill(item);
    complete(item);
    return false;
  }

  void kill(const Executor::NodeItem& item) {
    dead_nodes_[item.id] = 1;
    for (int o = 0; o < item.num_outputs; ++o)
      entries_[item.output_begin + o].dead = true;
  }

  // An async kernel's context owns copies of its inputs, since the shared scratch is reused.
  struct AsyncContext {
    AsyncContext(Device& device, StepContext& step) : ctx(device, step) {}
    OpKernelContext ctx;
    std::vector<Tensor> inputs;
    std::vector<const Tensor*> input_ptrs;
    std::vector<std::shared_ptr<Resource>> refs;
    std::optional<NodeClock> clock;  // a traced step's
    NodeExecStats stats;
    std::atomic<bool> done_called{false};  // the kernel called its done callback (any thread)
  };

  void bind(OpKernelContext& ctx, const Executor::NodeItem& item) {
    ctx.node_ = item.node;
    ctx.inputs_ = std::span<const Tensor* const>(inputs_.data(), item.num_inputs);
    ctx.refs_ = std::span<const std::shared_ptr<Resource>>(refs_.data(), item.num_inputs);
    ctx.outputs_ = std::span<Entry>(entries_.data() + item.output_begin, item.num_outputs);
  }

  Status prepare_inputs(const Executor::NodeItem& item) {
    for (int i = 0; i < item.num_inputs; ++i) {
      Entry& entry = entries_[ex_.input_entries_[item.input_begin + i]];
      if (ex_.input_is_ref_[item.input_begin + i]) {
        refs_[i] = entry.ref;
        inputs_[i] = &entry.value;
      } else if (entry.ref != nullptr) {
        auto* var = dynamic_cast<Variable*>(entry.ref.get());
        if (var == nullptr) {
          return errors::InvalidArgument("node '{}' ({}): input {} is {}, which has no value",
                                         item.node->name(), item.node->op_name(), i,
                                         entry.ref->debug_name());
        }
        if (!var->is_initialized()) {
          return errors::FailedPrecondition(
              "node '{}' ({}): attempting to use uninitialized value '{}' (input {}); run the "
              "variable's initializer first",
              item.node->name(), item.node->op_name(), var->name(), i);
        }
        snapshots_[i] = var->value();
        inputs_[i] = &snapshots_[i];
      } else {
        inputs_[i] = &entry.value;
      }
    }
    return Status::OK();
  }

  void start_async(const Executor::NodeItem& item, const std::optional<NodeClock>& clock) {
    auto owned = std::make_shared<AsyncContext>(ex_.device_, step_);
    if (clock) {
      owned->clock = clock;
      owned->stats = start_record(*item.node, *clock);
      owned->stats.op_start_rel_micros = clock->micros_since_start();
    }
    owned->inputs.resize(item.num_inputs);
    owned->input_ptrs.resize(item.num_inputs);
    owned->refs.assign(refs_.begin(), refs_.begin() + item.num_inputs);
    for (int i = 0; i < item.num_inputs; ++i) {
      owned->inputs[i] = *inputs_[i];
      owned->input_ptrs[i] = &owned->inputs[i];
      snapshots_[i] = Tensor();
      refs_[i].reset();
    }
    OpKernelContext& ctx = owned->ctx;
    ctx.node_ = item.node;
    ctx.inputs_ = std::span<const Tensor* const>(owned->input_ptrs);
    ctx.refs_ = std::span<const std::shared_ptr<Resource>>(owned->refs);
    ctx.outputs_ = std::span<Entry>(entries_.data() + item.output_begin, item.num_outputs);
    ++outstanding_;
    auto self = shared_from_this();
    const Executor::NodeItem* node = &item;
    bool threw = guarded(ctx, [&] {
      item.async->compute_async(ctx, [self, owned, node] {
        owned->done_called = true;
        self->step_.schedule([self, owned, node] { self->async_done(*node, *owned); });
      });
    });
    // A kernel that threw before calling done: finish it here (once: one that called done and
    // then threw finishes through done).
    if (threw && !owned->done_called) async_done(item, *owned);
  }

  void async_done(const Executor::NodeItem& item, AsyncContext& owned) {
    OpKernelContext& ctx = owned.ctx;
    --outstanding_;
    if (!ctx.ok()) {
      fail(node_error(ctx.status(), *item.node));
    } else if (status_.ok()) {
      // A _Recv of a dead value: the node is dead for its control consumers too.
      if (ex_.has_control_flow_ && item.num_outputs > 0 &&
          std::all_of(ctx.outputs_.begin(), ctx.outputs_.end(),
                      [](const Entry& e) { return e.dead; })) {
        dead_nodes_[item.id] = 1;
      }
      if (owned.clock) {
        owned.stats.op_end_rel_micros = owned.clock->micros_since_start();
        record_outputs(owned.stats, ctx.outputs_, ex_.device_);
      }
      complete(item);
      if (owned.clock && step_.stats != nullptr) {
        owned.stats.all_end_rel_micros = owned.clock->micros_since_start();
        step_.stats->push_back(std::move(owned.stats));
      }
    }
    if (!running_) process();
  }

  // Drops what no later node needs and releases the node's consumers.
  void complete(const Executor::NodeItem& item) {
    for (int i = 0; i < item.num_inputs; ++i) {
      int entry = ex_.input_entries_[item.input_begin + i];
      if (--uses_[entry] == 0) entries_[entry] = Entry();
      snapshots_[i] = Tensor();
      refs_[i].reset();
    }
    for (int o = 0; o < item.num_outputs; ++o) {
      if (uses_[item.output_begin + o] == 0) entries_[item.output_begin + o] = Entry();
    }
    for (int c = 0; c < item.num_consumers; ++c) {
      int consumer = ex_.consumers_[item.consumer_begin + c];
      if (--pending_[consumer] == 0) ready_.push_back(consumer);
    }
  }

  void fail(const Status& status) {
    if (!status_.ok()) return;
    status_ = status;
    step_.cancellation.start_cancel(status);
  }

  void maybe_finish() {
    if (finished_ || running_ || outstanding_ > 0) return;
    if (status_.ok() && !ready_.empty()) return;
    finished_ = true;
    entries_.clear();
    Executor::Done done = std::move(done_);
    done(status_);
  }

  Executor& ex_;
  StepContext& step_;
  Executor::Done done_;
  std::vector<Entry> entries_;
  std::vector<int> pending_;
  std::vector<int> uses_;
  std::vector<int> ready_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> snapshots_;
  std::vector<std::shared_ptr<Resource>> refs_;
  std::vector<char> dead_nodes_;  // per node, when the graph has control flow
  bool send_dead_ = false;        // run_live found the _Send about to run dead
  OpKernelContext ctx_;
  int outstanding_ = 0;
  bool running_ = false;
  bool finished_ = false;
  Status status_;
};

Executor::Executor(std::shared_ptr<const Graph> graph, Device& device)
    : graph_(std::move(graph)), device_(device) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>> Executor::create(std::shared_ptr<const Graph> graph,
                                                     Device& device,
                                                     const KernelRegistry& kernels) {
  std::unique_ptr<Executor> ex(new Executor(std::move(graph), device));
  const Graph& g = *ex->graph_;
  TROUPE_ASSIGN_OR_RETURN(ex->num_args_, count_indexed(g, "_Arg"));
  TROUPE_ASSIGN_OR_RETURN(ex->num_rets_, count_indexed(g, "_Retval", "_RetvalRef"));

  // Entry ids: node outputs, numbered node by node.
  std::vector<int> output_begin(g.num_nodes());
  for (int id = 0; id < g.num_nodes(); ++id) {
    output_begin[id] = ex->num_entries_;
    ex->num_entries_ += g.node(id).num_outputs();
  }
  ex->entry_uses_.assign(ex->num_entries_, 0);
  std::vector<std::vector<int>> consumers(g.num_nodes());
  ex->items_.resize(g.num_nodes());
  for (int id = 0; id < g.num_nodes(); ++id) {
    const Node& node = g.node(id);
    TROUPE_ASSIGN_OR_RETURN(auto kernel, kernels.create(node, device));
    NodeItem& item = ex->items_[id];
    item.node = &node;
    item.id = id;
    item.is_merge = node.op_name() == "Merge";
    if (node.op_name() == "_Retval") {
      const AttrValue* allow_dead = node.def().find_attr("allow_dead");
      item.must_be_live = allow_dead == nullptr || !allow_dead->get<bool>();
    }
    item.sends_deadness = node.op_name() == "_Send";
    // A _Recv may give a dead value (its _Send was downstream of a Switch on another device).
    if (node.op_name() == "Switch" || node.op_name() == "_Recv") ex->has_control_flow_ = true;
    item.control_begin = static_cast<int>(ex->control_preds_.size());
    item.num_controls = static_cast<int>(node.control_inputs().size());
    for (int src : node.control_inputs())
      ex->control_preds_.push_back(src);
    item.kernel = kernel.get();
    item.async = dynamic_cast<AsyncOpKernel*>(kernel.get());
    ex->kernels_.push_back(std::move(kernel));
    item.input_begin = static_cast<int>(ex->input_entries_.size());
    item.num_inputs = node.num_inputs();
    item.output_begin = output_begin[id];
    item.num_outputs = node.num_outputs();
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Edge& edge = node.inputs()[i];
      int entry = output_begin[edge.node] + edge.index;
      ex->input_entries_.push_back(entry);
      ex->input_is_ref_.push_back(node.input_is_ref(i));
      ++ex->entry_uses_[entry];
      consumers[edge.node].push_back(id);
    }
    for (int src : node.control_inputs())
      consumers[src].push_back(id);
    item.num_in_edges = node.num_inputs() + static_cast<int>(node.control_inputs().size());
    ex->max_inputs_ = std::max(ex->max_inputs_, node.num_inputs());
    if (item.num_in_edges == 0) ex->roots_.push_back(id);
  }
  for (int id = 0; id < g.num_nodes(); ++id) {
    NodeItem& item = ex->items_[id];
    item.consumer_begin = static_cast<int>(ex->consumers_.size());
    item.num_consumers = static_cast<int>(consumers[id].size());
    ex->consumers_.insert(ex->consumers_.end(), consumers[id].begin(), consumers[id].end());
  }
  // Run roots in graph order: the ready stack pops from the back.
  std::reverse(ex->roots_.begin(), ex->roots_.end());
  return ex;
}

void Executor::run_async(StepContext& step, Done done) {
  if (static_cast<int>(step.args.size()) != num_args_) {
    done(errors::Internal("step {} passes {} arguments, the partition takes {}", step.step_id,
                          step.args.size(), num_args_));
    return;
  }
  if (step.cancellation.is_cancelled()) {
    done(step.cancellation.reason());
    return;
  }
  step.rets.assign(num_rets_, Tensor());
  step.ret_refs.assign(num_rets_, nullptr);
  std::make_shared<ExecutorStep>(*this, step, std::move(done))->process();
}

Status Executor::run(StepContext& step) {
  std::deque<std::function<void()>> work;
  step.schedule = [&work](std::function<void()> fn) { work.push_back(std::move(fn)); };
  bool finished = false;
  Status result;
  run_async(step, [&](const Status& s) {
    result = s;
    finished = true;
  });
  auto drain = [&] {
    while (!work.empty()) {
      auto fn = std::move(work.front());
      work.pop_front();
      fn();
    }
  };
  drain();
  if (!finished) {
    step.cancellation.start_cancel(errors::Internal(
        "step {} waits for a tensor or queue element that nothing in it will produce",
        step.step_id));
    drain();
  }
  if (!finished) return errors::Internal("step {} did not finish after cancellation", step.step_id);
  return result;
}

}  // namespace troupe
