// Selection ops: definitions, shape functions and builders.
#include "troupe/graph/ops/selection_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status pack_shape(InferenceContext& c) {
  PartialShape merged = PartialShape::unknown();
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto m = merged.merge(c.input(i));
    if (!m.ok()) {
      return c.invalid("shapes of all inputs must match: input 0 has shape {}, input {} has {}",
                       c.input(0).to_string(), i, c.input(i).to_string());
    }
    merged = *m;
  }
  if (!merged.rank_known()) {
    c.set_output(0, PartialShape::unknown());
    return Status::OK();
  }
  int64_t rank = merged.rank();
  int64_t axis = c.attr<int64_t>("axis");
  if (axis < -(rank + 1) || axis > rank) {
    return c.invalid("axis = {} not in [{}, {}]", axis, -(rank + 1), rank + 1);
  }
  if (axis < 0) axis += rank + 1;
  std::vector<int64_t> dims = merged.dims();
  dims.insert(dims.begin() + axis, c.num_inputs());
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status where_shape(InferenceContext& c) {
  int rank = c.input(0).rank();
  c.set_output(0, c.input(0).rank_known() ? PartialShape({-1, rank}) : PartialShape({-1, -1}));
  return Status::OK();
}

Status gather_shape(InferenceContext& c) {
  const PartialShape& params = c.input(0);
  const PartialShape& indices = c.input(1);
  auto axis_value = c.input_as_ints(2);
  if (c.input(2).rank_known() && c.input(2).rank() > 1) {
    return c.invalid("axis must be a scalar, got shape {}", c.input(2).to_string());
  }
  if (!params.rank_known() || !indices.rank_known() || !axis_value || axis_value->empty()) {
    c.set_output(0, PartialShape::unknown());
    return Status::OK();
  }
  int64_t axis = (*axis_value)[0];
  int64_t rank = params.rank();
  if (axis < -rank || axis >= rank) {
    return c.invalid("axis {} is out of range for params of rank {}", axis, rank);
  }
  if (axis < 0) axis += rank;
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

// TensorFlow's Select (tf.where with three arguments in 1.x): t and e of one shape; the
// condition a scalar, of their shape, or a vector as long as their first dimension.
Status select_shape(InferenceContext& c) {
  auto values = c.input(1).merge(c.input(2));
  if (!values.ok()) {
    return c.invalid("t and e must have the same shape, got {} and {}", c.input(1).to_string(),
                     c.input(2).to_string());
  }
  const PartialShape& cond = c.input(0);
  if (cond.rank_known() && values->rank_known() && cond.rank() != 0) {
    bool ok = cond.merge(*values).ok() || (cond.rank() == 1 && values->rank() >= 1 &&
                                           cond.merge(PartialShape({values->dim(0)})).ok());
    if (!ok) {
      return c.invalid(
          "the condition must be a scalar, a vector as long as t's first dimension, or of t's "
          "shape; got {} for t of shape {}",
          cond.to_string(), values->to_string());
    }
  }
  c.set_output(0, *values);
  return Status::OK();
}

}  // namespace

void register_selection_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("Select")
                       .input("condition: bool")
                       .input("t: T")
                       .input("e: T")
                       .output("output: T")
                       .attr("T: type")
                       .shape_fn(select_shape));
  must_register(r, OpDefBuilder("Pack")
                       .input("values: N * T")
                       .output("output: T")
                       .attr("N: int >= 1")
                       .attr("T: type")
                       .attr("axis: int = 0")
                       .shape_fn(pack_shape));
  must_register(r, OpDefBuilder("Where")
                       .input("input: T")
                       .output("index: int64")
                       .attr("T: {bool} = bool")
                       .shape_fn(where_shape));
  must_register(r, OpDefBuilder("GatherV2")
                       .input("params: Tparams")
                       .input("indices: Tindices")
                       .input("axis: Taxis")
                       .output("output: Tparams")
                       .attr("Tparams: type")
                       .attr("Tindices: {int32, int64}")
                       .attr("Taxis: {int32, int64}")
                       .shape_fn(gather_shape));
  must_register(
      r, OpDefBuilder("LogicalNot").input("x: bool").output("y: bool").shape_fn(shapes::unchanged));
}

namespace ops {

Output Pack(const Scope& s, const std::vector<Input>& values, int64_t axis) {
  return NodeBuilder(s, "Pack").input_list(values).attr("axis", axis).finalize();
}

Output Where(const Scope& s, const Input& condition) {
  return NodeBuilder(s, "Where").input(condition).finalize();
}

Output GatherV2(const Scope& s, const Input& params, const Input& indices, const Input& axis) {
  return NodeBuilder(s, "GatherV2").input(params).input(indices).input(axis).finalize();
}

Output Select(const Scope& s, const Input& condition, const Input& t, const Input& e) {
  return NodeBuilder(s, "Select").input(condition).input(t).input(e).finalize();
}

Output LogicalNot(const Scope& s, const Input& x) {
  return NodeBuilder(s, "LogicalNot").input(x).finalize();
}

}  // namespace ops
}  // namespace troupe
