// DataType: the element types a tensor can hold, their names and C++ counterparts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// Numbers match wire::DataType (schema/tensor.capnp).
enum class DataType : uint8_t {
  kInvalid = 0,
  kFloat = 1,   // float32
  kDouble = 2,  // float64
  kInt32 = 3,
  kInt64 = 4,
  kBool = 5,
  kString = 6,
};

inline constexpr int kNumDataTypes = 7;

// "float32", "float64", "int32", "int64", "bool", "string" (TensorFlow's Python names).
std::string_view dtype_name(DataType dtype);

// Parses a name as above; also accepts "float" and "double".
StatusOr<DataType> parse_dtype(std::string_view name);

// Bytes per element; 0 for string (elements are std::string objects) and invalid.
size_t dtype_size(DataType dtype);

bool dtype_is_numeric(DataType dtype);   // float, double, int32, int64
bool dtype_is_floating(DataType dtype);  // float, double
bool dtype_is_integer(DataType dtype);   // int32, int64

// The C++ type for a DataType and back: DataTypeOf<float>::value == DataType::kFloat.
template <class T>
struct DataTypeOf;
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFloat;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kDouble;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};
template <>
struct DataTypeOf<std::string> {
  static constexpr DataType value = DataType::kString;
};

template <class T>
inline constexpr DataType dtype_of = DataTypeOf<T>::value;

}  // namespace troupe

// Calls BODY with `T` bound to the C++ type of DTYPE, for each listed case. Example:
//   TROUPE_SWITCH_NUMERIC(t.dtype(), T, return sum<T>(t));
// Falls through (does nothing) for types not listed.
#define TROUPE_CASE_DTYPE(DTYPE_ENUM, CPP_TYPE, T, ...) \
  case DTYPE_ENUM: {                                    \
    using T = CPP_TYPE;                                 \
    __VA_ARGS__;                                        \
    break;                                              \
  }

#define TROUPE_SWITCH_FLOATING(DTYPE, T, ...)                              \
  switch (DTYPE) {                                                         \
    TROUPE_CASE_DTYPE(::troupe::DataType::kFloat, float, T, __VA_ARGS__)   \
    TROUPE_CASE_DTYPE(::troupe::DataType::kDouble, double, T, __VA_ARGS__) \
    default:                                                               \
      break;                                                               \
  }

#define TROUPE_SWITCH_NUMERIC(DTYPE, T, ...)                               \
  switch (DTYPE) {                                                         \
    TROUPE_CASE_DTYPE(::troupe::DataType::kFloat, float, T, __VA_ARGS__)   \
    TROUPE_CASE_DTYPE(::troupe::DataType::kDouble, double, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt32, int32_t, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt64, int64_t, T, __VA_ARGS__) \
    default:                                                               \
      break;                                                               \
  }

#define TROUPE_SWITCH_NUMERIC_OR_BOOL(DTYPE, T, ...)                       \
  switch (DTYPE) {                                                         \
    TROUPE_CASE_DTYPE(::troupe::DataType::kFloat, float, T, __VA_ARGS__)   \
    TROUPE_CASE_DTYPE(::troupe::DataType::kDouble, double, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt32, int32_t, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt64, int64_t, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kBool, bool, T, __VA_ARGS__)     \
    default:                                                               \
      break;                                                               \
  }

#define TROUPE_SWITCH_ALL(DTYPE, T, ...)                                        \
  switch (DTYPE) {                                                              \
    TROUPE_CASE_DTYPE(::troupe::DataType::kFloat, float, T, __VA_ARGS__)        \
    TROUPE_CASE_DTYPE(::troupe::DataType::kDouble, double, T, __VA_ARGS__)      \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt32, int32_t, T, __VA_ARGS__)      \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt64, int64_t, T, __VA_ARGS__)      \
    TROUPE_CASE_DTYPE(::troupe::DataType::kBool, bool, T, __VA_ARGS__)          \
    TROUPE_CASE_DTYPE(::troupe::DataType::kString, std::string, T, __VA_ARGS__) \
    default:                                                                    \
      break;                                                                    \
  }
