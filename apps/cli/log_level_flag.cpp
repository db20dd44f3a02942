// --log_level: from the flag to the process's log level and its children's environment.
#include "troupe/apps/cli/log_level_flag.hpp"

#include <cstdlib>
#include <iostream>

#include "troupe/graph/core/logging.hpp"

namespace troupe::cli {

void add_log_level_flag(FlagSet& flags) {
  const char* env = std::getenv("TROUPE_LOG_LEVEL");
  flags.add_string("log_level", env != nullptr && *env != '\0' ? env : "info",
                   "log lines shown: debug, info, warning, error or off "
                   "(default: $TROUPE_LOG_LEVEL, else info)");
}

std::optional<int> apply_log_level_flag(const FlagSet& flags, const std::string& command) {
  std::string name = flags.get_string("log_level");
  auto level = parse_log_level(name);
  if (!level.ok()) {
    std::cerr << "troupe " << command << ": --log_level: " << level.status().message() << "\n";
    return 2;
  }
  set_log_level(*level);
  ::setenv("TROUPE_LOG_LEVEL", std::string(log_level_name(*level)).c_str(), 1);
  return std::nullopt;
}

}  // namespace troupe::cli
