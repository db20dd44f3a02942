// Strict JSON parsing for configuration text (cluster specs, TF_CONFIG).
//
// Internal to troupe_graph's sources: it exposes nlohmann::json, which troupe_graph links
// privately, so headers of other layers must not include it.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// Parses `text` as one JSON value. Unlike nlohmann's default, which keeps the last of
// repeated keys, a key given twice in one object is an error (a job listed twice in a cluster
// is a mistake, not an override). InvalidArgument naming the position of a syntax error, or
// the repeated key and the object holding it.
StatusOr<nlohmann::json> parse_json_strict(std::string_view text);

// "object", "array", "string", "number", "boolean" or "null", for error messages.
std::string_view json_type_name(const nlohmann::json& value);

}  // namespace troupe
