// to_yaml: a JSON value written as block-style YAML, for manifests people read and edit.
//
// Scalars are written as JSON writes them (YAML 1.2 is a superset of JSON): numbers, true,
// false, null, and strings double-quoted and escaped, except strings that cannot be misread
// (names, paths, label keys: letters, digits, '_', '.', '/', '-', not starting with a digit,
// and not a word such as "no" or "on" that YAML 1.1 readers take for a boolean), which stand
// bare. Mappings are "key: value" lines, sequences "- item" lines, two spaces per level,
// empty ones {} and [].
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace troupe::deploy {

std::string to_yaml(const nlohmann::ordered_json& value);

}  // namespace troupe::deploy
