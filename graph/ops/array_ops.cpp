// Array ops: definitions (dtypes, shape functions) and builders.
#include "troupe/graph/ops/array_ops.hpp"

#include "troupe/graph/core/check.hpp"
#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status const_shape(InferenceContext& c) {
  const Tensor& value = c.attr<Tensor>("value");
  if (value.dtype() != c.attr<DataType>("dtype")) {
    return c.invalid("value is {} but dtype is {}", dtype_name(value.dtype()),
                     dtype_name(c.attr<DataType>("dtype")));
  }
  c.set_output(0, value.shape());
  return Status::OK();
}

// x's shape and like's, which must agree.
Status ensure_shape_like_shape(InferenceContext& c) {
  auto merged = c.input(0).merge(c.input(1));
  if (!merged.ok()) {
    return c.invalid("input has shape {} but must have the shape of 'like', {}",
                     c.input(0).to_string(), c.input(1).to_string());
  }
  c.set_output(0, *merged);
  return Status::OK();
}

// The declared shape, which the default value must have (a feed may be any value of it).
Status placeholder_with_default_shape(InferenceContext& c) {
  const PartialShape& declared = c.attr<PartialShape>("shape");
  if (!c.input(0).merge(declared).ok()) {
    return c.invalid("the default value has shape {}, which is not of the declared shape {}",
                     c.input(0).to_string(), declared.to_string());
  }
  c.set_output(0, declared);
  return Status::OK();
}

Status placeholder_shape(InferenceContext& c) {
  c.set_output(0, c.attr<PartialShape>("shape"));
  return Status::OK();
}

// The shape named by a rank-1 integer input, as far as it is known.
StatusOr<PartialShape> shape_from_input(InferenceContext& c, int i) {
  const PartialShape& s = c.input(i);
  if (s.rank_known() && s.rank() != 1) {
    return c.invalid("input {} must be a vector (a shape), got shape {}", i, s.to_string());
  }
  if (auto dims = c.input_as_ints(i)) {
    for (int64_t d : *dims) {
      if (d < -1) return c.invalid("shape has a negative dimension {}", d);
    }
    return PartialShape(*dims);
  }
  if (s.rank_known() && s.dim(0) >= 0) return PartialShape::unknown_of_rank(s.dim(0));
  return PartialShape::unknown();
}

Status reshape_shape(InferenceContext& c) {
  TROUPE_ASSIGN_OR_RETURN(PartialShape target, shape_from_input(c, 1));
  // Without the shape's values, -1 means "not known yet", not "infer this one".
  if (!target.rank_known() || c.input_value(1) == nullptr) {
    c.set_output(0, target);
    return Status::OK();
  }
  std::vector<int64_t> dims = target.dims();
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) return c.invalid("shape {} has more than one -1", target.to_string());
      inferred = static_cast<int>(i);
    } else {
      known *= dims[i];
    }
  }
  int64_t count = c.input(0).num_elements();
  if (count >= 0 && c.input_value(1) != nullptr) {
    if (inferred >= 0) {
      if (known == 0 || count % known != 0) {
        return c.invalid("cannot reshape a tensor of {} elements to {}", count, target.to_string());
      }
      dims[inferred] = count / known;
    } else if (known != count) {
      return c.invalid("cannot reshape a tensor of shape {} ({} elements) to {} ({} elements)",
                       c.input(0).to_string(), count, target.to_string(), known);
    }
  }
  c.set_output(0, PartialShape(dims));
  return Status::OK();
}

Status shape_shape(InferenceContext& c) {
  c.set_output(0, PartialShape({c.input(0).rank_known() ? c.input(0).rank() : -1}));
  return Status::OK();
}

Status fill_shape(InferenceContext& c) {
  if (c.input(1).rank_known() && c.input(1).rank() != 0) {
    return c.invalid("value must be a scalar, got shape {}", c.input(1).to_string());
  }
  TROUPE_ASSIGN_OR_RETURN(PartialShape shape, shape_from_input(c, 0));
  if (shape.rank_known()) {
    for (int64_t d : shape.dims()) {
      if (d == -1 && c.input_value(0) != nullptr) return c.invalid("dims must be >= 0");
    }
  }
  c.set_output(0, shape);
  return Status::OK();
}

}  // namespace

