// The standard hooks.
#include "troupe/apps/training/hooks.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "troupe/graph/tensorflow_graph_def.hpp"

namespace troupe {
namespace {

// A scalar tensor as a double, whatever its numeric dtype.
double scalar_value(const Tensor& t) {
  double value = 0;
  TROUPE_SWITCH_NUMERIC_OR_BOOL(t.dtype(), T, value = static_cast<double>(*t.data<T>()));
  return value;
}

std::string format_scalar(const Tensor& t) {
  if (t.num_elements() == 1 && t.dtype() != DataType::kString) {
    return fmt::format("{:.6g}", scalar_value(t));
  }
  return t.summarize(6);
}

}  // namespace

bool StepTimer::should_trigger(int64_t step) const {
  if (last_step_ < 0) return true;
  if (step == last_step_) return false;
  if (steps_ > 0) return step >= last_step_ + steps_;
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_time_);
  return elapsed.count() >= secs_;
}

void StepTimer::mark(int64_t step) {
  last_step_ = step;
  last_time_ = std::chrono::steady_clock::now();
}

Status StopAtStepHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  // The step was read before this run's increment landed, so the step reached is one more, or
  // fewer in synchronous training, where a step need not make an update: read it again there
  // (as TensorFlow does), so that a worker neither stops short nor runs a step no other worker
  // joins.
  if (scalar_value(values.at(0)) + 1 < static_cast<double>(last_step_)) return Status::OK();
  TROUPE_ASSIGN_OR_RETURN(Tensor reached, context.session().run(global_step_));
  if (scalar_value(reached) >= static_cast<double>(last_step_)) context.request_stop();
  return Status::OK();
}

CheckpointSaverHook::CheckpointSaverHook(std::string dir, std::shared_ptr<Saver> saver,
                                         Output global_step, int64_t save_steps, double save_secs)
    : dir_(std::move(dir)),
      saver_(std::move(saver)),
      global_step_(std::move(global_step)),
      timer_(save_steps, save_secs) {}

Status CheckpointSaverHook::save(Session& session, int64_t step) {
  if (step == last_saved_) return Status::OK();
  TROUPE_ASSIGN_OR_RETURN(std::string path,
                          saver_->save(session, default_checkpoint_prefix(dir_), step));
  last_saved_ = step;
  timer_.mark(step);
  return Status::OK();
}

Status CheckpointSaverHook::after_create_session(Session& session) {
  TROUPE_ASSIGN_OR_RETURN(Tensor step, session.run(global_step_));
  return save(session, static_cast<int64_t>(scalar_value(step)));
}

Status CheckpointSaverHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  int64_t step = static_cast<int64_t>(scalar_value(values.at(0))) + 1;
  if (!timer_.should_trigger(step)) return Status::OK();
  return save(context.session(), step);
}

Status CheckpointSaverHook::end(Session& session) {
  TROUPE_ASSIGN_OR_RETURN(Tensor step, session.run(global_step_));
  return save(session, static_cast<int64_t>(scalar_value(step)));
}

LoggingTensorHook::LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors,
                                     int64_t every_n_iter, std::ostream& out)
    : tensors_(std::move(tensors)), every_n_iter_(std::max<int64_t>(every_n_iter, 1)), out_(out) {}

std::vector<Output> LoggingTensorHook::before_run(RunContext&) {
  due_ = iteration_++ % every_n_iter_ == 0;
  if (!due_) return {};
  std::vector<Output> fetches;
  for (const auto& [name, output] : tensors_)
    fetches.push_back(output);
  return fetches;
}

Status LoggingTensorHook::after_run(RunContext&, const std::vector<Tensor>& values) {
  if (!due_) return Status::OK();
  std::string line;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (i > 0) line += ", ";
    line += tensors_[i].first + " = " + format_scalar(values[i]);
  }
  out_ << line << std::endl;
  return Status::OK();
}

Status NanTensorHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  if (!std::isnan(scalar_value(values.at(0)))) return Status::OK();
  context.request_stop();
  if (fail_on_nan_) return errors::InvalidArgument("NaN loss during training");
  return Status::OK();
}

