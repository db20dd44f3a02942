// MonitoredTrainingSession: TensorFlow's tf.train.MonitoredTrainingSession — a session that
// initialises or restores the model, runs hooks around every step, saves checkpoints and
// summaries, and knows when training should stop.
//
//   MonitoredTrainingSessionOptions options;
//   options.master = server->target();
//   options.is_chief = task_index == 0;
//   options.checkpoint_dir = "/tmp/train_logs";
//   options.hooks = {std::make_shared<StopAtStepHook>(global_step, 1000)};
//   TROUPE_ASSIGN_OR_RETURN(auto session, MonitoredTrainingSession::create(root, options));
//   while (!session->should_stop()) session->run({train_op}, feeds);
//
// Start-up: the chief restores the newest checkpoint of checkpoint_dir, or runs the variables'
// initializers if there is none; every other worker waits until the chief has made the model
// ready (all variables initialised), up to ready_timeout_ms. A Scaffold (scaffold.hpp) replaces
// any of these steps, as TensorFlow's does. The chief first removes the
// unfinished files a chief killed mid-save left behind; it also saves checkpoints
// (every save_checkpoint_steps, or save_checkpoint_secs) and summaries.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "troupe/actors/session.hpp"
#include "troupe/apps/training/hooks.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/apps/training/scaffold.hpp"

namespace troupe {

struct MonitoredTrainingSessionOptions {
  std::string master;  // the session target, usually this task's own server
  bool is_chief = true;
  std::string checkpoint_dir;  // "" = no checkpoints
  // The chief restores the newest checkpoint of checkpoint_dir, and saves one at the start, at
  // the end and every save_checkpoint_steps, or save_checkpoint_secs when that is 0 (both 0: it
  // only restores, as TensorFlow's with both None).
  int64_t save_checkpoint_steps = 0;
  double save_checkpoint_secs = 600;
  // The checkpoint the chief restores instead of checkpoint_dir's newest (TensorFlow's
  // checkpoint_filename_with_path); "" = none. A missing file is NotFound at start-up.
  std::string checkpoint_filename_with_path;
  Scaffold scaffold;
  // The chief writes summaries to summary_dir ("" = checkpoint_dir; both "": none) every
  // save_summaries_steps, or save_summaries_secs when that is 0 (both 0: none): global_step/sec
  // and the scalars and summary_op below (SummarySaverHook).
  std::string summary_dir;
  int64_t save_summaries_steps = 100;
  double save_summaries_secs = 0;
  int max_checkpoints_to_keep = 5;
  // The chief's own saver (when the scaffold gives none) is sharded, as TensorFlow's
  // Scaffold's is: each task holding variables writes them to checkpoint_dir itself, which every
  // task must therefore see (a shared volume); false: the chief fetches and writes them all.
  bool sharded_checkpoints = true;
  // Scalars written to TensorBoard (tag, scalar tensor).
  std::vector<std::pair<std::string, Output>> summaries;
  // A string scalar holding a serialized tf.Summary (merged summary ops), written as it is.
  std::optional<Output> summary_op;
  int64_t examples_per_step = 0;  // > 0: the summaries also get examples/sec
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  std::vector<std::shared_ptr<SessionRunHook>> chief_only_hooks;
  std::optional<SessionConfig> config;
  int64_t ready_timeout_ms = 300000;  // how long a non-chief waits for the chief
  // A stop request ends a non-chief's wait for the chief (at start-up or in a recovery), and
  // any recovery, with Cancelled within a poll (200 ms) or the check it is running; the
  // program's way to let Ctrl-C or SIGTERM through those waits. Steps are not interrupted by
  // it: they have deadlines of their own.
  std::stop_token stop;
  // As TensorFlow's MonitoredSession: a step that fails with Unavailable or Aborted (a task
  // was lost) closes the session, opens a new one and prepares the model again — the chief
  // keeps a model that is still ready and otherwise restores the newest checkpoint (a
  // restarted ps comes back empty), the others wait for it — then runs the step again. A task
  // lost while a hook uses the session after the step (the chief's checkpoint save), or while
  // the recovery itself saves, is recovered from the same way. This bounds how long one
  // recovery may take in all (0: no recovery; the error ends training).
  int64_t recovery_timeout_ms = 300000;
};

class MonitoredTrainingSession {
 public:
  // Adds the nodes it needs (ready checks, a saver, and the global step if it is missing and
  // the chief saves checkpoints or summaries) to `scope`'s graph,
  // opens the session and prepares the model. `scope` is the model's root scope.
  static StatusOr<std::unique_ptr<MonitoredTrainingSession>> create(
      const Scope& scope, MonitoredTrainingSessionOptions options);
  ~MonitoredTrainingSession();

