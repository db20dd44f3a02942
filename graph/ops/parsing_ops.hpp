// Builders for the ops that parse records: ParseExample (tf.train.Example protos into dense
// tensors and sparse components, as TensorFlow 1.x's), DecodeCSV (CSV records into columns),
// StringSplit (text into tokens) and DecodeRaw (the bytes of strings as numbers).
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

// tf.decode_csv: one output per column (or per selected column), each of the shape of
// `records`, of the dtype of its default (float32, float64, int32, int64 or string). A default is
// a scalar or a one-value vector, or an empty vector for a required column. Fields are RFC 4180
// (quotes escaped by doubling, unless use_quote_delim is false); an empty field or `na_value`
// takes the default.
struct DecodeCSVAttrs {
  std::string field_delim = ",";
  bool use_quote_delim = true;
  std::string na_value;
  std::vector<int64_t> select_cols;  // increasing column indices; empty: every column
};
std::vector<Output> DecodeCSV(const Scope& scope, Input records,
                              const std::vector<Input>& record_defaults,
                              const DecodeCSVAttrs& attrs = {});

// tf.string_split: the tokens of each string of the vector `input`, split at any character of
// the scalar `delimiter` (into single bytes when it is empty), as the components of a
// SparseTensor of shape [batch, most tokens]; empty tokens dropped if skip_empty.
struct StringSplitResult {
  Output indices, values, shape;
};
StringSplitResult StringSplit(const Scope& scope, Input input, Input delimiter,
                              bool skip_empty = true);

Output DecodeRaw(const Scope& scope, Input bytes, DataType out_type, bool little_endian = true);

}  // namespace troupe::ops
