// TensorShapeProto and TensorProto encoding.
#include "troupe/graph/core/tensor_proto.hpp"

#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe {

int tensorflow_dtype_number(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return 1;
    case DataType::kDouble:
      return 2;
    case DataType::kInt32:
      return 3;
    case DataType::kString:
      return 7;
    case DataType::kInt64:
      return 9;
    case DataType::kBool:
      return 10;
    case DataType::kUint8:
      return 4;
    case DataType::kInvalid:
      break;
  }
  return 0;
}

std::string encode_tensor_shape_proto(const PartialShape& shape) {
  std::string out;
  if (!shape.rank_known()) {
    proto::put_int(out, 3, 1);
    return out;
  }
  for (int64_t d : shape.dims()) {
    std::string dim;
    proto::put_int(dim, 1, d);
    proto::put_bytes(out, 2, dim);
  }
  return out;
}

std::string encode_tensor_proto(const Tensor& t) {
  std::string out;
  proto::put_int(out, 1, tensorflow_dtype_number(t.dtype()));
  proto::put_bytes(out, 2, encode_tensor_shape_proto(PartialShape(t.shape())));
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.num_elements(); ++i)
      proto::put_bytes(out, 8, t.data<std::string>()[i]);
  } else if (t.total_bytes() > 0) {
    proto::put_bytes(out, 4,
                     std::string_view(static_cast<const char*>(t.raw_data()), t.total_bytes()));
  }
  return out;
}

}  // namespace troupe
