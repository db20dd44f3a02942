// SyncReplicasOptimizer: synchronous data-parallel training, TensorFlow's
// tf.train.SyncReplicasOptimizer. Every worker computes gradients on its batch and adds them
// to an accumulator next to each variable (on the ps); the chief takes the average once
// `replicas_to_aggregate` gradients are in, applies it with the wrapped optimizer, advances
// the global step, and releases the workers by putting `total_num_replicas` tokens in a queue.
// A sparse gradient (IndexedSlices) goes to a SparseConditionalAccumulator: only its rows travel
// and are held, and the chief applies each row's average sparsely.
// A gradient computed at an older step than the accumulator's is stale and dropped, so with
// replicas_to_aggregate < total_num_replicas the slowest workers are backups whose late
// gradients do not count.
//
// Each worker runs train_op() (apply its gradients, then wait for a token); the chief also
// runs chief_update() in a loop of its own, and every worker runs local_step_init() once after
// the model is ready — SyncReplicasHook (apps/training/sync_replicas_hook.hpp) does both.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "troupe/graph/optimizers.hpp"

namespace troupe {

class SyncReplicasOptimizer {
 public:
  SyncReplicasOptimizer(std::shared_ptr<Optimizer> optimizer, int replicas_to_aggregate,
                        int total_num_replicas);

  // compute_gradients of the wrapped optimizer, then apply_gradients.
  // `worker_device` places this worker's local step ("/job:worker/task:1"). The global step
  // may be int32 (TensorFlow 1.x's tf.Variable(0, name='global_step')) or int64; the local
  // step and the tokens take its dtype. InvalidArgument for replica counts < 1 or a global
  // step of another dtype (naming it); nothing is left half-built in a way that crashes.
  Status minimize(const Scope& scope, const Output& loss, const ModelVariable& global_step,
                  const std::string& worker_device);
  // Builds the accumulators, the token queue and the worker's and chief's ops for the given
  // gradients (TensorFlow's SyncReplicasOptimizer.apply_gradients). Call once.
  Status apply_gradients(const Scope& scope, const std::vector<GradientAndVariable>& grads_and_vars,
                         const ModelVariable& global_step, const std::string& worker_device);
  // An op putting `count` tokens in the queue (TensorFlow's get_init_tokens_op), built next
  // to the global step. InvalidArgument before apply_gradients or for count < 1.
  StatusOr<Operation> init_tokens(const Scope& scope, int count) const;

  Operation train_op() const { return train_op_; }
  Operation chief_update() const { return chief_update_; }
  Operation local_step_init() const { return local_step_init_; }
  // This worker's local step (TensorFlow's sync_rep_local_step).
  Output local_step() const { return local_step_; }
  // The token queue, and a FIFOQueue of no use but to give the chief's update loop a queue to
  // close (TensorFlow's get_chief_queue_runner runs chief_update on it).
  Output token_queue() const { return tokens_; }
  // Closes the token queue: the tokens in it are still handed out, then every dequeue fails
  // (OutOfRange), those waiting included, so that every worker stops instead of waiting for a
  // token that will never come. Run by the chief when its update loop fails.
  Operation close_token_queue() const { return close_tokens_; }
  // Puts `count` tokens in the queue (for starting with backup workers); built by minimize for
  // count = total_num_replicas.
  Operation init_tokens() const { return init_tokens_; }

  int replicas_to_aggregate() const { return replicas_to_aggregate_; }
  int total_num_replicas() const { return total_num_replicas_; }

 private:
  std::shared_ptr<Optimizer> optimizer_;
  int replicas_to_aggregate_;
  int total_num_replicas_;
  Operation train_op_;
  Operation chief_update_;
  Operation local_step_init_;
  Operation init_tokens_;
  Operation close_tokens_;
  Output local_step_;
  Output tokens_;
  Output global_step_;
};

}  // namespace troupe
