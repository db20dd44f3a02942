// Log lines of troupe's libraries: what a running task tells its operator that is not an answer
// to a call (a peer lost or back, a session recovered, junk refused on a port). Each is one line
// on std::cerr,
//
//   2026-11-25 14:03:07.512 warning troupe: /job:ps/replica:0/task:0 at ps0:2222 is lost: ...
//
// local time to the millisecond, the level, then the message. A line below the process's level
// is dropped before it is formatted. The level starts as $TROUPE_LOG_LEVEL (debug, info,
// warning, error or off), or info; the commands' --log_level sets it. Thread-safe: lines from
// several threads are never interleaved within a line.
//
// A command's own messages ("troupe train: test accuracy ...") are its output, not log lines.
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "troupe/graph/core/status.hpp"

namespace troupe {

enum class LogLevel { kDebug, kInfo, kWarning, kError, kOff };

// "debug", "info", "warning" ("warn"), "error" or "off"; InvalidArgument naming `name` and the
// accepted names otherwise.
StatusOr<LogLevel> parse_log_level(std::string_view name);
std::string_view log_level_name(LogLevel level);

// The process's level: lines below it are dropped.
LogLevel log_level();
void set_log_level(LogLevel level);

// Writes `message` as one line at `level`, if the process's level lets it through.
void write_log(LogLevel level, std::string_view message);

template <typename... Args>
void log_at(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < log_level()) return;
  write_log(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  log_at(LogLevel::kDebug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  log_at(LogLevel::kInfo, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_warning(fmt::format_string<Args...> format, Args&&... args) {
  log_at(LogLevel::kWarning, format, std::forward<Args>(args)...);
}
template <typename... Args>
void log_error(fmt::format_string<Args...> format, Args&&... args) {
  log_at(LogLevel::kError, format, std::forward<Args>(args)...);
}

}  // namespace troupe
