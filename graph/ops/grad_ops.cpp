// Gradient helper ops: definitions (dtypes, shape functions) and builders.
#include "troupe/graph/ops/grad_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

constexpr std::string_view kNumeric = "T: {float32, float64, int32, int64}";
constexpr std::string_view kFloating = "T: {float32, float64}";

// Every input has a compatible shape; output 0 has the merged shape.
Status merge_all_shape(InferenceContext& c) {
  PartialShape merged = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    auto next = merged.merge(c.input(i));
    if (!next.ok()) {
      return c.invalid("input {} has shape {}, which does not match {} of the inputs before it", i,
                       c.input(i).to_string(), merged.to_string());
    }
    merged = std::move(next).value();
  }
  c.set_output(0, merged);
  return Status::OK();
}

Status broadcast_gradient_args_shape(InferenceContext& c) {
  for (int i = 0; i < 2; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != 1) {
      return c.invalid("s{} must be a vector (a shape), got shape {}", i, c.input(i).to_string());
    }
  }
  c.set_output(0, PartialShape({PartialShape::kUnknownDim}));
  c.set_output(1, PartialShape({PartialShape::kUnknownDim}));
  return Status::OK();
}

Status broadcast_to_shape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  const PartialShape& shape = c.input(1);
  if (shape.rank_known() && shape.rank() != 1) {
    return c.invalid("shape must be a vector, got shape {}", shape.to_string());
  }
  auto dims = c.input_as_ints(1);
  if (!dims) {
    int64_t rank = shape.rank_known() ? shape.dim(0) : -1;
    c.set_output(0, rank >= 0 ? PartialShape::unknown_of_rank(static_cast<int>(rank))
                              : PartialShape::unknown());
    return Status::OK();
  }
  for (int64_t d : *dims) {
    if (d < 0) return c.invalid("shape has a negative dimension {}", d);
  }
  PartialShape target(*dims);
  if (in.rank_known()) {
    if (in.rank() > target.rank()) {
      return c.invalid("cannot broadcast a tensor of shape {} to the lower rank {}", in.to_string(),
                       target.to_string());
    }
    for (int i = 0; i < in.rank(); ++i) {
      int64_t d = in.dim(i), t = target.dim(target.rank() - in.rank() + i);
      if (d >= 0 && d != 1 && d != t) {
        return c.invalid("cannot broadcast a tensor of shape {} to {}", in.to_string(),
                         target.to_string());
      }
    }
  }
  c.set_output(0, target);
  return Status::OK();
}

Status bias_add_grad_shape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  if (!in.rank_known()) {
    c.set_output(0, PartialShape({PartialShape::kUnknownDim}));
    return Status::OK();
  }
  if (in.rank() < 2) {
    return c.invalid("out_backprop must have rank >= 2, got shape {}", in.to_string());
  }
  c.set_output(0, PartialShape({in.dim(in.rank() - 1)}));
  return Status::OK();
}

}  // namespace

void register_grad_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("AddN")
                       .input("inputs: N * T")
                       .output("sum: T")
                       .attr("N: int >= 1")
                       .attr(kNumeric)
                       .shape_fn(merge_all_shape));
  for (const char* name : {"ZerosLike", "OnesLike"}) {
    must_register(r, OpDefBuilder(name)
                         .input("x: T")
                         .output("y: T")
                         .attr("T: {float32, float64, int32, int64, bool}")
                         .shape_fn(shapes::unchanged));
  }
  must_register(r, OpDefBuilder("Size")
                       .input("input: T")
                       .output("output: out_type")
                       .attr("T: type")
                       .attr("out_type: {int32, int64} = int32")
                       .shape_fn(shapes::scalar));
  must_register(r, OpDefBuilder("BroadcastGradientArgs")
                       .input("s0: T")
                       .input("s1: T")
                       .output("r0: T")
                       .output("r1: T")
                       .attr("T: {int32, int64} = int32")
                       .shape_fn(broadcast_gradient_args_shape));
  must_register(r, OpDefBuilder("BroadcastTo")
                       .input("input: T")
                       .input("shape: Tidx")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tidx: {int32, int64} = int32")
                       .shape_fn(broadcast_to_shape));
  must_register(r, OpDefBuilder("ReluGrad")
                       .input("gradients: T")
                       .input("features: T")
                       .output("backprops: T")
                       .attr(kNumeric)
                       .shape_fn(shapes::merge_binary));
  for (const char* name : {"SigmoidGrad", "TanhGrad"}) {
    must_register(
        r, OpDefBuilder(name).input("y: T").input("dy: T").output("z: T").attr(kFloating).shape_fn(
               shapes::merge_binary));
  }
  must_register(r, OpDefBuilder("BiasAddGrad")
                       .input("out_backprop: T")
                       .output("output: T")
                       .attr(kNumeric)
                       .shape_fn(bias_add_grad_shape));
}

namespace ops {

Output AddN(const Scope& s, const std::vector<Input>& inputs) {
  return NodeBuilder(s, "AddN").input_list(inputs).finalize();
}

Output ZerosLike(const Scope& s, const Input& x) {
  return NodeBuilder(s, "ZerosLike").input(x).finalize();
}

Output OnesLike(const Scope& s, const Input& x) {
  return NodeBuilder(s, "OnesLike").input(x).finalize();
}

Output Size(const Scope& s, const Input& input, DataType out_type) {
  return NodeBuilder(s, "Size").input(input).attr("out_type", out_type).finalize();
}

BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& s, const Input& s0,
                                                   const Input& s1) {
  Operation op = NodeBuilder(s, "BroadcastGradientArgs").input(s0).input(s1).finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

Output BroadcastTo(const Scope& s, const Input& input, const Input& shape) {
  return NodeBuilder(s, "BroadcastTo").input(input).input(shape).finalize();
}

Output ReluGrad(const Scope& s, const Input& gradients, const Input& features) {
  return NodeBuilder(s, "ReluGrad").input(gradients).input(features).finalize();
}

Output SigmoidGrad(const Scope& s, const Input& y, const Input& dy) {
  return NodeBuilder(s, "SigmoidGrad").input(y).input(dy).finalize();
}

Output TanhGrad(const Scope& s, const Input& y, const Input& dy) {
  return NodeBuilder(s, "TanhGrad").input(y).input(dy).finalize();
}

Output BiasAddGrad(const Scope& s, const Input& out_backprop) {
  return NodeBuilder(s, "BiasAddGrad").input(out_backprop).finalize();
}

}  // namespace ops
}  // namespace troupe
