// ThrottledLog: one kind of event that a stranger can repeat at will (a refused connection, a
// failed handshake), logged to stderr at most once per interval, with how many there were.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>

namespace troupe {

class ThrottledLog {
 public:
  explicit ThrottledLog(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // Counts the event; writes "troupe: <line>" if the last line is older than the interval.
  void note(const std::string& line) {
    std::lock_guard lock(mutex_);
    ++since_last_;
    auto now = std::chrono::steady_clock::now();
    if (ever_ && now - last_ < interval_) return;
    std::cerr << "troupe: " << line
              << (since_last_ > 1
                      ? " (" + std::to_string(since_last_) + " times since the last line)"
                      : std::string())
              << std::endl;
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