SummarySaverHook::SummarySaverHook(std::string output_dir, Output global_step,
                                   std::vector<std::pair<std::string, Output>> scalars,
                                   std::optional<Output> summary_op, Cadence cadence,
                                   int64_t examples_per_step)
    : output_dir_(std::move(output_dir)),
      global_step_(std::move(global_step)),
      scalars_(std::move(scalars)),
      summary_op_(std::move(summary_op)),
      timer_(cadence.steps, cadence.secs),
      examples_per_step_(examples_per_step) {}

Status SummarySaverHook::begin(const Scope& scope) {
  graph_ = &scope.graph();
  return Status::OK();
}

Status SummarySaverHook::after_create_session(Session&) {
  if (writer_ != nullptr) return Status::OK();  // a recovered session keeps writing the file
  // The pid in the name keeps apart the files of runs that start in the same second (a job
  // restarted at once), as TensorFlow 2's names do.
  TROUPE_ASSIGN_OR_RETURN(writer_,
                          EventWriter::create(output_dir_, fmt::format(".{}", ::getpid())));
  if (graph_ != nullptr)
    TROUPE_RETURN_IF_ERROR(writer_->add_graph(encode_tensorflow_graph_def(*graph_)));
  return writer_->flush();
}

std::vector<Output> SummarySaverHook::before_run(RunContext&) {
  requested_ = !next_step_ || timer_.should_trigger(*next_step_);
  std::vector<Output> fetches = {global_step_};
  if (!requested_) return fetches;
  for (const auto& [tag, output] : scalars_)
    fetches.push_back(output);
  if (summary_op_) fetches.push_back(*summary_op_);
  return fetches;
}

Status SummarySaverHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  // The step was read before this run's increment landed (as a rule: a synchronous replica's
  // run may read it after), so the step reached is one more; a run that writes reads it again,
  // as TensorFlow's hook does, to write at the step the model is at.
  int64_t step = static_cast<int64_t>(scalar_value(values.at(0))) + 1;
  if (requested_) {
    TROUPE_ASSIGN_OR_RETURN(Tensor now_at, context.session().run(global_step_));
    step = static_cast<int64_t>(scalar_value(now_at));
  }
  next_step_ = step + 1;
  if (!requested_) return Status::OK();
  timer_.mark(step);
  for (size_t i = 0; i < scalars_.size(); ++i) {
    TROUPE_RETURN_IF_ERROR(
        writer_->add_scalar(scalars_[i].first, step, scalar_value(values.at(i + 1))));
  }
  if (summary_op_) {
    const Tensor& summary = values.at(scalars_.size() + 1);
    if (summary.dtype() != DataType::kString || summary.num_elements() != 1) {
      return errors::InvalidArgument(
          "SummarySaverHook: the summary op '{}' must give a string scalar (a serialized "
          "tf.Summary), got {} {}",
          summary_op_->name(), dtype_name(summary.dtype()), summary.shape().to_string());
    }
    TROUPE_RETURN_IF_ERROR(writer_->add_summary(summary.flat<std::string>()[0], step));
  }
  double now = EventWriter::now();
  if (last_save_ && step > last_save_->first && now > last_save_->second) {
    double steps_per_sec =
        static_cast<double>(step - last_save_->first) / (now - last_save_->second);
    TROUPE_RETURN_IF_ERROR(writer_->add_scalar("global_step/sec", step, steps_per_sec));
    if (examples_per_step_ > 0) {
      TROUPE_RETURN_IF_ERROR(writer_->add_scalar(
          "examples/sec", step, steps_per_sec * static_cast<double>(examples_per_step_)));
    }
  }
  last_save_ = {step, now};
  return writer_->flush();
}

Status SummarySaverHook::end(Session&) {
  return writer_ ? writer_->flush() : Status::OK();
}

EvaluationHook::EvaluationHook(std::string output_dir, Output global_step, int64_t every_steps,
                               Evaluate evaluate, std::string prefix, std::ostream& out)
    : output_dir_(std::move(output_dir)),
      global_step_(std::move(global_step)),
      every_steps_(every_steps),
      evaluate_(std::move(evaluate)),
      prefix_(std::move(prefix)),
      out_(out) {}

