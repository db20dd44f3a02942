// Log lines (graph/core/logging.hpp), written by spdlog: it formats the time and level and keeps
// concurrent lines whole, which troupe would otherwise write by hand.
#include "troupe/graph/core/logging.hpp"

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

namespace troupe {
namespace {

constexpr std::pair<std::string_view, LogLevel> kLevelNames[] = {
    {"debug", LogLevel::kDebug},  {"info", LogLevel::kInfo},   {"warning", LogLevel::kWarning},
    {"warn", LogLevel::kWarning}, {"error", LogLevel::kError}, {"off", LogLevel::kOff},
};

LogLevel initial_level() {
  const char* name = std::getenv("TROUPE_LOG_LEVEL");
  if (name == nullptr || *name == '\0') return LogLevel::kInfo;
  auto level = parse_log_level(name);
  if (level.ok()) return *level;
  std::cerr << "troupe: ignoring $TROUPE_LOG_LEVEL: " + level.status().message() + "\n";
  return LogLevel::kInfo;
}

std::atomic<LogLevel>& level_setting() {
  static std::atomic<LogLevel> level{initial_level()};
  return level;
}

spdlog::logger& logger() {
  // The sink holds std::cerr itself, not its buffer: a program (or test) that points std::cerr
  // elsewhere gets the lines there.
  static spdlog::logger instance = [] {
    spdlog::logger made("troupe",
                        std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cerr, true));
    made.set_pattern("%Y-%m-%d %H:%M:%S.%e %l troupe: %v");
    made.set_level(spdlog::level::trace);  // filtered by level_setting() before formatting
    return made;
  }();
  return instance;
}

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      break;
  }
  return spdlog::level::off;
}

}  // namespace

StatusOr<LogLevel> parse_log_level(std::string_view name) {
  for (const auto& [known, level] : kLevelNames) {
    if (name == known) return level;
  }
  return errors::InvalidArgument(
      "unknown log level '{}' (expected debug, info, warning, error "
      "or off)",
      name);
}

std::string_view log_level_name(LogLevel level) {
  for (const auto& [name, known] : kLevelNames) {
    if (level == known) return name;
  }
  return "unknown";
}

LogLevel log_level() {
  return level_setting().load(std::memory_order_relaxed);
}

void set_log_level(LogLevel level) {
  level_setting().store(level, std::memory_order_relaxed);
}

void write_log(LogLevel level, std::string_view message) {
  if (level < log_level() || level == LogLevel::kOff) return;
  logger().log(spdlog_level(level), message);
}

}  // namespace troupe
