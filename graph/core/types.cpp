// DataType names and sizes.
#include "troupe/graph/core/types.hpp"

namespace troupe {

std::string_view dtype_name(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return "float32";
    case DataType::kDouble:
      return "float64";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kBool:
      return "bool";
    case DataType::kString:
      return "string";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInvalid:
      break;
  }
  return "invalid";
}

StatusOr<DataType> parse_dtype(std::string_view name) {
  if (name == "float32" || name == "float") return DataType::kFloat;
  if (name == "float64" || name == "double") return DataType::kDouble;
  if (name == "int32") return DataType::kInt32;
  if (name == "int64") return DataType::kInt64;
  if (name == "bool") return DataType::kBool;
  if (name == "string") return DataType::kString;
  if (name == "uint8") return DataType::kUint8;
  return errors::InvalidArgument(
      "unknown dtype '{}': expected one of float32, float64, int32, int64, bool, string, uint8",
      name);
}

size_t dtype_size(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return sizeof(float);
    case DataType::kDouble:
      return sizeof(double);
    case DataType::kInt32:
      return sizeof(int32_t);
    case DataType::kInt64:
      return sizeof(int64_t);
    case DataType::kBool:
      return sizeof(bool);
    case DataType::kUint8:
      return sizeof(uint8_t);
    case DataType::kString:
    case DataType::kInvalid:
      break;
  }
  return 0;
}

bool dtype_is_floating(DataType dtype) {
  return dtype == DataType::kFloat || dtype == DataType::kDouble;
}

bool dtype_is_integer(DataType dtype) {
  return dtype == DataType::kInt32 || dtype == DataType::kInt64 || dtype == DataType::kUint8;
}

bool dtype_is_numeric(DataType dtype) {
  return dtype_is_floating(dtype) || dtype_is_integer(dtype);
}

}  // namespace troupe