Status EvaluationHook::after_create_session(Session&) {
  // A recovered session keeps writing the file; no directory, no file.
  if (writer_ != nullptr || output_dir_.empty()) return Status::OK();
  TROUPE_ASSIGN_OR_RETURN(writer_,
                          EventWriter::create(output_dir_, fmt::format(".{}", ::getpid())));
  return Status::OK();
}

Status EvaluationHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  if (every_steps_ <= 0) return Status::OK();
  int64_t step = static_cast<int64_t>(scalar_value(values.at(0))) + 1;
  int64_t last_seen = std::exchange(last_seen_step_, step);
  if (last_seen < 0 || step / every_steps_ <= last_seen / every_steps_) return Status::OK();
  return evaluate_now(context.session(), step).status();
}

StatusOr<EvaluationHook::Results> EvaluationHook::evaluate_now(Session& session, int64_t step,
                                                               bool print_line) {
  if (last_ && last_->first == step) return last_->second;  // the model is as it was
  TROUPE_RETURN_IF_ERROR(after_create_session(session));
  TROUPE_ASSIGN_OR_RETURN(Results results, evaluate_(session));
  std::string line = fmt::format("{}evaluation at step {}:", prefix_, step);
  for (const auto& [name, value] : results) {
    if (writer_ != nullptr) TROUPE_RETURN_IF_ERROR(writer_->add_scalar(name, step, value));
    line += fmt::format(" {}={:.4g}", name, value);
  }
  if (writer_ != nullptr) TROUPE_RETURN_IF_ERROR(writer_->flush());
  if (print_line) out_ << line << std::endl;
  last_ = {step, results};
  return results;
}

ProgressHook::ProgressHook(Output global_step, int64_t last_step,
                           std::vector<std::pair<std::string, Output>> shown, Options options,
                           std::ostream& out)
    : global_step_(std::move(global_step)),
      last_step_(last_step),
      shown_(std::move(shown)),
      options_(std::move(options)),
      timer_(0, options_.every_secs),
      out_(out) {}

ProgressHook::Style ProgressHook::style_from_environment() {
  const char* protocol = std::getenv("TROUPE_PROGRESS_PROTOCOL");
  return protocol != nullptr && std::string_view(protocol) == "1" ? Style::kLaunch : Style::kLines;
}

std::vector<Output> ProgressHook::before_run(RunContext&) {
  std::vector<Output> fetches = {global_step_};
  for (const auto& [name, output] : shown_)
    fetches.push_back(output);
  return fetches;
}

Status ProgressHook::after_run(RunContext& context, const std::vector<Tensor>& values) {
  int64_t step = std::min(static_cast<int64_t>(scalar_value(values.at(0))) + 1, last_step_);
  meter_.update(step);
  bool last = step >= last_step_ || context.stop_requested();
  if (options_.style == Style::kLaunch) {
    if (!timer_.should_trigger(step) && !last) return Status::OK();
    timer_.mark(step);
  } else {
    int tenth =
        static_cast<int>(static_cast<__int128>(step) * 10 / std::max<int64_t>(last_step_, 1));
    if ((tenth == last_tenth_ && !last) || step == printed_step_) return Status::OK();
    last_tenth_ = tenth;
    printed_step_ = step;
  }
  std::string text;
  for (size_t i = 0; i < shown_.size(); ++i) {
    text += fmt::format(" {}={}", shown_[i].first, format_scalar(values[i + 1]));
  }
  if (options_.style == Style::kLaunch) {
    out_ << "troupe-progress " << step << " " << last_step_ << text << std::endl;
  } else {
    int percent =
        static_cast<int>(static_cast<__int128>(step) * 100 / std::max<int64_t>(last_step_, 1));
    out_ << fmt::format("{}step {}/{} ({}%) {}{}", options_.prefix, step, last_step_, percent,
                        meter_.summary(last_step_, options_.examples_per_step), text)
         << std::endl;
  }
  return Status::OK();
}

}  // namespace troupe
