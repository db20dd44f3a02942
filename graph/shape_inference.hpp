// Shape inference: what an op's shape function sees (InferenceContext) and the shape
// functions many ops share (namespace shapes).
//
// Shape functions run when a node is added to a Graph. They check what can be checked before
// anything runs (ranks, matching dimensions, broadcastability) and report problems as
// InvalidArgument naming the node.
#pragma once

#include <string_view>
#include <vector>

#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/graph_def.hpp"

namespace troupe {

class InferenceContext {
 public:
  InferenceContext(const NodeDef& node, std::vector<DataType> input_dtypes,
                   std::vector<PartialShape> input_shapes, std::vector<const Tensor*> input_values,
                   int num_outputs);

  const NodeDef& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(input_shapes_.size()); }
  const PartialShape& input(int i) const { return input_shapes_[i]; }
  DataType input_dtype(int i) const { return input_dtypes_[i]; }
  // The value of input `i` when it is produced by a Const node, else nullptr.
  const Tensor* input_value(int i) const { return input_values_[i]; }

  // An attribute the op declares; defaults are filled in before shape functions run, so a
  // declared attribute is always present with the declared kind.
  template <class T>
  const T& attr(std::string_view name) const {
    return node_.find_attr(name)->get<T>();
  }

  int num_outputs() const { return static_cast<int>(output_shapes_.size()); }
  void set_output(int i, PartialShape shape) { output_shapes_[i] = std::move(shape); }
  std::vector<PartialShape> take_outputs() { return std::move(output_shapes_); }

  // InvalidArgument prefixed with "node 'name' (Op): ".
  template <class... Args>
  Status invalid(fmt::format_string<Args...> format, Args&&... args) const {
    return errors::InvalidArgument("node '{}' ({}): {}", node_.name, node_.op,
                                   fmt::format(format, std::forward<Args>(args)...));
  }

  // The known value of a rank-1 integer input (e.g. a shape or axes), or nullopt.
  std::optional<std::vector<int64_t>> input_as_ints(int i) const;

 private:
  const NodeDef& node_;
  std::vector<DataType> input_dtypes_;
  std::vector<PartialShape> input_shapes_;
  std::vector<const Tensor*> input_values_;
  std::vector<PartialShape> output_shapes_;
};

namespace shapes {

// Output 0 has the shape of input 0.
Status unchanged(InferenceContext& c);
// Every output has an unknown shape.
Status unknown(InferenceContext& c);
// No outputs to describe.
Status no_outputs(InferenceContext& c);
// Output 0 is a scalar.
Status scalar(InferenceContext& c);
// Output 0 is the numpy broadcast of inputs 0 and 1.
Status broadcast_binary(InferenceContext& c);
// Inputs 0 and 1 must have compatible shapes; output 0 has the merged shape.
Status merge_binary(InferenceContext& c);

// numpy broadcasting of two partial shapes; InvalidArgument (without node context) if some
// pair of known dimensions differs and neither is 1.
StatusOr<PartialShape> broadcast(const PartialShape& a, const PartialShape& b);

}  // namespace shapes
}  // namespace troupe
