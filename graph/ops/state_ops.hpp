// Builders for variables and their updates.
//
// A Variable's output is a reference: ops that take a reference (Assign, AssignAdd, ...)
// update the variable in place on the device that holds it; any other op reads its current
// value. Reading a variable before anything assigned it is a FailedPrecondition error.
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct VariableOptions {
  // Variables with the same container and shared_name are one variable on a device. An empty
  // shared_name means the node's name.
  std::string container;
  std::string shared_name;
};
Output Variable(const Scope& scope, const PartialShape& shape, DataType dtype,
                VariableOptions options = {});

struct AssignOptions {
  // Require value's shape to match the variable's declared shape.
  bool validate_shape = true;
};
// Sets `ref` to `value`; the output is the reference, holding the new value.
Output Assign(const Scope& scope, const Input& ref, const Input& value, AssignOptions options = {});
Output AssignAdd(const Scope& scope, const Input& ref, const Input& value);
Output AssignSub(const Scope& scope, const Input& ref, const Input& value);
// The value of the int32 or int64 scalar variable `ref` before it adds 1; once it has reached
// `limit` the op fails with OutOfRange (input pipelines end on it).
Output CountUpTo(const Scope& scope, const Input& ref, int64_t limit);

}  // namespace troupe::ops
