// ProgressMeter: how fast a job moves and when it will be done, from reports of the step it has
// reached — the "[0:12<0:14, 37.5 steps/s]" part of `troupe launch`'s progress bar and of
// `troupe train`'s progress lines (tqdm's convention: elapsed<remaining, rate).
//
// The rate is measured from the first report on, so that a job restored at step 4000 is not
// credited with 4000 steps in its first second; a report below the first (a chief restarted
// from an older checkpoint) starts the measurement again.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace troupe {

class ProgressMeter {
 public:
  using Clock = std::chrono::steady_clock;

  // `start`: when the job started, for the elapsed time.
  explicit ProgressMeter(Clock::time_point start = Clock::now()) : start_(start) {}

  // Step `current` was reached at `now`.
  void update(int64_t current, Clock::time_point now = Clock::now());

  // Steps per second since the first report; nullopt until a later report shows progress.
  std::optional<double> steps_per_second() const;

  // "[0:12<0:14, 37.5 steps/s]" for a job of `total` steps, with ", 4.80k examples/s" added
  // when `examples_per_step` > 0. Before the rate is known: "[0:12<?, ? steps/s]".
  std::string summary(int64_t total, int64_t examples_per_step = 0) const;

 private:
  Clock::time_point start_;
  std::optional<std::pair<int64_t, Clock::time_point>> first_;  // the rate's baseline
  int64_t current_ = 0;
  Clock::time_point now_;
};

// "0:07", "12:34", "1:02:03" (hours, then minutes and seconds); negative as "0:00".
std::string format_duration(std::chrono::seconds duration);

// Three significant digits, with k, M or G for thousands, millions, billions: "0.512", "37.5",
// "480", "4.80k", "12.3M".
std::string format_rate(double value);

}  // namespace troupe
