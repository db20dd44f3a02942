// Control flow ops: definitions, shape functions and builders.
#include "troupe/graph/ops/control_flow_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status switch_shape(InferenceContext& c) {
  if (c.input(1).rank_known() && c.input(1).rank() != 0) {
    return c.invalid("pred must be a scalar, got shape {}", c.input(1).to_string());
  }
  c.set_output(0, c.input(0));
  c.set_output(1, c.input(0));
  return Status::OK();
}

// The shape the inputs share, as far as they agree; unknown where they differ.
Status merge_shape(InferenceContext& c) {
  PartialShape shape = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    auto merged = shape.merge(c.input(i));
    if (!merged.ok()) {
      shape = PartialShape::unknown();
      break;
    }
    shape = *merged;
  }
  c.set_output(0, shape);
  c.set_output(1, PartialShape::scalar());
  return Status::OK();
}

// While: output i has the shape given for it in output_shapes (tf.while_loop's shape
// invariants), or input i's (a loop variable keeps its shape by default); a recorded variable
// is stacked over the iterations.
Status while_shape(InferenceContext& c) {
  const auto& types = c.attr<std::vector<DataType>>("T");
  const auto& given = c.attr<std::vector<PartialShape>>("output_shapes");
  const auto& recorded = c.attr<std::vector<DataType>>("Tstacked");
  const int n = static_cast<int>(types.size());
  if (!given.empty() && static_cast<int>(given.size()) != n) {
    return c.invalid("output_shapes has {} shapes for {} loop variables", given.size(), n);
  }
  if (!recorded.empty() && recorded != types) {
    return c.invalid("Tstacked must be empty or the loop variables' types");
  }
  for (int i = 0; i < n; ++i) {
    PartialShape shape = given.empty() ? c.input(i) : given[i];
    if (!recorded.empty()) {
      PartialShape stacked = PartialShape::unknown();
      if (shape.rank_known()) {
        std::vector<int64_t> dims = {-1};
        dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
        stacked = PartialShape(dims);
      }
      c.set_output(n + i, std::move(stacked));
    }
    c.set_output(i, std::move(shape));
  }
  const auto& drawn = c.attr<std::vector<DataType>>("Tdrawn");
  const auto& drawn_from = c.attr<std::vector<std::string>>("drawn_from");
  if (drawn_from.size() != drawn.size()) {
    return c.invalid("drawn_from names {} ops for {} drawn values", drawn_from.size(),
                     drawn.size());
  }
  if (c.attr<int64_t>("Ndrawn") != static_cast<int64_t>(drawn.size())) {
    return c.invalid("Ndrawn is {} for {} drawn values", c.attr<int64_t>("Ndrawn"), drawn.size());
  }
  const int first_drawn = n + static_cast<int>(recorded.size());
  const int num_drawn = static_cast<int>(drawn.size());
  for (int j = 0; j < num_drawn; ++j) {
    c.set_output(first_drawn + j, PartialShape({-1}));
    c.set_output(first_drawn + num_drawn + j, PartialShape({-1, -1}));
  }
  c.set_output(c.num_outputs() - 1, PartialShape::scalar());
  return Status::OK();
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  // tf.while_loop as one node, whose condition and body are functions (serialized graphs,
  // as Dataset.map's): the loop variables `input`, then the tensors each function captures.
  // cond(vars..., cond_captured...) is a scalar bool; body(vars..., body_captured...) gives
  // the next vars. With Tstacked (the loop variables' types), `stacked` holds each variable's
  // value entering every iteration, stacked on a new first axis, for the gradient; the
  // variables listed in `unstacked` (whose values the body's gradient does not read, as an
  // accumulator written with TensorScatterUpdate) are not kept: their stacks are empty.
  // With Tdrawn, body returns one more value per random draw it makes (the outputs of its
  // random ops, named by drawn_from), and `drawn` j holds draw j of every iteration, flattened
  // and concatenated; row k of `drawn_shapes` j is its number of elements in iteration k, then
  // its shape (zeros where the draw's cond branch was not taken), so that the gradient replays
  // the draws instead of drawing again. With body_takes_iteration, body gets
  // the iteration's number (int32, from 0) as one more argument, after the loop variables.
  must_register(r, OpDefBuilder("While")
                       .input("input: T")
                       .input("cond_captured: Tcond")
                       .input("body_captured: Tbody")
                       .output("output: T")
                       .output("stacked: Tstacked")
                       .output("drawn: Tdrawn")
                       .output("drawn_shapes: Ndrawn * int64")
                       .output("iterations: int32")
                       .attr("T: list(type)")
                       .attr("Tcond: list(type) = []")
                       .attr("Tbody: list(type) = []")
                       .attr("Tstacked: list(type) = []")
                       .attr("unstacked: list(int) = []")
                       .attr("Tdrawn: list(type) = []")
                       .attr("Ndrawn: int >= 0 = 0")
                       .attr("drawn_from: list(string) = []")
                       .attr("body_takes_iteration: bool = false")
                       .attr("cond: string")
                       .attr("body: string")
                       .attr("output_shapes: list(shape) = []")
                       .attr("parallel_iterations: int = 10")
                       .stateful()
                       .shape_fn(while_shape));
  must_register(r, OpDefBuilder("Switch")
                       .input("data: T")
                       .input("pred: bool")
                       .output("output_false: T")
                       .output("output_true: T")
                       .attr("T: type")
                       .shape_fn(switch_shape));
  must_register(r, OpDefBuilder("Merge")
                       .input("inputs: N * T")
                       .output("output: T")
                       .output("value_index: int32")
                       .attr("T: type")
                       .attr("N: int >= 1")
                       .shape_fn(merge_shape));
  // The tensor, after checking that it holds no NaN or infinity.
  must_register(r, OpDefBuilder("CheckNumerics")
                       .input("tensor: T")
                       .output("output: T")
                       .attr("T: type")
                       .attr("message: string")
                       .shape_fn([](InferenceContext& c) {
                         c.set_output(0, c.input(0));
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("Assert")
                       .input("condition: bool")
                       .input("data: T")
                       .attr("T: list(type) = []")
                       .attr("summarize: int = 3")
                       .stateful()
                       .shape_fn([](InferenceContext& c) -> Status {
                         if (c.input(0).rank_known() && c.input(0).rank() != 0) {
                           return c.invalid("condition must be a scalar, got shape {}",
                                            c.input(0).to_string());
                         }
                         return Status::OK();
                       }));
}

namespace ops {

SwitchOutputs Switch(const Scope& s, const Input& data, const Input& pred) {
  Operation op = NodeBuilder(s, "Switch").input(data).input(pred).finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

MergeOutputs Merge(const Scope& s, const std::vector<Input>& inputs) {
  Operation op = NodeBuilder(s, "Merge").input_list(inputs).finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

Output CheckNumerics(const Scope& s, const Input& tensor, const std::string& message) {
  return NodeBuilder(s, "CheckNumerics").input(tensor).attr("message", message).finalize();
}

Operation Assert(const Scope& s, const Input& condition, const std::vector<Input>& data,
                 int summarize) {
  return NodeBuilder(s, "Assert")
      .input(condition)
      .input_list(data)
      .attr("summarize", static_cast<int64_t>(summarize))
      .finalize();
}

}  // namespace ops
}  // namespace troupe
