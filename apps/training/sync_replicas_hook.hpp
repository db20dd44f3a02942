// SyncReplicasHook: the session side of SyncReplicasOptimizer (graph/sync_replicas_optimizer.hpp).
// Every worker sets its local step once the model is ready; the chief also runs the update
// loop — take the averaged gradients, apply them, release the workers — in a thread of its own
// with its own session, until the monitored session ends. When the loop fails, it logs why and
// closes the token queue, so that the workers waiting for a token stop (OutOfRange) rather than
// wait for ever; loop_status() has the error, and the chief's end() returns it. When the chief's
// session ends normally, end() puts a token per replica in the queue, so that a worker still
// waiting for one ends its step (and sees the last step) instead of waiting for ever.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "troupe/apps/training/session_run_hook.hpp"
#include "troupe/graph/sync_replicas_optimizer.hpp"

namespace troupe {

class SyncReplicasHook : public SessionRunHook {
 public:
  // `master` (and `config`) is the target the chief's update loop opens its session on.
  // `init_tokens`, if valid, is run by the chief at start to put tokens in the queue
  // (SyncReplicasOptimizer::init_tokens: TensorFlow's hook puts replicas_to_aggregate there so
  // workers go on to their next gradient before the first update).
  SyncReplicasHook(const SyncReplicasOptimizer& optimizer, bool is_chief, std::string master,
                   Operation init_tokens = Operation(),
                   std::optional<SessionConfig> config = std::nullopt);
  ~SyncReplicasHook() override;

  Status after_create_session(Session& session) override;
  Status end(Session& session) override;

  // The first error of the chief's update loop, if it failed.
  Status loop_status() const;

 private:
  // Ends the chief's update loop (cancelling the update waiting for gradients) and its session.
  void stop_loop();

  const SyncReplicasOptimizer& optimizer_;
  bool is_chief_;
  std::string master_;
  Operation init_tokens_;
  std::optional<SessionConfig> config_;
  std::unique_ptr<Session> loop_session_;
  std::thread loop_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  Status loop_status_;
};

}  // namespace troupe
