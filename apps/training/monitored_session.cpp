// MonitoredTrainingSession: start-up (restore, initialise or wait), hooks, shutdown.
#include "troupe/apps/training/monitored_session.hpp"

#include <condition_variable>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

constexpr auto kReadyPoll = std::chrono::milliseconds(200);
constexpr auto kRecoveryPoll = std::chrono::milliseconds(500);

// Errors that mean a task was lost, not that the model or the program is wrong.
bool is_recoverable(const Status& status) {
  return status.code() == Code::kUnavailable || status.code() == Code::kAborted;
}

}  // namespace

StatusOr<std::unique_ptr<MonitoredTrainingSession>> MonitoredTrainingSession::create(
    const Scope& scope, MonitoredTrainingSessionOptions options) {
  if (options.master.empty()) return errors::InvalidArgument("options.master is empty");
  std::unique_ptr<MonitoredTrainingSession> mts(new MonitoredTrainingSession());
  mts->options_ = std::move(options);
  const auto& opt = mts->options_;
  Scope root = scope.root();
  const std::string& summary_dir = opt.summary_dir.empty() ? opt.checkpoint_dir : opt.summary_dir;
  const bool saves_checkpoints = opt.is_chief && !opt.checkpoint_dir.empty() &&
                                 (opt.save_checkpoint_steps > 0 || opt.save_checkpoint_secs > 0);
  const bool saves_summaries = opt.is_chief && !summary_dir.empty() &&
                               (opt.save_summaries_steps > 0 || opt.save_summaries_secs > 0);
  // Only what is saved needs the global step (as TensorFlow's, a MonitoredSession that saves
  // nothing leaves the graph without one).
  ModelVariable global_step;
  if (saves_checkpoints || saves_summaries) {
    global_step = get_or_create_global_step(root);
    TROUPE_RETURN_IF_ERROR(root.status());
  }

  // Ready when every variable is initialised (unless the scaffold says otherwise); the checks
  // run where the variables are.
  if (!opt.scaffold.ready_op) {
    for (const VariableRecord& r : global_variables(root.graph())) {
      Output var(root.graph().find(r.variable), 0);
      mts->ready_checks_.push_back(
          ops::IsVariableInitialized(root.sub_scope("ready").colocate_with(var.op()), var));
      mts->ready_names_.push_back(r.variable);
    }
  }
  mts->init_op_ = opt.scaffold.init_op ? *opt.scaffold.init_op
                                       : global_variables_initializer(root.sub_scope("init"));
  mts->hooks_ = opt.hooks;
  if (opt.is_chief) {
    mts->hooks_.insert(mts->hooks_.end(), opt.chief_only_hooks.begin(), opt.chief_only_hooks.end());
    if (!opt.checkpoint_dir.empty() || !opt.checkpoint_filename_with_path.empty()) {
      if (!opt.checkpoint_dir.empty() && !opt.checkpoint_filename_with_path.empty()) {
        return errors::InvalidArgument(
            "give checkpoint_dir ('{}') or checkpoint_filename_with_path ('{}'), not both",
            opt.checkpoint_dir, opt.checkpoint_filename_with_path);
      }
      if (!opt.checkpoint_dir.empty()) {
        TROUPE_RETURN_IF_ERROR(prepare_checkpoint_directory(opt.checkpoint_dir));
      }
      if (opt.scaffold.saver) {
        mts->saver_ = opt.scaffold.saver;
      } else {
        SaverOptions saver_options;
        saver_options.max_to_keep = opt.max_checkpoints_to_keep;
        saver_options.sharded = opt.sharded_checkpoints;
        TROUPE_ASSIGN_OR_RETURN(Saver saver, Saver::create(root, saver_options));
        mts->saver_ = std::make_shared<Saver>(std::move(saver));
      }
    }
    if (saves_checkpoints) {
      mts->hooks_.push_back(std::make_shared<CheckpointSaverHook>(
          opt.checkpoint_dir, mts->saver_, global_step.ref,
          std::max<int64_t>(opt.save_checkpoint_steps, 0), opt.save_checkpoint_secs));
    }
    if (saves_summaries) {
      mts->hooks_.push_back(std::make_shared<SummarySaverHook>(
          summary_dir, global_step.ref, opt.summaries, opt.summary_op,
          SummarySaverHook::Cadence{.steps = std::max<int64_t>(opt.save_summaries_steps, 0),
                                    .secs = opt.save_summaries_secs},
          opt.examples_per_step));
    }
  }
  for (const auto& hook : mts->hooks_)
    TROUPE_RETURN_IF_ERROR(hook->begin(root));
  TROUPE_RETURN_IF_ERROR(root.status());

  TROUPE_ASSIGN_OR_RETURN(Session session, Session::create(opt.master, opt.config));
  mts->session_ = std::make_unique<Session>(std::move(session));
  Status started = mts->prepare(/*recovering=*/false);
  for (size_t i = 0; started.ok() && i < mts->hooks_.size(); ++i) {
    started = mts->hooks_[i]->after_create_session(*mts->session_);
  }
  if (!started.ok()) {
    // A session that never started has no end: the hooks' end() is not called.
    (void)mts->close(/*run_end_hooks=*/false);
    return started;
  }
  return mts;
}

