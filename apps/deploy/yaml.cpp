// to_yaml: recursive block-style writer.
#include "troupe/apps/deploy/yaml.hpp"

#include <regex>

namespace troupe::deploy {
namespace {

using Json = nlohmann::ordered_json;

bool is_block(const Json& value) {
  return (value.is_object() || value.is_array()) && !value.empty();
}

// A string as it may stand unquoted (a name, a path, a label key), else quoted as JSON quotes
// it. Words YAML 1.1 readers take for booleans or null stay quoted.
std::string text_of(const std::string& text) {
  static const std::regex plain("[A-Za-z_/][A-Za-z0-9_./-]*");
  static const std::regex special("y|n|yes|no|on|off|true|false|null",
                                  std::regex::icase | std::regex::optimize);
  if (std::regex_match(text, plain) && !std::regex_match(text, special)) return text;
  return Json(text).dump();
}

std::string scalar_of(const Json& value) {
  return value.is_string() ? text_of(value.get<std::string>()) : value.dump();
}

void write(const Json& value, int indent, std::string& out);

// The entries of a non-empty mapping, the first one's indentation already written.
void write_mapping(const Json& mapping, int indent, std::string& out) {
  bool first = true;
  for (const auto& [key, item] : mapping.items()) {
    if (!first) out.append(static_cast<size_t>(indent), ' ');
    first = false;
    out += text_of(key);
    if (is_block(item)) {
      out += ":\n";
      write(item, indent + 2, out);
    } else {
      out += ": ";
      out += scalar_of(item);
      out += '\n';
    }
  }
}

// A block value at `indent`, starting on a fresh line.
void write(const Json& value, int indent, std::string& out) {
  if (value.is_object()) {
    out.append(static_cast<size_t>(indent), ' ');
    write_mapping(value, indent, out);
    return;
  }
  for (const Json& item : value) {
    out.append(static_cast<size_t>(indent), ' ');
    if (item.is_object() && !item.empty()) {
      out += "- ";
      write_mapping(item, indent + 2, out);
    } else if (is_block(item)) {
      out += "-\n";
      write(item, indent + 2, out);
    } else {
      out += "- ";
      out += scalar_of(item);
      out += '\n';
    }
  }
}

}  // namespace

std::string to_yaml(const Json& value) {
  if (!is_block(value)) return scalar_of(value) + "\n";
  std::string out;
  write(value, 0, out);
  return out;
}

}  // namespace troupe::deploy
