// SyncReplicasOptimizer: accumulators, tokens, the worker's and the chief's ops.
#include "troupe/graph/sync_replicas_optimizer.hpp"

#include "troupe/graph/ops/ops.hpp"

namespace troupe {

SyncReplicasOptimizer::SyncReplicasOptimizer(std::shared_ptr<Optimizer> optimizer,
                                             int replicas_to_aggregate, int total_num_replicas)
    : optimizer_(std::move(optimizer)),
      replicas_to_aggregate_(replicas_to_aggregate),
      total_num_replicas_(total_num_replicas) {}

Status SyncReplicasOptimizer::minimize(const Scope& scope, const Output& loss,
                                       const ModelVariable& global_step,
                                       const std::string& worker_device) {
  TROUPE_ASSIGN_OR_RETURN(auto grads_and_vars, optimizer_->compute_gradients(scope, loss));
  return apply_gradients(scope, grads_and_vars, global_step, worker_device);
}

Status SyncReplicasOptimizer::apply_gradients(
    const Scope& scope, const std::vector<GradientAndVariable>& grads_and_vars,
    const ModelVariable& global_step, const std::string& worker_device) {
  if (train_op_.valid()) {
    return errors::FailedPrecondition(
        "SyncReplicasOptimizer: apply_gradients (or minimize) was called already");
  }
  if (replicas_to_aggregate_ < 1 || total_num_replicas_ < 1) {
    return errors::InvalidArgument(
        "SyncReplicasOptimizer needs replicas_to_aggregate >= 1 and total_num_replicas >= 1, "
        "got {} and {}",
        replicas_to_aggregate_, total_num_replicas_);
  }
  if (!global_step.ref.valid()) {
    return errors::InvalidArgument("SyncReplicasOptimizer.minimize: global_step is not a variable");
  }
  // As TensorFlow: the step may be int32 (tf.Variable(0)) or int64 (get_or_create_global_step);
  // the local step and the tokens take its dtype, the accumulators get it as int64.
  const DataType step_dtype = global_step.ref.dtype();
  if (step_dtype != DataType::kInt32 && step_dtype != DataType::kInt64) {
    return errors::InvalidArgument(
        "SyncReplicasOptimizer.minimize: global step variable '{}' is {}, expected int32 or int64",
        global_step.ref.node()->name(), dtype_name(step_dtype));
  }
  Scope root = scope.root().sub_scope("sync_replicas");
  Scope at_step = root.colocate_with(global_step.ref.op());

  // This worker's step: the global step it last saw.
  Scope on_worker = root.with_device(worker_device);
  Output local_step =
      ops::Variable(on_worker.with_op_name("local_step"), TensorShape{}, step_dtype);
  local_step_init_ = ops::Assign(on_worker, local_step, global_step.ref).op();
  Output local_step_64 = step_dtype == DataType::kInt64
                             ? local_step
                             : ops::Cast(on_worker, local_step, DataType::kInt64);

  Output tokens =
      ops::FIFOQueue(at_step.with_op_name("token_queue"), {step_dtype},
                     {.shapes = {PartialShape::scalar()}, .shared_name = "sync_token_queue"});
  TROUPE_RETURN_IF_ERROR(root.status());
  std::vector<Operation> applied;
  std::vector<GradientAndVariable> averaged;
  std::vector<Output> accumulators;
  for (const auto& gv : grads_and_vars) {
    if (!gv.gradient.valid()) continue;
    Scope at_var = root.colocate_with(gv.variable.op());
    const bool sparse = gv.gradient.is_sparse();
    Output acc = ops::ConditionalAccumulator(
        at_var, gv.variable.dtype(), gv.variable.shape(),
        {.shared_name = gv.variable.node()->name() + "/grad_accum", .sparse = sparse});
    accumulators.push_back(acc);
    const int32_t required = static_cast<int32_t>(replicas_to_aggregate_);
    if (sparse) {
      // Only the rows the gradient touches travel and are held, as TensorFlow's
      // SparseConditionalAccumulator; the chief applies the average sparsely.
      const IndexedSlices& slices = gv.gradient.slices();
      applied.push_back(ops::SparseAccumulatorApplyGradient(
          at_var, acc, local_step_64, ops::Cast(at_var, slices.indices, DataType::kInt64),
          slices.values, ops::Cast(at_var, slices.dense_shape, DataType::kInt64),
          /*has_known_shape=*/true));
      ops::SparseAccumulatorTake taken =
          ops::SparseAccumulatorTakeGradient(at_var, acc, required, gv.variable.dtype());
      averaged.push_back(
          {IndexedSlices{taken.values, taken.indices, taken.dense_shape}, gv.variable});
    } else {
      applied.push_back(
          ops::AccumulatorApplyGradient(at_var, acc, local_step_64, gv.gradient.dense()));
      averaged.push_back(
          {ops::AccumulatorTakeGradient(at_var, acc, required, gv.variable.dtype()), gv.variable});
    }
    TROUPE_RETURN_IF_ERROR(root.status().with_context(
        fmt::format("SyncReplicasOptimizer: the accumulator of '{}'", gv.variable.node()->name())));
  }
  if (accumulators.empty()) {
    return errors::InvalidArgument("SyncReplicasOptimizer: no variable has a gradient");
  }
  // Worker: hand in the gradients, then wait for the chief's token and adopt its step.
  Scope after_apply = root.with_control_dependencies(applied);
  std::vector<Output> token =
      ops::QueueDequeue(after_apply.colocate_with(tokens.op()), tokens, {step_dtype});
  TROUPE_RETURN_IF_ERROR(root.status());
  train_op_ = ops::Assign(on_worker.with_op_name("train_op"), local_step, token.at(0)).op();

  // Chief: average, apply, advance the step, tell the accumulators, release the workers.
  TROUPE_ASSIGN_OR_RETURN(Operation update,
                          optimizer_->apply_gradients(root, averaged, global_step.ref));
  Scope after_update = at_step.with_control_dependencies({update});
  Output new_step = ops::Identity(after_update, global_step.ref);
  Output new_step_64 =
      step_dtype == DataType::kInt64 ? new_step : ops::Cast(at_step, new_step, DataType::kInt64);
  TROUPE_RETURN_IF_ERROR(root.status());
  std::vector<Operation> released;
  for (const Output& acc : accumulators) {
    released.push_back(
        ops::AccumulatorSetGlobalStep(root.colocate_with(acc.op()), acc, new_step_64));
  }
  Operation enqueued;
  for (int i = 0; i < total_num_replicas_; ++i) {
    Scope in_order = enqueued.valid() ? at_step.with_control_dependencies({enqueued}) : at_step;
    enqueued = ops::QueueEnqueue(in_order, tokens, {new_step});
  }
  released.push_back(enqueued);
  chief_update_ = ops::NoOp(root.with_op_name("chief_update").with_control_dependencies(released));
  close_tokens_ = ops::QueueClose(at_step.with_op_name("close_token_queue"), tokens,
                                  /*cancel_pending_enqueues=*/true);

  local_step_ = local_step;
  tokens_ = tokens;
  global_step_ = global_step.ref;
  TROUPE_ASSIGN_OR_RETURN(init_tokens_, init_tokens(scope, total_num_replicas_));
  return root.status();
}

StatusOr<Operation> SyncReplicasOptimizer::init_tokens(const Scope& scope, int count) const {
  if (!tokens_.valid()) {
    return errors::InvalidArgument(
        "SyncReplicasOptimizer: build the training op (minimize or apply_gradients) before the "
        "init tokens op");
  }
  if (count < 1) {
    return errors::InvalidArgument("SyncReplicasOptimizer: {} init tokens; expected >= 1", count);
  }
  Scope at_step = scope.root().sub_scope("sync_replicas").colocate_with(global_step_.op());
  Operation queued;
  for (int i = 0; i < count; ++i) {
    Scope in_order = queued.valid() ? at_step.with_control_dependencies({queued}) : at_step;
    queued = ops::QueueEnqueue(in_order.with_op_name("init_token"), tokens_, {global_step_});
  }
  TROUPE_RETURN_IF_ERROR(scope.status());
  return queued;
}

}  // namespace troupe
