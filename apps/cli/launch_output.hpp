// The output side of `troupe launch` (apps/cli/launch_command.cpp): splitting a task's output into
// whole lines, and the progress protocol — a task writes a line
//
//   troupe-progress <current> <total> [free text]
//
// and launch shows one progress bar for the job instead of echoing it — with its two
// renderings: a bar redrawn in place on a terminal, and a short log line otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe::cli {

// Splits a byte stream into lines.
class LineSplitter {
 public:
  // A line longer than this is handed on in pieces of this size, so a task that never ends its
  // line cannot grow launch's memory without bound.
  static constexpr size_t kMaxLine = 64 * 1024;

  // Appends `data`; returns the lines it completed, without their '\n'.
  std::vector<std::string> append(std::string_view data);
  // The unterminated rest, if any (a stream's last line without '\n'); clears it.
  std::optional<std::string> take_rest();

 private:
  std::string pending_;
};

// One progress report.
struct Progress {
  int64_t current = 0;  // 0 <= current <= total
  int64_t total = 1;    // > 0
  std::string text;     // may be empty

  // current / total in whole percent, rounded down: 0..100.
  int percent() const;
  bool operator==(const Progress&) const = default;
};

// `line` (without its '\n'; a trailing '\r' is ignored) as a progress report: the word
// "troupe-progress", then <current> and <total> as decimal int64 with 0 <= current <= total and
// total > 0, separated by spaces, then optionally spaces and free text. nullopt for anything
// else: the line is then ordinary output.
std::optional<Progress> parse_progress(std::string_view line);

// "[#########-----------]  45% 450/1000 TIMING text": a 20-cell bar, cut to at most `width`
// bytes (at a UTF-8 character boundary) so it never wraps on a terminal that wide. `timing`
// (ProgressMeter::summary: "[0:12<0:14, 37.5 steps/s]") and the text are left out when empty.
std::string progress_bar(const Progress& progress, std::string_view timing, size_t width);

// "progress: 450/1000 (45%) TIMING text", likewise.
std::string progress_log_line(const Progress& progress, std::string_view timing);

// Which reports a log gets: the first, then each one whose 10% step (0-9%, 10-19%, ..., 100%)
// or total differs from the last one printed — at most 11 lines while progress only grows.
class ProgressThrottle {
 public:
  bool should_print(const Progress& progress);

 private:
  int64_t total_ = -1;
  int step_ = -1;
};

}  // namespace troupe::cli