  // One step: fetches `fetches` (plus what the hooks ask for) and runs `targets`. A lost task,
  // in the step or in a hook's after_run, is recovered from (see recovery_timeout_ms); any
  // other error from the step or a hook ends training and is returned.
  // `options` as Session::run's (its step_tag names each try of the step), merged with the
  // hooks' (RunContext::merge_options); `metadata`, if given, receives what the step reported,
  // as the hooks see it in after_run.
  StatusOr<std::vector<Tensor>> run(const std::vector<Output>& fetches, const FeedDict& feeds = {},
                                    const std::vector<Operation>& targets = {},
                                    const RunOptions& options = {},
                                    RunMetadata* metadata = nullptr);

  // Runs `step_fn` on the session as a step is run: a lost task is recovered from (see
  // recovery_timeout_ms) and `step_fn` runs again on the new session; any other error is
  // returned. TensorFlow's MonitoredSession.run_step_fn, without the hooks: for work beside
  // the training steps that must survive a lost task, such as a final evaluation.
  Status run_step_fn(const std::function<Status(Session&)>& step_fn);

  bool should_stop() const { return stop_; }
  // The checkpoint restored at start-up or by the last recovery, if any.
  const std::optional<std::string>& restored_from() const { return restored_from_; }
  // How many times the session was recovered after a lost task.
  int recoveries() const { return recoveries_; }
  Session& session() { return *session_; }
  // Session::cancel_step on the current session; callable from any thread, also while run()
  // recovers (the Python module cancels a step on Ctrl-C).
  StatusOr<int> cancel_step(int64_t step_tag);

  // Runs the hooks' end() (the chief's final checkpoint) and closes the session; a task lost
  // in a hook's end() is recovered from and that end() runs again. After a failed recovery
  // no end() runs and the recovery's error is returned. Idempotent.
  // As TensorFlow's MonitoredSession leaving its `with` block on an exception, a session
  // closed with run_end_hooks = false skips end().
  Status close(bool run_end_hooks = true);

 private:
  MonitoredTrainingSession() = default;
  // Makes the model ready: restore or initialise (chief; when `recovering`, a model that is
  // still ready is kept), or wait for the chief; then the local init (scaffold.hpp).
  Status prepare(bool recovering);
  // What `op` names as not ready (op unset: the variables not initialised, or nothing when
  // `default_checks` is false).
  StatusOr<std::vector<std::string>> not_ready(const std::optional<Output>& op,
                                               bool default_checks);
  // Runs the local init once ready_for_local_init_op names nothing; false (and `why`) when it
  // still names something.
  StatusOr<bool> try_local_init(std::string* why);
  // Replaces a session that failed with `cause` by a new, prepared one (bounded). When that
  // fails (in time, or by a stop request) the session is broken: later calls return why.
  Status recover(const Status& cause);
  Status try_to_recover(const Status& cause);
  // Whether `status` is a lost task this session recovers from.
  bool recovers_from(const Status& status) const;
  // Waits `pause`; false (at once) if a stop is requested.
  bool pause_unless_stopped(std::chrono::milliseconds pause);
  int recoveries_ = 0;

  MonitoredTrainingSessionOptions options_;
  std::unique_ptr<Session> session_;
  std::mutex session_mutex_;  // guards replacing session_ against cancel_step()
  std::vector<std::shared_ptr<SessionRunHook>> hooks_;
  std::shared_ptr<Saver> saver_;
  Operation init_op_;
  std::vector<Output> ready_checks_;      // one per global variable (no scaffold ready_op)
  std::vector<std::string> ready_names_;  // their variables
  std::optional<std::string> restored_from_;
  bool stop_ = false;
  bool closed_ = false;
  Status broken_;  // why the last recovery failed; OK while none has
};

}  // namespace troupe
