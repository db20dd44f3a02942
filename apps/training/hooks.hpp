// The standard hooks of a MonitoredTrainingSession, as TensorFlow's: stop at a step, save
// checkpoints, log tensors, fail on NaN loss, write TensorBoard summaries, and report
// progress to `troupe launch`.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "troupe/apps/training/formats/event_writer.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/apps/training/session_run_hook.hpp"

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

// Writes scalar summaries (tag -> scalar tensor) to TensorBoard event files in `output_dir`
// every `save_steps` global steps.
class SummarySaverHook : public SessionRunHook {
 public:
  SummarySaverHook(std::string output_dir, Output global_step,
                   std::vector<std::pair<std::string, Output>> scalars, int64_t save_steps);
  Status after_create_session(Session& session) override;
  std::vector<Output> before_run(RunContext& context) override;
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;
  Status end(Session& session) override;

 private:
  std::string output_dir_;
  Output global_step_;
  std::vector<std::pair<std::string, Output>> scalars_;
  StepTimer timer_;
  std::unique_ptr<EventWriter> writer_;
  bool due_ = false;
};

// Prints "troupe-progress <step> <last_step> <text>" lines, which `troupe launch` turns into
// one progress bar, at most every `every_secs` seconds.
class ProgressHook : public SessionRunHook {
 public:
  ProgressHook(Output global_step, int64_t last_step,
               std::vector<std::pair<std::string, Output>> shown, double every_secs = 0.5,
               std::ostream& out = std::cout);
  std::vector<Output> before_run(RunContext& context) override;
  Status after_run(RunContext& context, const std::vector<Tensor>& values) override;

 private:
  Output global_step_;
  int64_t last_step_;
  std::vector<std::pair<std::string, Output>> shown_;
  StepTimer timer_;
  std::ostream& out_;
};

}  // namespace troupe
