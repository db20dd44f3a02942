// AttrValue: names of attribute kinds, printing and comparison.
#include "troupe/graph/attr_value.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace troupe {

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kNone:
      return "none";
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kBool:
      return "bool";
    case AttrType::kString:
      return "string";
    case AttrType::kType:
      return "type";
    case AttrType::kShape:
      return "shape";
    case AttrType::kTensor:
      return "tensor";
    case AttrType::kListInt:
      return "list(int)";
    case AttrType::kListFloat:
      return "list(float)";
    case AttrType::kListBool:
      return "list(bool)";
    case AttrType::kListString:
      return "list(string)";
    case AttrType::kListType:
      return "list(type)";
    case AttrType::kListShape:
      return "list(shape)";
  }
  return "none";
}

std::string AttrValue::to_string() const {
  struct Printer {
    std::string operator()(std::monostate) const { return "<none>"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return fmt::format("{}", v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(DataType v) const { return std::string(dtype_name(v)); }
    std::string operator()(const PartialShape& v) const { return v.to_string(); }
    std::string operator()(const Tensor& v) const { return v.debug_string(); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const std::vector<float>& v) const {
      return fmt::format("[{}]", fmt::join(v, ", "));
    }
    std::string operator()(const std::vector<bool>& v) const {
      std::vector<std::string> words;
      for (bool b : v)
        words.push_back(b ? "true" : "false");
      return fmt::format("[{}]", fmt::join(words, ", "));
    }
    std::string operator()(const std::vector<std::string>& v) const {
      return fmt::format("[\"{}\"]", fmt::join(v, "\", \""));
    }
    std::string operator()(const std::vector<DataType>& v) const {
      std::vector<std::string_view> names;
      for (DataType t : v)
        names.push_back(dtype_name(t));
      return fmt::format("[{}]", fmt::join(names, ", "));
    }
    std::string operator()(const std::vector<PartialShape>& v) const {
      std::vector<std::string> shapes;
      for (const auto& s : v)
        shapes.push_back(s.to_string());
      return fmt::format("[{}]", fmt::join(shapes, ", "));
    }
  };
  return std::visit(Printer{}, value_);
}

bool AttrValue::operator==(const AttrValue& other) const {
  if (value_.index() != other.value_.index()) return false;
  return std::visit(
      [&](const auto& mine) {
        using T = std::decay_t<decltype(mine)>;
        const auto& theirs = std::get<T>(other.value_);
        if constexpr (std::is_same_v<T, Tensor>) {
          return mine.equals(theirs);
        } else if constexpr (std::is_same_v<T, std::monostate>) {
          return true;
        } else {
          return mine == theirs;
        }
      },
      value_);
}

}  // namespace troupe
