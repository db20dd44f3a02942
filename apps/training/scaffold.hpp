// Scaffold: how a MonitoredTrainingSession makes the model ready — TensorFlow's tf.train.Scaffold
// with the start-up SessionManager gives it. Every field is optional; unset, the session uses
// its own: global_variables_initializer(), "every global variable is initialised", no local
// init, and a Saver of every global variable.
//
// The chief restores a checkpoint, or else (when the model is not ready) runs init_op with
// init_feed_dict and then init_fn; then, once ready_for_local_init_op names nothing, it runs
// local_init_op; then the model must be ready, or start-up fails with FailedPrecondition naming
// what is not. Every other task waits (polling) until ready_for_local_init_op names nothing, runs
// local_init_op, and waits until ready_op names nothing. A recovery after a lost task does this
// again on the new session.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "troupe/actors/session.hpp"
#include "troupe/apps/training/saver.hpp"

namespace troupe {

struct Scaffold {
  std::optional<Operation> init_op;
  FeedDict init_feed_dict;
  // After init_op, on the chief, when it initialised the model (not when it restored one).
  std::function<Status(Session&)> init_fn;
  // 1-D string tensors naming what is not ready yet; empty means ready (as
  // tf.report_uninitialized_variables() computes).
  std::optional<Output> ready_op;
  std::optional<Output> ready_for_local_init_op;
  // Run by every task in every new session (local variables, a SyncReplicasOptimizer's local
  // step), once ready_for_local_init_op names nothing.
  std::optional<Operation> local_init_op;
  std::shared_ptr<Saver> saver;
};

}  // namespace troupe
