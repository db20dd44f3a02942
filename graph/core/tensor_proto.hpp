// TensorFlow's protobuf messages for tensors, encoded by hand (graph/core/protobuf_wire.hpp),
// for what troupe writes in TensorFlow's formats (summaries, graphs in event files):
//   TensorShapeProto { repeated Dim dim = 2; bool unknown_rank = 3; }
//     Dim { int64 size = 1; }                       (-1: unknown)
//   TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2;
//                 bytes tensor_content = 4;          (numbers, little-endian, row-major)
//                 repeated bytes string_val = 8; }   (strings)
#pragma once

#include <string>

#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// TensorFlow's DataType enum number: DT_FLOAT 1, DT_DOUBLE 2, DT_INT32 3, DT_UINT8 4,
// DT_STRING 7, DT_INT64 9, DT_BOOL 10 (0 for kInvalid).
int tensorflow_dtype_number(DataType dtype);

std::string encode_tensor_shape_proto(const PartialShape& shape);
std::string encode_tensor_proto(const Tensor& tensor);

}  // namespace troupe
