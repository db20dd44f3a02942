// NodeDef lookups and tensor-name parsing.
#include "troupe/graph/graph_def.hpp"

#include <charconv>

namespace troupe {

const AttrValue* NodeDef::find_attr(std::string_view key) const {
  auto it = attrs.find(std::string(key));
  return it == attrs.end() ? nullptr : &it->second;
}

std::string TensorId::to_string() const {
  if (is_control()) return "^" + node;
  if (index == 0) return node;
  return node + ":" + std::to_string(index);
}

StatusOr<TensorId> parse_tensor_id(std::string_view text) {
  if (!text.empty() && text[0] == '^') {
    if (text.size() == 1 || text.find(':') != std::string_view::npos) {
      return errors::InvalidArgument("control input '{}' must be '^node_name'", text);
    }
    return TensorId{std::string(text.substr(1)), -1};
  }
  auto colon = text.rfind(':');
  std::string_view node = text.substr(0, colon);
  if (node.empty()) {
    return errors::InvalidArgument("tensor name '{}' has no node name", text);
  }
  if (colon == std::string_view::npos) return TensorId{std::string(text), 0};
  std::string_view digits = text.substr(colon + 1);
  int index = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0) {
    return errors::InvalidArgument("tensor name '{}': expected 'node' or 'node:output_index'",
                                   text);
  }
  return TensorId{std::string(node), index};
}

}  // namespace troupe
