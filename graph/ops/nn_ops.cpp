// Neural-network ops: definitions (dtypes, shape functions) and builders.
#include "troupe/graph/ops/nn_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status bias_add_shape(InferenceContext& c) {
  const PartialShape& value = c.input(0);
  const PartialShape& bias = c.input(1);
  if (value.rank_known() && value.rank() < 2) {
    return c.invalid("value must have rank >= 2, got shape {}", value.to_string());
  }
  if (bias.rank_known() && bias.rank() != 1) {
    return c.invalid("bias must be a vector, got shape {}", bias.to_string());
  }
  if (value.rank_known() && bias.rank_known()) {
    int64_t channels = value.dim(value.rank() - 1), size = bias.dim(0);
    if (channels >= 0 && size >= 0 && channels != size) {
      return c.invalid("bias has {} elements but value's last dimension is {}", size, channels);
    }
    std::vector<int64_t> dims = value.dims();
    if (dims.back() < 0) dims.back() = size;
    c.set_output(0, PartialShape(dims));
    return Status::OK();
  }
  c.set_output(0, value);
  return Status::OK();
}

Status softmax_shape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() < 1) {
    return c.invalid("logits must have rank >= 1, got a scalar");
  }
  return shapes::unchanged(c);
}

Status sparse_xent_shape(InferenceContext& c) {
  const PartialShape& features = c.input(0);
  const PartialShape& labels = c.input(1);
  if (features.rank_known() && features.rank() != 2) {
    return c.invalid("features must be [batch, classes], got shape {}", features.to_string());
  }
  if (labels.rank_known() && labels.rank() != 1) {
    return c.invalid("labels must be [batch], got shape {}", labels.to_string());
  }
  int64_t batch = features.rank_known() ? features.dim(0) : -1;
  int64_t classes = features.rank_known() ? features.dim(1) : -1;
  if (labels.rank_known()) {
    int64_t label_batch = labels.dim(0);
    if (batch >= 0 && label_batch >= 0 && batch != label_batch) {
      return c.invalid("features have batch {} but labels have {}", batch, label_batch);
    }
    if (batch < 0) batch = label_batch;
  }
  c.set_output(0, PartialShape({batch}));
  c.set_output(1, PartialShape({batch, classes}));
  return Status::OK();
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  // Local response normalization across the last (depth) dimension of a 4-D input:
  // output = input / (bias + alpha * sum of squares within depth_radius) ** beta.
  for (const char* name : {"LRN", "LRNGrad"}) {
    OpDefBuilder op(name);
    if (std::string_view(name) == "LRN") {
      op.input("input: T");
    } else {
      op.input("input_grads: T").input("input_image: T").input("output_image: T");
    }
    must_register(r, op.output("output: T")
                         .attr("depth_radius: int = 5")
                         .attr("bias: float = 1.0")
                         .attr("alpha: float = 1.0")
                         .attr("beta: float = 0.5")
                         .attr("T: {float32, float64} = float32")
                         .shape_fn([](InferenceContext& c) -> Status {
                           for (int i = 0; i < c.num_inputs(); ++i) {
                             if (c.input(i).rank_known() && c.input(i).rank() != 4) {
                               return c.invalid("input must be 4-dimensional, got shape {}",
                                                c.input(i).to_string());
                             }
                           }
                           c.set_output(0, c.input(0));
                           return Status::OK();
                         }));
  }
  must_register(r, OpDefBuilder("BiasAdd")
                       .input("value: T")
                       .input("bias: T")
                       .output("output: T")
                       .attr("T: {float32, float64, int32, int64}")
                       .shape_fn(bias_add_shape));
  must_register(r, OpDefBuilder("Relu")
                       .input("features: T")
                       .output("activations: T")
                       .attr("T: {float32, float64, int32, int64}")
                       .shape_fn(shapes::unchanged));
  for (const char* name : {"Sigmoid", "Tanh"}) {
    must_register(r, OpDefBuilder(name)
                         .input("x: T")
                         .output("y: T")
                         .attr("T: {float32, float64}")
                         .shape_fn(shapes::unchanged));
  }
  must_register(r, OpDefBuilder("Softmax")
                       .input("logits: T")
                       .output("softmax: T")
                       .attr("T: {float32, float64}")
                       .shape_fn(softmax_shape));
  must_register(r, OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                       .input("features: T")
                       .input("labels: Tlabels")
                       .output("loss: T")
                       .output("backprop: T")
                       .attr("T: {float32, float64}")
                       .attr("Tlabels: {int32, int64} = int64")
                       .shape_fn(sparse_xent_shape));
}

namespace ops {

Output BiasAdd(const Scope& s, const Input& value, const Input& bias) {
  return NodeBuilder(s, "BiasAdd").input(value).input(bias).finalize();
}
Output Relu(const Scope& s, const Input& features) {
  return NodeBuilder(s, "Relu").input(features).finalize();
}
Output Sigmoid(const Scope& s, const Input& x) {
  return NodeBuilder(s, "Sigmoid").input(x).finalize();
}
Output Tanh(const Scope& s, const Input& x) {
  return NodeBuilder(s, "Tanh").input(x).finalize();
}
Output Softmax(const Scope& s, const Input& logits) {
  return NodeBuilder(s, "Softmax").input(logits).finalize();
}

SoftmaxCrossEntropy SparseSoftmaxCrossEntropyWithLogits(const Scope& s, const Input& features,
                                                        const Input& labels) {
  Operation op = NodeBuilder(s, "SparseSoftmaxCrossEntropyWithLogits")
                     .input(features)
                     .input(labels)
                     .finalize();
  if (!op.valid()) return {};
  return {Output(op, 0), Output(op, 1)};
}

}  // namespace ops
}  // namespace troupe
