// The standard hooks of a MonitoredTrainingSession, as TensorFlow's: stop at a step, save
// checkpoints, log tensors, fail on NaN loss, write TensorBoard summaries, and report
// progress (to `troupe launch`, or as lines for a person).
#pragma once

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "troupe/apps/training/progress_meter.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/apps/training/session_run_hook.hpp"
#include "troupe/graph/formats/event_writer.hpp"

namespace troupe {

// When to act: every `steps` global steps, or every `secs` seconds (when steps is 0).
class StepTimer {
 public:
  StepTimer(int64_t steps, double secs) : steps_(steps), secs_(secs) {}
  // Whether `step` should trigger (always true the first time).
  bool should_trigger(int64_t step) const;
  void mark(int64_t step);

 private:
  int64_t steps_;
  double secs_;
  int64_t last_step_ = -1;
  std::chrono::steady_clock::time_point last_time_;
};

// Requests stop once the global step reaches `last_step`.
class StopAtStepHook : public SessionRunHook {
 public:
  StopAtStepHook(Output global_step, int64_t last_step)
      : global_step_(std::move(global_step)), last_step_(last_step) {}
  std::vector<Output> before_run(RunContext& context) override { return {global_step_}; }
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

 private:
  Output global_step_;
  int64_t last_step_;
};

// Saves a checkpoint when the session starts, every steps/secs, and at the end.
class CheckpointSaverHook : public SessionRunHook {
 public:
  CheckpointSaverHook(std::string dir, std::shared_ptr<Saver> saver, Output global_step,
                      int64_t save_steps, double save_secs);
  Status after_create_session(Session& session) override;
  std::vector<Output> before_run(RunContext& context) override { return {global_step_}; }
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;
  Status end(Session& session) override;

 private:
  Status save(Session& session, int64_t step);
  std::string dir_;
  std::shared_ptr<Saver> saver_;
  Output global_step_;
  StepTimer timer_;
  int64_t last_saved_ = -1;
};

// Prints the named tensors every `every_n_iter` steps: "loss = 0.42, accuracy = 0.9".
class LoggingTensorHook : public SessionRunHook {
 public:
  LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors, int64_t every_n_iter,
                    std::ostream& out = std::cout);
  std::vector<Output> before_run(RunContext& context) override;
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

 private:
  std::vector<std::pair<std::string, Output>> tensors_;
  int64_t every_n_iter_;
  std::ostream& out_;
  int64_t iteration_ = 0;
  bool due_ = false;
};

// Fails training (InvalidArgument "NaN loss during training") or just stops it when the loss
// is NaN.
class NanTensorHook : public SessionRunHook {
 public:
  explicit NanTensorHook(Output loss, bool fail_on_nan = true)
      : loss_(std::move(loss)), fail_on_nan_(fail_on_nan) {}
  std::vector<Output> before_run(RunContext& context) override { return {loss_}; }
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

 private:
  Output loss_;
  bool fail_on_nan_;
};

// Writes summaries to TensorBoard event files in `output_dir`, as TensorFlow's SummarySaverHook
// and StepCounterHook together: every `save_steps` global steps (or, when `save_steps` is 0,
// every `save_secs` seconds), and on the first step, the scalars (tag -> scalar tensor) and
// `summary_op` (a string scalar holding a serialized tf.Summary, such as tf.summary.merge_all's;
// null for none), at the global step the run reached. They are fetched only by the runs that
// will write them. From the second save on it adds "global_step/sec" since the save before,
// and "examples/sec" when `examples_per_step` > 0. The event file starts with the graph, as
// TensorFlow's training sessions write it (TensorBoard's graph tab).
class SummarySaverHook : public SessionRunHook {
 public:
  struct Cadence {
    int64_t steps = 100;
    double secs = 0;  // used when steps is 0
  };
  SummarySaverHook(std::string output_dir, Output global_step,
                   std::vector<std::pair<std::string, Output>> scalars,
                   std::optional<Output> summary_op, Cadence cadence,
                   int64_t examples_per_step = 0);
  Status begin(const Scope& scope) override;
  Status after_create_session(Session& session) override;
  std::vector<Output> before_run(RunContext& context) override;
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;
  Status end(Session& session) override;

