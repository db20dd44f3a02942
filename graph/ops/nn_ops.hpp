// Builders for neural-network ops: activations, bias, softmax and its cross-entropy.
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// value + bias along the last dimension; bias is a vector of that size.
Output BiasAdd(const Scope& scope, const Input& value, const Input& bias);
Output Relu(const Scope& scope, const Input& features);
Output Sigmoid(const Scope& scope, const Input& x);
Output Tanh(const Scope& scope, const Input& x);
// Softmax over the last dimension.
Output Softmax(const Scope& scope, const Input& logits);

struct SoftmaxCrossEntropy {
  Output loss;      // [batch]
  Output backprop;  // [batch, classes]: softmax(features) - one_hot(labels)
};
// features: [batch, classes] logits; labels: [batch] class indices (int32 or int64) in
// [0, classes). A label out of range is an InvalidArgument error at run time.
SoftmaxCrossEntropy SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, const Input& features,
                                                        const Input& labels);

}  // namespace troupe::ops
