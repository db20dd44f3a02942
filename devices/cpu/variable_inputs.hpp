// The variable behind a kernel's reference input, for the kernels that read or update one in
// place (AssignAdd, CountUpTo, the Scatter updates, the optimizer updates).
#pragma once

#include "troupe/devices/op_kernel.hpp"
#include "troupe/devices/variable.hpp"

namespace troupe {

// The initialized variable behind reference input `i`, or nullptr after recording the error:
// InvalidArgument when the input is not a variable, FailedPrecondition (naming the node and
// the variable) when it has no value yet.
inline Variable* initialized_variable_input(OpKernelContext& ctx, int i) {
  auto* var = ctx.input_resource<Variable>(i);
  if (var == nullptr) {
    ctx.fail_invalid("input {} is {}, not a variable", i, ctx.input_ref_ptr(i)->debug_name());
    return nullptr;
  }
  if (!var->is_initialized()) {
    ctx.set_status(errors::FailedPrecondition(
        "node '{}' ({}): attempting to use uninitialized value '{}'; run the variable's "
        "initializer first",
        ctx.node().name(), ctx.node().op_name(), var->name()));
    return nullptr;
  }
  return var;
}

}  // namespace troupe