StatusOr<std::vector<std::string>> MonitoredTrainingSession::not_ready(
    const std::optional<Output>& op, bool default_checks) {
  std::vector<std::string> names;
  if (op) {
    TROUPE_ASSIGN_OR_RETURN(Tensor value, session_->run(*op));
    if (value.dtype() != DataType::kString) {
      return errors::InvalidArgument(
          "the ready op '{}' must give strings (the names of what "
          "is not ready), got {}",
          op->name(), dtype_name(value.dtype()));
    }
    for (const std::string& name : value.flat<std::string>())
      names.push_back(name);
    return names;
  }
  if (!default_checks || ready_checks_.empty()) return names;
  TROUPE_ASSIGN_OR_RETURN(std::vector<Tensor> checks, session_->run(ready_checks_));
  for (size_t i = 0; i < checks.size(); ++i) {
    if (!checks[i].scalar<bool>()) names.push_back(ready_names_[i]);
  }
  return names;
}

namespace {

// "w is not initialised", "w, b are not initialised".
std::string describe_not_ready(const std::vector<std::string>& missing) {
  return fmt::format("{} {} not initialised", fmt::join(missing, ", "),
                     missing.size() == 1 ? "is" : "are");
}

}  // namespace

StatusOr<bool> MonitoredTrainingSession::try_local_init(std::string* why) {
  const Scaffold& scaffold = options_.scaffold;
  if (!scaffold.local_init_op) return true;
  TROUPE_ASSIGN_OR_RETURN(auto missing,
                          not_ready(scaffold.ready_for_local_init_op, /*default_checks=*/false));
  if (!missing.empty()) {
    *why = describe_not_ready(missing);
    return false;
  }
  TROUPE_RETURN_IF_ERROR(session_->run_targets({*scaffold.local_init_op}));
  return true;
}

