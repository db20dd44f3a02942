// NodeBuilder: adds one node to a Scope's graph, filling in what the caller need not say.
//
// Type attributes (T, dtype, ...) are taken from the inputs; list lengths (N) from input lists;
// literal values become Const nodes, converted to the dtype the other inputs fix (so
// `Mul(x, 0.5)` works for a float32 `x`). The scope's name prefix, control dependencies and
// colocation groups (the _class attribute) apply; last, the scope's device stack sets the
// device (Scope::assign_device), so device functions see the finished node. On failure the
// error goes to the scope (Scope::status()) and finalize() returns an invalid Operation, so
// builder calls chain without checks.
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/scope.hpp"

namespace troupe {

class NodeBuilder {
 public:
  NodeBuilder(const Scope& scope, std::string op, std::string_view default_name = {});

  NodeBuilder& input(const Input& in);
  NodeBuilder& input_list(const std::vector<Input>& ins);  // one "N * T" argument
  NodeBuilder& attr(std::string name, AttrValue value);
  NodeBuilder& control_input(Operation op);

  Operation finalize();

 private:
  // One argument of the op: a single tensor or a list.
  struct Arg {
    std::vector<Input> inputs;
    bool is_list = false;
  };

  Status build(NodeDef& def);
  StatusOr<Output> materialize(const Input& in, DataType want);

  Scope scope_;
  std::string op_;
  std::string default_name_;
  std::vector<Arg> args_;
  AttrMap attrs_;
  std::vector<Operation> control_inputs_;
};

// A Const node holding `value`, in `scope`.
Output make_const(const Scope& scope, const Tensor& value);

}  // namespace troupe
