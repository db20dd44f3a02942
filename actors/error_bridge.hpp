// Status <-> caf::error: how troupe's errors cross actor messages unchanged.
//
// A Status travels as a caf::error of category "troupe" whose code is the Status code and whose
// context is the message. Errors CAF raises itself (timeouts, dead actors) map to the nearest
// TensorFlow code.
#pragma once

#include <string_view>

#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// The category atom of troupe errors.
inline constexpr caf::atom_value kErrorCategory = caf::atom("troupe");

// Requires !status.ok().
caf::error to_caf_error(const Status& status);

// Maps any caf::error to a Status; `context` (e.g. "run_partition on /job:w/.../CPU:0") is
// prefixed to errors that CAF raised, so the reader learns which hop failed.
Status from_caf_error(const caf::error& error, std::string_view context = {});

// Lets the actor system render troupe errors in its logs.
void register_error_category(caf::actor_system_config& config);

}  // namespace troupe