Status MonitoredTrainingSession::prepare(bool recovering) {
  const Scaffold& scaffold = options_.scaffold;
  auto is_ready = [&]() -> StatusOr<bool> {
    TROUPE_ASSIGN_OR_RETURN(auto missing, not_ready(scaffold.ready_op, /*default_checks=*/true));
    return missing.empty();
  };
  if (options_.is_chief) {
    std::optional<bool> initialised;  // whether the model is ready; asked at most once
    if (recovering) {
      TROUPE_ASSIGN_OR_RETURN(initialised, is_ready());
    }
    if (!initialised || !*initialised) {
      std::optional<std::string> checkpoint;
      if (!options_.checkpoint_filename_with_path.empty()) {
        checkpoint = options_.checkpoint_filename_with_path;
      } else if (!options_.checkpoint_dir.empty()) {
        TROUPE_ASSIGN_OR_RETURN(checkpoint, latest_checkpoint(options_.checkpoint_dir));
      }
      if (checkpoint) {
        TROUPE_RETURN_IF_ERROR(saver_->restore(*session_, *checkpoint));
        restored_from_ = checkpoint;
      } else {
        if (!initialised) {
          TROUPE_ASSIGN_OR_RETURN(initialised, is_ready());
        }
        if (!*initialised) {
          TROUPE_RETURN_IF_ERROR(session_->run(scaffold.init_feed_dict, {}, {init_op_}).status());
          if (scaffold.init_fn) TROUPE_RETURN_IF_ERROR(scaffold.init_fn(*session_));
        }
      }
    }
    std::string why;
    TROUPE_ASSIGN_OR_RETURN(bool local_done, try_local_init(&why));
    if (!local_done) {
      return errors::FailedPrecondition(
          "init operations did not make the model ready for local_init: {}", why);
    }
    TROUPE_ASSIGN_OR_RETURN(auto missing, not_ready(scaffold.ready_op, /*default_checks=*/true));
    if (!missing.empty()) {
      return errors::FailedPrecondition("init operations did not make the model ready: {}",
                                        describe_not_ready(missing));
    }
    return Status::OK();
  }
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.ready_timeout_ms);
  bool said_waiting = false;
  for (;;) {
    if (options_.stop.stop_requested()) {
      return errors::Cancelled("stopped while waiting for the chief to initialise the model");
    }
    std::string why;
    TROUPE_ASSIGN_OR_RETURN(bool local_done, try_local_init(&why));
    if (local_done) {
      TROUPE_ASSIGN_OR_RETURN(bool initialised, is_ready());
      if (initialised) return Status::OK();
    }
    if (!said_waiting) {
      log_info("waiting for the chief to initialise the model (up to {} ms)",
               options_.ready_timeout_ms);
      said_waiting = true;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return errors::DeadlineExceeded(
          "the chief did not initialise the model within {} ms (is worker 0 running?)",
          options_.ready_timeout_ms);
    }
    (void)pause_unless_stopped(kReadyPoll);  // the loop's first check sees a stop
  }
}

StatusOr<std::vector<Tensor>> MonitoredTrainingSession::run(const std::vector<Output>& fetches,
                                                            const FeedDict& feeds,
                                                            const std::vector<Operation>& targets,
                                                            const RunOptions& options,
                                                            RunMetadata* metadata) {
  if (closed_) return errors::FailedPrecondition("the monitored session is closed");
  if (!broken_.ok()) return broken_;
  RunContext context(*session_);
  context.options_ = options;
  std::vector<Output> all = fetches;
  std::vector<size_t> begin;
  FeedDict all_feeds = feeds;
  std::vector<Operation> all_targets = targets;
  for (const auto& hook : hooks_) {
    begin.push_back(all.size());
    auto extra = hook->before_run(context);
    all.insert(all.end(), extra.begin(), extra.end());
    for (auto& [output, value] : context.feeds_) {
      for (const auto& [fed, _] : all_feeds) {
        if (fed.node() == output.node() && fed.index() == output.index()) {
          stop_ = true;
          return errors::InvalidArgument(
              "same tensor is fed by a SessionRunHook and the caller, or by two hooks: '{}'",
              output.name());
        }
      }
      all_feeds.emplace_back(output, std::move(value));
    }
    context.feeds_.clear();
    all_targets.insert(all_targets.end(), context.targets_.begin(), context.targets_.end());
    context.targets_.clear();
  }
  std::vector<Tensor> values;
  for (;;) {
    context.metadata_ = RunMetadata();
    StatusOr<std::vector<Tensor>> ran =
        session_->run(all_feeds, all, all_targets, context.options_, &context.metadata_);
    if (ran.ok()) {
      values = std::move(ran).value();
      break;
    }
    Status recovered = recovers_from(ran.status()) ? recover(ran.status()) : ran.status();
    if (!recovered.ok()) {
      stop_ = true;
      return recovered;
    }
  }
  // A recovery above replaced the session the context was made with (and freed it).
  context.rebind(*session_);
  Status hooks_status;
  for (size_t h = 0; h < hooks_.size(); ++h) {
    size_t end = h + 1 < hooks_.size() ? begin[h + 1] : values.size();
    std::vector<Tensor> slice(values.begin() + begin[h], values.begin() + end);
    Status s = hooks_[h]->after_run(context, slice);
    if (recovers_from(s)) {
      // A task was lost while the hook used the session (the chief's checkpoint save reads
      // every variable). The step itself ran; recovering prepares the model again and runs
      // every hook's after_create_session, which saves the restored model. The hook is not
      // asked again for this step: its values predate the recovery.
      s = recover(s);
      context.rebind(*session_);
    }
    if (hooks_status.ok() && !s.ok()) hooks_status = s;
  }
  if (context.stop_requested() || !hooks_status.ok()) stop_ = true;
  if (metadata != nullptr) *metadata = context.metadata_;
  TROUPE_RETURN_IF_ERROR(hooks_status);
  values.resize(fetches.size());
  return values;
}

