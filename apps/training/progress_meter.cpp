// ProgressMeter (apps/training/progress_meter.hpp).
#include "troupe/apps/training/progress_meter.hpp"

#include <cmath>

#include <fmt/format.h>

namespace troupe {

void ProgressMeter::update(int64_t current, Clock::time_point now) {
  if (!first_ || current < first_->first) first_ = {current, now};
  current_ = current;
  now_ = now;
}

std::optional<double> ProgressMeter::steps_per_second() const {
  if (!first_ || current_ <= first_->first) return std::nullopt;
  double seconds = std::chrono::duration<double>(now_ - first_->second).count();
  if (seconds <= 0) return std::nullopt;
  return static_cast<double>(current_ - first_->first) / seconds;
}

std::string ProgressMeter::summary(int64_t total, int64_t examples_per_step) const {
  auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>((first_ ? now_ : Clock::now()) - start_);
  std::optional<double> rate = steps_per_second();
  if (!rate) return fmt::format("[{}<?, ? steps/s]", format_duration(elapsed));
  double left = static_cast<double>(std::max<int64_t>(total - current_, 0)) / *rate;
  std::string text = fmt::format(
      "[{}<{}, {} steps/s", format_duration(elapsed),
      format_duration(std::chrono::seconds(std::llround(std::min(left, 1e9)))), format_rate(*rate));
  if (examples_per_step > 0) {
    text +=
        fmt::format(", {} examples/s", format_rate(*rate * static_cast<double>(examples_per_step)));
  }
  return text + "]";
}

std::string format_duration(std::chrono::seconds duration) {
  int64_t total = std::max<int64_t>(duration.count(), 0);
  int64_t hours = total / 3600, minutes = total / 60 % 60, seconds = total % 60;
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, seconds);
  return fmt::format("{}:{:02}", minutes, seconds);
}

std::string format_rate(double value) {
  static constexpr const char* kSuffixes[] = {"", "k", "M", "G"};
  int suffix = 0;
  // Past 999.5 a value rounds to four digits: show it in the next unit instead.
  while (std::abs(value) >= 999.5 && suffix < 3) {
    value /= 1000;
    ++suffix;
  }
  double magnitude = std::abs(value);
  int decimals = magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
  return fmt::format("{:.{}f}{}", value, decimals, kSuffixes[suffix]);
}

}  // namespace troupe
