// AttrValue: the value of a node attribute (an int, a dtype, a shape, a tensor, lists...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/core/types.hpp"

namespace troupe {

// The kinds an attribute can be; the names are those used in op definitions ("list(int)").
enum class AttrType {
  kNone,
  kInt,
  kFloat,
  kBool,
  kString,
  kType,
  kShape,
  kTensor,
  kListInt,
  kListFloat,
  kListBool,
  kListString,
  kListType,
  kListShape,
};

std::string_view attr_type_name(AttrType type);

class AttrValue {
 public:
  using Storage =
      std::variant<std::monostate, int64_t, float, bool, std::string, DataType, PartialShape,
                   Tensor, std::vector<int64_t>, std::vector<float>, std::vector<bool>,
                   std::vector<std::string>, std::vector<DataType>, std::vector<PartialShape>>;

  AttrValue() = default;
  AttrValue(int value) : value_(int64_t{value}) {}              // NOLINT: attrs read like literals
  AttrValue(int64_t value) : value_(value) {}                   // NOLINT
  AttrValue(float value) : value_(value) {}                     // NOLINT
  AttrValue(bool value) : value_(value) {}                      // NOLINT
  AttrValue(const char* value) : value_(std::string(value)) {}  // NOLINT
  AttrValue(std::string value) : value_(std::move(value)) {}    // NOLINT
  AttrValue(DataType value) : value_(value) {}                  // NOLINT
  AttrValue(PartialShape value) : value_(std::move(value)) {}   // NOLINT
  AttrValue(const TensorShape& value) : value_(PartialShape(value)) {}      // NOLINT
  AttrValue(Tensor value) : value_(std::move(value)) {}                     // NOLINT
  AttrValue(std::vector<int64_t> value) : value_(std::move(value)) {}       // NOLINT
  AttrValue(std::vector<float> value) : value_(std::move(value)) {}         // NOLINT
  AttrValue(std::vector<bool> value) : value_(std::move(value)) {}          // NOLINT
  AttrValue(std::vector<std::string> value) : value_(std::move(value)) {}   // NOLINT
  AttrValue(std::vector<DataType> value) : value_(std::move(value)) {}      // NOLINT
  AttrValue(std::vector<PartialShape> value) : value_(std::move(value)) {}  // NOLINT

  AttrType type() const { return static_cast<AttrType>(value_.index()); }

  template <class T>
  bool holds() const {
    return std::holds_alternative<T>(value_);
  }
  template <class T>
  const T& get() const {
    return std::get<T>(value_);
  }
  const Storage& storage() const { return value_; }

  // A short human-readable form, e.g. "float32", "[2,3]", "[1, 2]".
  std::string to_string() const;

  // Equal kinds and values; tensors compare by content.
  bool operator==(const AttrValue& other) const;

 private:
  Storage value_;
};

// Attributes of a node, ordered by name (so equal nodes serialise identically).
using AttrMap = std::map<std::string, AttrValue>;

}  // namespace troupe
