// Control flow ops: Switch and Merge, from which tf.cond is built (python/troupe/
// control_flow_ops.py). Switch forwards `data` to output_true when `pred` is true, else to
// output_false; the other output is dead, and so is everything computed from it (the executor
// does not run it). Merge forwards whichever of its inputs is live, and its index. See
// devices/executor.hpp for how deadness flows; a dead value cannot cross devices yet.
// Assert fails the step with InvalidArgument "assertion failed: [data 0] [data 1] ..." (at most
// `summarize` entries of each) when its condition is false; CheckNumerics passes a float tensor
// on, or fails with InvalidArgument "<message> : Tensor had NaN values" (Inf, NaN and Inf).
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct SwitchOutputs {
  Output output_false, output_true;
};
SwitchOutputs Switch(const Scope& scope, const Input& data, const Input& pred);

struct MergeOutputs {
  Output output;       // the live input's value
  Output value_index;  // int32: which input it was
};
MergeOutputs Merge(const Scope& scope, const std::vector<Input>& inputs);

Operation Assert(const Scope& scope, const Input& condition, const std::vector<Input>& data,
                 int summarize = 3);
Output CheckNumerics(const Scope& scope, const Input& tensor, const std::string& message);

}  // namespace troupe::ops
