// parse_json_strict: nlohmann::json parsing that rejects repeated object keys.
#include "troupe/graph/cluster/json_parse.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace troupe {
namespace {

// One open object or array while parsing.
struct Frame {
  bool is_object = false;
  std::string name;  // where it sits: "" at the top, else the key (or "key[]") holding it
  std::set<std::string> keys;
  std::string last_key;
};

std::string describe(const std::string& name) {
  return name.empty() ? std::string("the top-level object") : fmt::format("object '{}'", name);
}

}  // namespace

StatusOr<nlohmann::json> parse_json_strict(std::string_view text) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<Frame> stack;
  std::optional<Status> duplicate;
  auto callback = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        std::string name;
        if (!stack.empty()) {
          name = stack.back().is_object ? stack.back().last_key : stack.back().name + "[]";
        }
        stack.push_back(Frame{event == Event::object_start, std::move(name), {}, {}});
        break;
      }
      case Event::object_end:
      case Event::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Event::key: {
        if (stack.empty() || !parsed.is_string()) break;
        auto key = parsed.get<std::string>();
        Frame& frame = stack.back();
        if (!frame.keys.insert(key).second && !duplicate) {
          duplicate = errors::InvalidArgument(
              "invalid JSON: key '{}' appears twice in {} (expected each key once)", key,
              describe(frame.name));
        }
        frame.last_key = std::move(key);
        break;
      }
      case Event::value:
        break;
    }
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    // what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    std::string_view what = e.what();
    if (size_t close = what.find("] "); what.starts_with("[json.") && close != what.npos) {
      what.remove_prefix(close + 2);
    }
    return errors::InvalidArgument("invalid JSON: {}", what);
  }
  if (duplicate) return *duplicate;
  return value;
}

std::string_view json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      return "object";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "number";
    case nlohmann::json::value_t::null:
      return "null";
    default:
      return "binary or discarded value";
  }
}

}  // namespace troupe
