// --log_level: which of the libraries' log lines (graph/core/logging.hpp) a command writes —
// debug, info, warning, error or off; default $TROUPE_LOG_LEVEL, else info. Applying it also
// sets TROUPE_LOG_LEVEL, so that the processes a command starts (`troupe launch`'s tasks) log at
// the same level.
#pragma once

#include <optional>
#include <string>

#include "troupe/apps/cli/flags.hpp"

namespace troupe::cli {

void add_log_level_flag(FlagSet& flags);

// Sets the process's log level from the flag. Returns nullopt to go on, or the exit code (2)
// after printing why an unknown level is refused.
std::optional<int> apply_log_level_flag(const FlagSet& flags, const std::string& command);

}  // namespace troupe::cli
