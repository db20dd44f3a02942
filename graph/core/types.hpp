// DataType: the element types a tensor can hold, their names and C++ counterparts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

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
  kUint8 = 7,  // images and raw bytes: fed, decoded, moved, stored and cast; no arithmetic
};

inline constexpr int kNumDataTypes = 8;

// "float32", "float64", "int32", "int64", "bool", "string", "uint8" (TensorFlow's Python names).
std::string_view dtype_name(DataType dtype);

// Parses a name as above; also accepts "float" and "double".
StatusOr<DataType> parse_dtype(std::string_view name);

// Bytes per element; 0 for string (elements are std::string objects) and invalid.
size_t dtype_size(DataType dtype);

bool dtype_is_numeric(DataType dtype);   // float, double, int32, int64, uint8
bool dtype_is_floating(DataType dtype);  // float, double
bool dtype_is_integer(DataType dtype);   // int32, int64, uint8

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
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUint8;
};
template <>
struct DataTypeOf<std::string> {
  static constexpr DataType value = DataType::kString;
};

template <class T>
inline constexpr DataType dtype_of = DataTypeOf<T>::value;

// One element converted as a cast converts it: static_cast, except that a float becomes a
// uint8 through int64 (the low byte of its integer part, as TensorFlow's x86 kernels give,
// 0 for NaN and values beyond int64), where a plain static_cast out of 0..255 is undefined.
template <class To, class From>
To convert_element(From value) {
  if constexpr (std::is_same_v<To, uint8_t> && std::is_floating_point_v<From>) {
    constexpr From kLimit = static_cast<From>(9223372036854775807.0);
    if (!(value > -kLimit && value < kLimit)) return 0;
    return static_cast<uint8_t>(static_cast<int64_t>(value));
  } else {
    return static_cast<To>(value);
  }
}

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

// The numeric types and uint8: what TensorFlow's CPU kernels of Add, Sub, Mul, Div, FloorDiv
// and the order comparisons take among troupe's dtypes.
#define TROUPE_SWITCH_NUMERIC_OR_UINT8(DTYPE, T, ...)                      \
  switch (DTYPE) {                                                         \
    TROUPE_CASE_DTYPE(::troupe::DataType::kFloat, float, T, __VA_ARGS__)   \
    TROUPE_CASE_DTYPE(::troupe::DataType::kDouble, double, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt32, int32_t, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kInt64, int64_t, T, __VA_ARGS__) \
    TROUPE_CASE_DTYPE(::troupe::DataType::kUint8, uint8_t, T, __VA_ARGS__) \
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
    TROUPE_CASE_DTYPE(::troupe::DataType::kUint8, uint8_t, T, __VA_ARGS__) \
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
    TROUPE_CASE_DTYPE(::troupe::DataType::kUint8, uint8_t, T, __VA_ARGS__)      \
    default:                                                                    \
      break;                                                                    \
  }
