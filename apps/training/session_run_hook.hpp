// SessionRunHook: code that runs around every step of a MonitoredTrainingSession —
// TensorFlow's tf.train.SessionRunHook. A hook may add nodes to the graph before the session
// starts, ask for extra tensors in each step, look at them afterwards, and stop training.
#pragma once

#include <algorithm>
#include <vector>

#include "troupe/actors/session.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {

// What a hook sees around one step. session() is the session that exists when the hook is
// called: if the step recovered from a lost task, after_run sees the new session, not the one
// the step started on (which is gone).
class RunContext {
 public:
  explicit RunContext(Session& session) : session_(&session) {}
  Session& session() const { return *session_; }
  // Ends training after this step (MonitoredTrainingSession::should_stop() turns true).
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

  // In before_run: a value to feed in the coming step, and an operation to run in it
  // (TensorFlow's SessionRunArgs feed_dict and fetched operations). A tensor fed by the caller
  // and a hook, or by two hooks, fails the step with InvalidArgument.
  void add_feed(const Output& output, Tensor value) {
    feeds_.emplace_back(output, std::move(value));
  }
  void add_target(const Operation& target) { targets_.push_back(target); }
  // In before_run: options for the coming step, merged with the caller's and other hooks' as
  // TensorFlow merges SessionRunArgs.options: the highest trace level, the longest timeout
  // (RunOptions::timeout_ms 0, the session's default, counts as none asked), the partition
  // graphs if any asks.
  void merge_options(const RunOptions& options) {
    options_.trace_level = std::max(options_.trace_level, options.trace_level);
    options_.timeout_ms = std::max(options_.timeout_ms, options.timeout_ms);
    options_.output_partition_graphs |= options.output_partition_graphs;
  }
  // The options the step ran with, and in after_run what it reported (RunMetadata::step_stats
  // when it was traced).
  const RunOptions& run_options() const { return options_; }
  const RunMetadata& run_metadata() const { return metadata_; }

 private:
  friend class MonitoredTrainingSession;
  void rebind(Session& session) { session_ = &session; }
  Session* session_;
  bool stop_requested_ = false;
  FeedDict feeds_;
  std::vector<Operation> targets_;
  RunOptions options_;
  RunMetadata metadata_;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;

  // Before the session starts: the hook may add nodes to the graph through `scope` (the root).
  virtual Status begin(const Scope& scope) { return Status::OK(); }
  // Once the session exists and the model is initialised or restored.
  virtual Status after_create_session(Session& session) { return Status::OK(); }
  // Extra tensors to fetch in the coming step.
  virtual std::vector<Output> before_run(RunContext& context) { return {}; }
  // The values of what before_run asked for, in order. An error ends training with it, but
  // for Unavailable or Aborted (a task was lost): then the session recovers (see
  // MonitoredTrainingSessionOptions::recovery_timeout_ms) and this step's after_run is not
  // called again.
  virtual Status after_run(RunContext& context, const std::vector<Tensor>& values) {
    return Status::OK();
  }
  // When the session closes, after the last step.
  virtual Status end(Session& session) { return Status::OK(); }
};

}  // namespace troupe
