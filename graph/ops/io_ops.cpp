// Checkpoint ops: SaveV2's and RestoreV2's definitions, shape functions and builders.
#include "troupe/graph/ops/io_ops.hpp"

#include "troupe/graph/formats/tensor_slice.hpp"
#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// Unknown shapes, but a constant slice spec gives its slice's shape (TensorFlow's rule).
Status restore_shape(InferenceContext& c) {
  const auto& dtypes = c.attr<std::vector<DataType>>("dtypes");
  for (int i = 1; i <= 2; ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != 1) {
      return c.invalid("{} must be a vector, got shape {}",
                       i == 1 ? "tensor_names" : "shape_and_slices", c.input(i).to_string());
    }
    if (c.input(i).rank_known() && c.input(i).dim(0) >= 0 &&
        c.input(i).dim(0) != static_cast<int64_t>(dtypes.size())) {
      return c.invalid("{} has {} entries for {} dtypes",
                       i == 1 ? "tensor_names" : "shape_and_slices", c.input(i).dim(0),
                       dtypes.size());
    }
  }
  const Tensor* specs = c.input_value(2);
  for (int i = 0; i < c.num_outputs(); ++i) {
    PartialShape shape = PartialShape::unknown();
    if (specs != nullptr && specs->dtype() == DataType::kString &&
        specs->num_elements() == c.num_outputs()) {
      auto spec = parse_tensor_slice_spec(specs->flat<std::string>()[i]);
      if (!spec.ok()) return c.invalid("{}", spec.status().message());
      if (!spec->whole) shape = PartialShape(spec->length);
    }
    c.set_output(i, shape);
  }
  return Status::OK();
}

Status save_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() != 0) {
    return c.invalid("prefix must be a scalar, got shape {}", c.input(0).to_string());
  }
  const int64_t count = c.num_inputs() - 3;
  for (int i = 1; i <= 2; ++i) {
    const PartialShape& in = c.input(i);
    if (in.rank_known() && (in.rank() != 1 || (in.dim(0) >= 0 && in.dim(0) != count))) {
      return c.invalid("{} must be a vector of {} strings, one per tensor, got shape {}",
                       i == 1 ? "tensor_names" : "shape_and_slices", count, in.to_string());
    }
  }
  return Status::OK();
}

}  // namespace

void register_io_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("RestoreV2")
                       .input("prefix: string")
                       .input("tensor_names: string")
                       .input("shape_and_slices: string")
                       .output("tensors: dtypes")
                       .attr("dtypes: list(type)")
                       .stateful()
                       .shape_fn(restore_shape));
  must_register(r, OpDefBuilder("SaveV2")
                       .input("prefix: string")
                       .input("tensor_names: string")
                       .input("shape_and_slices: string")
                       .input("tensors: dtypes")
                       .attr("dtypes: list(type)")
                       .stateful()
                       .shape_fn(save_shape));
}

namespace ops {

std::vector<Output> RestoreV2(const Scope& scope, const Input& prefix, const Input& tensor_names,
                              const Input& shape_and_slices, const std::vector<DataType>& dtypes) {
  Operation op = NodeBuilder(scope, "RestoreV2")
                     .input(prefix)
                     .input(tensor_names)
                     .input(shape_and_slices)
                     .attr("dtypes", dtypes)
                     .finalize();
  std::vector<Output> outputs;
  if (!op.valid()) return outputs;
  for (int i = 0; i < op.num_outputs(); ++i)
    outputs.emplace_back(op, i);
  return outputs;
}

Operation SaveV2(const Scope& scope, const Input& prefix, const Input& tensor_names,
                 const Input& shape_and_slices, const std::vector<Input>& tensors) {
  return NodeBuilder(scope, "SaveV2")
      .input(prefix)
      .input(tensor_names)
      .input(shape_and_slices)
      .input_list(tensors)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