bool MonitoredTrainingSession::pause_unless_stopped(std::chrono::milliseconds pause) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  return !wake.wait_for(lock, options_.stop, pause, [] { return false; }) &&
         !options_.stop.stop_requested();
}

Status MonitoredTrainingSession::recover(const Status& cause) {
  Status recovered = try_to_recover(cause);
  if (!recovered.ok()) broken_ = recovered;
  return recovered;
}

Status MonitoredTrainingSession::try_to_recover(const Status& cause) {
  log_warning("recovering the training session after: {}", cause.to_string());
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.recovery_timeout_ms);
  auto stopped = [&] {
    return errors::Cancelled("stopped while recovering the training session after: {}",
                             cause.to_string());
  };
  Status last = cause;
  while (std::chrono::steady_clock::now() < deadline) {
    (void)session_->close();
    if (!pause_unless_stopped(kRecoveryPoll)) return stopped();
    StatusOr<Session> session = Session::create(options_.master, options_.config);
    if (!session.ok()) {
      last = session.status();
      if (!is_recoverable(last)) return last;
      continue;
    }
    {
      std::lock_guard lock(session_mutex_);
      session_ = std::make_unique<Session>(std::move(session).value());
    }
    if (options_.stop.stop_requested()) return stopped();
    last = prepare(/*recovering=*/true);
    if (!last.ok()) {
      if (options_.stop.stop_requested()) return stopped();
      if (!is_recoverable(last)) return last;
      continue;
    }
    for (const auto& hook : hooks_) {
      last = hook->after_create_session(*session_);
      if (!last.ok()) break;
    }
    if (!last.ok()) {
      // Lost again while saving the prepared model, say: try again from the start.
      if (!is_recoverable(last)) return last;
      continue;
    }
    ++recoveries_;
    log_info("training session recovered{}", restored_from_ ? " from " + *restored_from_ : "");
    return Status::OK();
  }
  return errors::Unavailable("could not recover the training session within {} ms: {}",
                             options_.recovery_timeout_ms, last.to_string());
}

Status MonitoredTrainingSession::run_step_fn(const std::function<Status(Session&)>& step_fn) {
  if (closed_) return errors::FailedPrecondition("the monitored session is closed");
  if (!broken_.ok()) return broken_;
  for (;;) {
    Status status = step_fn(*session_);
    if (!recovers_from(status)) return status;
    TROUPE_RETURN_IF_ERROR(recover(status));
  }
}

bool MonitoredTrainingSession::recovers_from(const Status& status) const {
  return !status.ok() && is_recoverable(status) && options_.recovery_timeout_ms > 0;
}

StatusOr<int> MonitoredTrainingSession::cancel_step(int64_t step_tag) {
  std::lock_guard lock(session_mutex_);
  return session_->cancel_step(step_tag);
}

Status MonitoredTrainingSession::close(bool run_end_hooks) {
  if (closed_) return Status::OK();
  closed_ = true;
  if (!session_) return Status::OK();  // create() failed before the session existed
  // After a failed recovery there is no session to end the hooks on: close() says why.
  Status status = broken_;
  for (const auto& hook : hooks_) {
    if (!run_end_hooks || !broken_.ok()) break;
    // A task lost in a hook's end (the chief's final save reads every variable) is recovered
    // from as in a step; the hook's end then runs again on the new session.
    Status s = hook->end(*session_);
    while (recovers_from(s)) {
      s = recover(s);
      if (s.ok()) s = hook->end(*session_);
    }
    if (!broken_.ok()) {
      status = broken_;
      break;
    }
    if (status.ok() && !s.ok()) status = s;
  }
  Status closed = session_->close();
  return status.ok() ? closed : status;
}

MonitoredTrainingSession::~MonitoredTrainingSession() {
  (void)close();
}

}  // namespace troupe
