// The state, queue and runtime-internal ops, none of which has a gradient: variables and their
// assignments, optimizer updates, queues, gradient accumulators, and _Arg / _Retval / _Send /
// _Recv. Declaring them not differentiable
// stops the flow there instead of failing (a variable is where a gradient ends, not an error).
#include "troupe/graph/gradients/standard_gradients.hpp"

namespace troupe {

void register_state_gradients(GradientRegistry& r) {
  for (const char* op : {"Variable",
                         "Assign",
                         "AssignAdd",
                         "AssignSub",
                         "FIFOQueue",
                         "QueueEnqueue",
                         "QueueDequeue",
                         "QueueClose",
                         "QueueSize",
                         "_Arg",
                         "_Retval",
                         "_Send",
                         "_Recv",
                         "ApplyGradientDescent",
                         "ApplyMomentum",
                         "ApplyAdagrad",
                         "ApplyAdam",
                         "ApplyRMSProp",
                         "ApplyCenteredRMSProp",
                         "ApplyAdadelta",
                         "ApplyFtrlV2",
                         "ApplyProximalGradientDescent",
                         "ApplyProximalAdagrad",
                         "SparseApplyMomentum",
                         "SparseApplyAdagrad",
                         "SparseApplyAdam",
                         "SparseApplyRMSProp",
                         "SparseApplyCenteredRMSProp",
                         "SparseApplyAdadelta",
                         "SparseApplyFtrlV2",
                         "SparseApplyProximalGradientDescent",
                         "SparseApplyProximalAdagrad",
                         "IsVariableInitialized",
                         "ConditionalAccumulator",
                         "AccumulatorApplyGradient",
                         "AccumulatorTakeGradient",
                         "AccumulatorSetGlobalStep",
                         "AccumulatorNumAccumulated",
                         "SparseConditionalAccumulator",
                         "SparseAccumulatorApplyGradient",
                         "SparseAccumulatorTakeGradient"}) {
    must_declare_not_differentiable(r, op);
  }
}

}  // namespace troupe
