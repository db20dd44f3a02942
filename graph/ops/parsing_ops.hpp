// Builders for the ops that parse records: ParseExample (tf.train.Example protos into dense
// tensors and sparse components, as TensorFlow 1.x's) and DecodeRaw (the bytes of strings as
// numbers).
#pragma once

#include <string>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

struct ParseExampleResult {
  std::vector<Output> sparse_indices, sparse_values, sparse_shapes, dense_values;
};

// `serialized`: a vector of Examples. Each dense key gets [batch] + its shape (its default,
// if the default has elements, where a record lacks it); each sparse key gets
// (indices [n, 2], values [n], shape [batch, longest]).
ParseExampleResult ParseExample(const Scope& scope, Input serialized,
                                const std::vector<std::string>& sparse_keys,
                                const std::vector<DataType>& sparse_types,
                                const std::vector<std::string>& dense_keys,
                                const std::vector<Input>& dense_defaults,
                                const std::vector<PartialShape>& dense_shapes);

Output DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian = true);

}  // namespace troupe::ops