 private:
  std::string output_dir_;
  Output global_step_;
  std::vector<std::pair<std::string, Output>> scalars_;
  std::optional<Output> summary_op_;
  const Graph* graph_ = nullptr;
  StepTimer timer_;
  int64_t examples_per_step_;
  std::unique_ptr<EventWriter> writer_;
  std::optional<int64_t> next_step_;  // the step the next run reaches, as the last run saw it
  bool requested_ = false;            // whether this run fetches what it writes
  std::optional<std::pair<int64_t, double>> last_save_;  // step and wall time
};

// Evaluates the model, through `evaluate`, when a step after the first it sees reaches a
// multiple of `every_steps` (in steps of several workers, the first step past it; never when
// `every_steps` <= 0), and whenever evaluate_now() is called (at the end
// of training, say). Each result — named scalars such as {"accuracy", 0.87}, {"loss", 0.36} — is
// written to TensorBoard event files in `output_dir` at the global step, and printed as one line:
// "<prefix>evaluation at step 469: accuracy=0.8123 loss=0.512" (no files when `output_dir` is
// ""). As TensorFlow's Estimator
// writes evaluations to <model_dir>/eval with the training summaries' tags, TensorBoard shows
// them as a run of their own, on the same charts as training's.
class EvaluationHook : public SessionRunHook {
 public:
  using Results = std::vector<std::pair<std::string, double>>;
  using Evaluate = std::function<StatusOr<Results>(Session&)>;

  EvaluationHook(std::string output_dir, Output global_step, int64_t every_steps, Evaluate evaluate,
                 std::string prefix = "", std::ostream& out = std::cout);
  Status after_create_session(Session& session) override;
  std::vector<Output> before_run(RunContext& context) override { return {global_step_}; }
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

  // Evaluates at global step `step` now, writes (and unless told not to, prints) the results,
  // and returns them; at
  // the step of the latest evaluation, returns its results again without evaluating.
  StatusOr<Results> evaluate_now(Session& session, int64_t step, bool print_line = true);

 private:
  std::string output_dir_;
  Output global_step_;
  int64_t every_steps_;  // <= 0: only evaluate_now()
  int64_t last_seen_step_ = -1;
  Evaluate evaluate_;
  std::string prefix_;
  std::ostream& out_;
  std::unique_ptr<EventWriter> writer_;              // none when output_dir is ""
  std::optional<std::pair<int64_t, Results>> last_;  // the latest evaluation
};

// Reports the chief's progress through the job's `last_step` steps, in one of two styles:
// - kLaunch: "troupe-progress <step> <last_step> <text>" lines at most every `every_secs`
//   seconds, which `troupe launch` turns into one progress bar (docs/cli.md);
// - kLines: lines for a person, at every tenth of the job and at its end:
//   "<prefix>step 450/1000 (45%) [0:12<0:14, 37.5 steps/s, 4.80k examples/s] loss=0.512".
// The text is " name=value" for each tensor of `shown`.
class ProgressHook : public SessionRunHook {
 public:
  enum class Style { kLaunch, kLines };
  struct Options {
    Style style = Style::kLaunch;
    double every_secs = 0.5;        // kLaunch
    int64_t examples_per_step = 0;  // kLines: > 0 adds examples/s
    std::string prefix;             // kLines: what each line starts with
  };

  ProgressHook(Output global_step, int64_t last_step,
               std::vector<std::pair<std::string, Output>> shown, Options options,
               std::ostream& out = std::cout);
  std::vector<Output> before_run(RunContext& context) override;
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

  // The style `troupe launch` asks its tasks for: kLaunch when TROUPE_PROGRESS_PROTOCOL=1 is in
  // the environment, else kLines.
  static Style style_from_environment();

 private:
  Output global_step_;
  int64_t last_step_;
  std::vector<std::pair<std::string, Output>> shown_;
  Options options_;
  StepTimer timer_;
  std::ostream& out_;
  ProgressMeter meter_;
  int last_tenth_ = -1;        // kLines: the tenth of the job of the last line
  int64_t printed_step_ = -1;  // kLines: its step
};

}  // namespace troupe
