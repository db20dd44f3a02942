// SyncReplicasHook: local step initialisation and the chief's update loop.
#include "troupe/apps/training/sync_replicas_hook.hpp"

#include <pthread.h>

#include "troupe/graph/core/logging.hpp"

namespace troupe {

SyncReplicasHook::SyncReplicasHook(const SyncReplicasOptimizer& optimizer, bool is_chief,
                                   std::string master, Operation init_tokens,
                                   std::optional<SessionConfig> config)
    : optimizer_(optimizer),
      is_chief_(is_chief),
      master_(std::move(master)),
      init_tokens_(init_tokens),
      config_(std::move(config)) {}

SyncReplicasHook::~SyncReplicasHook() {
  stop_loop();
}

void SyncReplicasHook::stop_loop() {
  if (loop_session_ == nullptr) return;
  stopping_ = true;
  (void)loop_session_->close();
  if (loop_.joinable()) loop_.join();
  loop_session_.reset();
}

Status SyncReplicasHook::after_create_session(Session& session) {
  if (loop_session_ != nullptr || loop_.joinable()) {
    return errors::Unimplemented(
        "synchronous training cannot recover a lost session yet (its accumulators and token "
        "queue would need to be rebuilt): restart the job to resume from the checkpoint");
  }
  TROUPE_RETURN_IF_ERROR(session.run_targets({optimizer_.local_step_init()}));
  if (!is_chief_) return Status::OK();
  if (init_tokens_.valid()) TROUPE_RETURN_IF_ERROR(session.run_targets({init_tokens_}));
  TROUPE_ASSIGN_OR_RETURN(Session loop_session, Session::create(master_, config_));
  loop_session_ = std::make_unique<Session>(std::move(loop_session));
  loop_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "troupe-sync");
    while (!stopping_) {
      Status updated = loop_session_->run_targets({optimizer_.chief_update()});
      if (!updated.ok()) {
        // Closing the loop's session at the end cancels the update waiting for gradients.
        if (stopping_) return;
        {
          std::lock_guard lock(mutex_);
          loop_status_ = updated.with_context("the chief's synchronous update");
        }
        // No update will release the workers waiting for a token: closing the queue fails
        // their waits (OutOfRange), so every worker stops and the chief reports this error,
        // instead of the job waiting for ever.
        log_warning("{}; closing the token queue so that the workers stop",
                    loop_status().to_string());
        Status closed = loop_session_->run_targets({optimizer_.close_token_queue()});
        if (!closed.ok() && !stopping_) {
          log_warning("closing the token queue: {}", closed.to_string());
        }
        return;
      }
    }
  });
  return Status::OK();
}

Status SyncReplicasHook::end(Session& session) {
  if (loop_session_ == nullptr) return Status::OK();
  stop_loop();
  // No update will make tokens any more: a worker still waiting for one (it read the global
  // step before the last update landed) would wait for ever. A token for each replica lets its
  // step end, after which it sees the last step. The queue stays open, so that workers restarted
  // against the same ps can still train. A courtesy to the workers: a failure here (the ps
  // gone) is logged, the loop's own status returned.
  // A failed loop closes the queue itself; closing it again here covers a loop stopped between
  // recording its error and closing (closing twice is harmless).
  Operation last = loop_status().ok() ? optimizer_.init_tokens() : optimizer_.close_token_queue();
  Status ended = session.run_targets({last});
  if (!ended.ok()) {
    log_warning("releasing the workers waiting for a token: {}", ended.to_string());
  }
  return loop_status();
}

Status SyncReplicasHook::loop_status() const {
  std::lock_guard lock(mutex_);
  return loop_status_;
}

}  // namespace troupe
