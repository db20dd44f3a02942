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
  if (replicas_to_aggregate_ < 1 || total_num_replicas_ < 1) {
    return errors::InvalidArgument(
        "SyncReplicasOptimizer needs replicas_to_aggregate >= 1 and total_num_replicas >= 1, "
        "got {} and {}",
        replicas_to_aggregate_, total_num_replicas_);
  }
  TROUPE_ASSIGN_OR_RETURN(auto grads_and_vars, optimizer_->compute_gradients(scope, loss));
  Scope root = scope.root().sub_scope("sync_replicas");
  Scope at_step = root.colocate_with(global_step.ref.op());

  // This worker's step: the global step it last saw.
  Scope on_worker = root.with_device(worker_device);
  Output local_step =
      ops::Variable(on_worker.with_op_name("local_step"), TensorShape{}, DataType::kInt64);
  local_step_init_ = ops::Assign(on_worker, local_step, global_step.ref).op();

  Output tokens =
      ops::FIFOQueue(at_step.with_op_name("token_queue"), {DataType::kInt64},
                     {.shapes = {PartialShape::scalar()}, .shared_name = "sync_token_queue"});
  std::vector<Operation> applied;
  std::vector<GradientAndVariable> averaged;
  std::vector<Output> accumulators;
  for (const auto& gv : grads_and_vars) {
    if (!gv.gradient.valid()) continue;
    Scope at_var = root.colocate_with(gv.variable.op());
    Output acc =
        ops::ConditionalAccumulator(at_var, gv.variable.dtype(), gv.variable.shape(),
                                    {.shared_name = gv.variable.node()->name() + "/grad_accum"});
    accumulators.push_back(acc);
    applied.push_back(ops::AccumulatorApplyGradient(at_var, acc, local_step, gv.gradient));
    averaged.push_back(
        {ops::AccumulatorTakeGradient(at_var, acc, static_cast<int32_t>(replicas_to_aggregate_),
                                      gv.variable.dtype()),
         gv.variable});
  }
  if (accumulators.empty()) {
    return errors::InvalidArgument("SyncReplicasOptimizer: no variable has a gradient");
  }
  // Worker: hand in the gradients, then wait for the chief's token and adopt its step.
  Scope after_apply = root.with_control_dependencies(applied);
  Output token =
      ops::QueueDequeue(after_apply.colocate_with(tokens.op()), tokens, {DataType::kInt64})[0];
  train_op_ = ops::Assign(on_worker.with_op_name("train_op"), local_step, token).op();

  // Chief: average, apply, advance the step, tell the accumulators, release the workers.
  TROUPE_ASSIGN_OR_RETURN(Operation update,
                          optimizer_->apply_gradients(root, averaged, global_step.ref));
  Scope after_update = at_step.with_control_dependencies({update});
  Output new_step = ops::Identity(after_update, global_step.ref);
  std::vector<Operation> released;
  for (const Output& acc : accumulators) {
    released.push_back(ops::AccumulatorSetGlobalStep(root.colocate_with(acc.op()), acc, new_step));
  }
  Operation enqueued;
  for (int i = 0; i < total_num_replicas_; ++i) {
    Scope in_order = enqueued.valid() ? at_step.with_control_dependencies({enqueued}) : at_step;
    enqueued = ops::QueueEnqueue(in_order, tokens, {new_step});
  }
  released.push_back(enqueued);
  chief_update_ = ops::NoOp(root.with_op_name("chief_update").with_control_dependencies(released));

  Operation queued;
  for (int i = 0; i < total_num_replicas_; ++i) {
    Scope in_order = queued.valid() ? at_step.with_control_dependencies({queued}) : at_step;
    queued = ops::QueueEnqueue(in_order.with_op_name("init_token"), tokens, {global_step.ref});
  }
  init_tokens_ = queued;
  return scope.status();
}

}  // namespace troupe
