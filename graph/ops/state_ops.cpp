// State ops: variables and assignments.
#include "troupe/graph/ops/state_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status variable_shape(InferenceContext& c) {
  c.set_output(0, c.attr<PartialShape>("shape"));
  return Status::OK();
}

Status assign_shape(InferenceContext& c) {
  if (!c.attr<bool>("validate_shape")) {
    c.set_output(0, c.input(1));
    return Status::OK();
  }
  auto merged = c.input(0).merge(c.input(1));
  if (!merged.ok()) {
    return c.invalid("value of shape {} does not fit the variable of shape {}",
                     c.input(1).to_string(), c.input(0).to_string());
  }
  c.set_output(0, *merged);
  return Status::OK();
}

Status assign_update_shape(InferenceContext& c) {
  auto merged = c.input(0).merge(c.input(1));
  if (!merged.ok()) {
    return c.invalid("update of shape {} does not match the variable of shape {}",
                     c.input(1).to_string(), c.input(0).to_string());
  }
  c.set_output(0, c.input(0));
  return Status::OK();
}

Status count_up_to_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() != 0) {
    return c.invalid("the variable must be a scalar, got shape {}", c.input(0).to_string());
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

}  // namespace

void register_state_ops(OpRegistry& r) {
  // The variable's value before it adds 1; OutOfRange once it has reached `limit`.
  must_register(r, OpDefBuilder("CountUpTo")
                       .input("ref: Ref(T)")
                       .output("output: T")
                       .attr("limit: int")
                       .attr("T: {int32, int64}")
                       .stateful()
                       .shape_fn(count_up_to_shape));
  must_register(r, OpDefBuilder("Variable")
                       .output("ref: Ref(dtype)")
                       .attr("shape: shape")
                       .attr("dtype: type")
                       .attr("container: string = \"\"")
                       .attr("shared_name: string = \"\"")
                       .stateful()
                       .shape_fn(variable_shape));
  must_register(r, OpDefBuilder("Assign")
                       .input("ref: Ref(T)")
                       .input("value: T")
                       .output("output_ref: Ref(T)")
                       .attr("T: type")
                       .attr("validate_shape: bool = true")
                       .stateful()
                       .shape_fn(assign_shape));
  for (const char* name : {"AssignAdd", "AssignSub"}) {
    must_register(r, OpDefBuilder(name)
                         .input("ref: Ref(T)")
                         .input("value: T")
                         .output("output_ref: Ref(T)")
                         .attr("T: {float32, float64, int32, int64}")
                         .stateful()
                         .shape_fn(assign_update_shape));
  }
}

namespace ops {

Output Variable(const Scope& s, const PartialShape& shape, DataType dtype, VariableOptions o) {
  return NodeBuilder(s, "Variable")
      .attr("shape", shape)
      .attr("dtype", dtype)
      .attr("container", o.container)
      .attr("shared_name", o.shared_name)
      .finalize();
}

Output Assign(const Scope& s, const Input& ref, const Input& value, AssignOptions o) {
  return NodeBuilder(s, "Assign")
      .input(ref)
      .input(value)
      .attr("validate_shape", o.validate_shape)
      .finalize();
}

Output AssignAdd(const Scope& s, const Input& ref, const Input& value) {
  return NodeBuilder(s, "AssignAdd").input(ref).input(value).finalize();
}

Output AssignSub(const Scope& s, const Input& ref, const Input& value) {
  return NodeBuilder(s, "AssignSub").input(ref).input(value).finalize();
}

Output CountUpTo(const Scope& s, const Input& ref, int64_t limit) {
  return NodeBuilder(s, "CountUpTo").input(ref).attr("limit", limit).finalize();
}

}  // namespace ops
}  // namespace troupe