void register_array_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("Const")
                       .output("output: dtype")
                       .attr("value: tensor")
                       .attr("dtype: type")
                       .shape_fn(const_shape));
  must_register(r, OpDefBuilder("Placeholder")
                       .output("output: dtype")
                       .attr("dtype: type")
                       .attr("shape: shape = <unknown>")
                       .shape_fn(placeholder_shape));
  must_register(r, OpDefBuilder("PlaceholderWithDefault")
                       .input("input: dtype")
                       .output("output: dtype")
                       .attr("dtype: type")
                       .attr("shape: shape")
                       .shape_fn(placeholder_with_default_shape));
  must_register(r, OpDefBuilder("Identity")
                       .input("input: T")
                       .output("output: T")
                       .attr("T: type")
                       .shape_fn(shapes::unchanged));
  must_register(r, OpDefBuilder("StopGradient")
                       .input("input: T")
                       .output("output: T")
                       .attr("T: type")
                       .shape_fn(shapes::unchanged));
  must_register(r, OpDefBuilder("EnsureShapeLike")
                       .input("input: T")
                       .input("like: U")
                       .output("output: T")
                       .attr("T: type")
                       .attr("U: type")
                       .shape_fn(ensure_shape_like_shape));
  must_register(r, OpDefBuilder("NoOp").shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("Reshape")
                       .input("tensor: T")
                       .input("shape: Tshape")
                       .output("output: T")
                       .attr("T: type")
                       .attr("Tshape: {int32, int64} = int32")
                       .shape_fn(reshape_shape));
  must_register(r, OpDefBuilder("Shape")
                       .input("input: T")
                       .output("output: out_type")
                       .attr("T: type")
                       .attr("out_type: {int32, int64} = int32")
                       .shape_fn(shape_shape));
  must_register(r, OpDefBuilder("Fill")
                       .input("dims: index_type")
                       .input("value: T")
                       .output("output: T")
                       .attr("T: type")
                       .attr("index_type: {int32, int64} = int32")
                       .shape_fn(fill_shape));
}

void must_register(OpRegistry& registry, const OpDefBuilder& builder) {
  TROUPE_CHECK_OK(registry.register_op(builder));
}

namespace ops {

Output Const(const Scope& scope, const Input& value) {
  if (!value.status().ok()) {
    scope.update_status(value.status().with_context("Const"));
    return Output();
  }
  if (!value.is_value()) {
    scope.update_status(errors::InvalidArgument(
        "Const needs a value (a Tensor or literal), not the output '{}'", value.output().name()));
    return Output();
  }
  return make_const(scope, value.value());
}

Output Const(const Scope& scope, const Input& value, const TensorShape& shape) {
  if (!value.status().ok()) {
    scope.update_status(value.status().with_context("Const"));
    return Output();
  }
  if (!value.is_value() || value.value().num_elements() != 1) {
    scope.update_status(errors::InvalidArgument(
        "Const with a shape needs a single-element value to fill shape {}", shape.to_string()));
    return Output();
  }
  const Tensor& one = value.value();
  Tensor filled(one.dtype(), shape);
  TROUPE_SWITCH_ALL(one.dtype(), T,
                    { std::fill_n(filled.data<T>(), filled.num_elements(), *one.data<T>()); });
  return make_const(scope, filled);
}

Output PlaceholderWithDefault(const Scope& scope, const Input& input, const PartialShape& shape) {
  return NodeBuilder(scope, "PlaceholderWithDefault").input(input).attr("shape", shape).finalize();
}

Output Placeholder(const Scope& scope, DataType dtype, const PartialShape& shape) {
  return NodeBuilder(scope, "Placeholder").attr("dtype", dtype).attr("shape", shape).finalize();
}

Output Identity(const Scope& scope, const Input& input) {
  return NodeBuilder(scope, "Identity").input(input).finalize();
}

Output StopGradient(const Scope& scope, const Input& input) {
  return NodeBuilder(scope, "StopGradient").input(input).finalize();
}

Output EnsureShapeLike(const Scope& scope, const Input& input, const Input& like) {
  return NodeBuilder(scope, "EnsureShapeLike").input(input).input(like).finalize();
}

Operation NoOp(const Scope& scope) {
  return NodeBuilder(scope, "NoOp").finalize();
}

Output Reshape(const Scope& scope, const Input& tensor, const Input& shape) {
  return NodeBuilder(scope, "Reshape").input(tensor).input(shape).finalize();
}

Output Shape(const Scope& scope, const Input& input, DataType out_type) {
  return NodeBuilder(scope, "Shape").input(input).attr("out_type", out_type).finalize();
}

Output Fill(const Scope& scope, const Input& dims, const Input& value) {
  return NodeBuilder(scope, "Fill").input(dims).input(value).finalize();
}

}  // namespace ops
}  // namespace troupe
