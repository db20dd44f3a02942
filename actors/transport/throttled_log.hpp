// ThrottledLog: one kind of event that a stranger can repeat at will (a refused connection, a
// failed handshake), logged as a warning at most once per interval, with how many there were.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "troupe/graph/core/logging.hpp"

namespace troupe {

class ThrottledLog {
 public:
  explicit ThrottledLog(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // Counts the event; logs <line> as a warning if the last line is older than the interval.
  void note(const std::string& line) {
    std::lock_guard lock(mutex_);
    ++since_last_;
    auto now = std::chrono::steady_clock::now();
    if (ever_ && now - last_ < interval_) return;
    if (since_last_ > 1) {
      log_warning("{} ({} times since the last line)", line, since_last_);
    } else {
      log_warning("{}", line);
    }
    since_last_ = 0;
    last_ = now;
    ever_ = true;
  }

 private:
  const std::chrono::steady_clock::duration interval_;
  std::mutex mutex_;
  uint64_t since_last_ = 0;
  std::chrono::steady_clock::time_point last_;
  bool ever_ = false;
};

}  // namespace troupe
