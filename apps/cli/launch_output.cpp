// Line splitting and the progress protocol of `troupe launch`.
#include "troupe/apps/cli/launch_output.hpp"

#include <charconv>

#include <fmt/format.h>

namespace troupe::cli {
namespace {

constexpr std::string_view kProgressWord = "troupe-progress";
constexpr int kBarCells = 20;

// Skips one or more spaces at the front of `text`; false if there is none.
bool skip_spaces(std::string_view& text) {
  size_t n = text.find_first_not_of(' ');
  if (n == 0) return false;
  text.remove_prefix(n == std::string_view::npos ? text.size() : n);
  return true;
}

// Reads a decimal int64 at the front of `text`.
std::optional<int64_t> take_int(std::string_view& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(end - text.data());
  return value;
}

}  // namespace

std::vector<std::string> LineSplitter::append(std::string_view data) {
  std::vector<std::string> lines;
  while (!data.empty()) {
    size_t newline = data.find('\n');
    size_t take = newline == std::string_view::npos ? data.size() : newline;
    take = std::min(take, kMaxLine - pending_.size());
    pending_.append(data.substr(0, take));
    data.remove_prefix(take);
    bool ended = !data.empty() && data.front() == '\n';
    if (ended) data.remove_prefix(1);
    if (ended || pending_.size() == kMaxLine) {
      lines.push_back(std::move(pending_));
      pending_.clear();
    }
  }
  return lines;
}

std::optional<std::string> LineSplitter::take_rest() {
  if (pending_.empty()) return std::nullopt;
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

int Progress::percent() const {
  if (total <= 0) return 0;
  return static_cast<int>(static_cast<__int128>(current) * 100 / total);
}

std::optional<Progress> parse_progress(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.substr(0, kProgressWord.size()) != kProgressWord) return std::nullopt;
  line.remove_prefix(kProgressWord.size());
  Progress progress;
  if (!skip_spaces(line)) return std::nullopt;
  auto current = take_int(line);
  if (!current || !skip_spaces(line)) return std::nullopt;
  auto total = take_int(line);
  if (!total || (!line.empty() && !skip_spaces(line))) return std::nullopt;
  if (*current < 0 || *total <= 0 || *current > *total) return std::nullopt;
  progress.current = *current;
  progress.total = *total;
  progress.text = std::string(line);
  return progress;
}

std::string progress_bar(const Progress& progress, std::string_view timing, size_t width) {
  int filled = static_cast<int>(static_cast<__int128>(progress.current) * kBarCells /
                                std::max<int64_t>(progress.total, 1));
  std::string bar = fmt::format("[{}{}] {:>3}% {}/{}", std::string(filled, '#'),
                                std::string(kBarCells - filled, '-'), progress.percent(),
                                progress.current, progress.total);
  if (!timing.empty()) bar += fmt::format(" {}", timing);
  if (!progress.text.empty()) bar += " " + progress.text;
  if (bar.size() > width) {
    size_t cut = width;
    // Do not split a UTF-8 character: back off over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(bar[cut]) & 0xC0) == 0x80)
      --cut;
    bar.resize(cut);
  }
  return bar;
}

std::string progress_log_line(const Progress& progress, std::string_view timing) {
  std::string line =
      fmt::format("progress: {}/{} ({}%)", progress.current, progress.total, progress.percent());
  if (!timing.empty()) line += fmt::format(" {}", timing);
  if (!progress.text.empty()) line += " " + progress.text;
  return line;
}

bool ProgressThrottle::should_print(const Progress& progress) {
  int step = progress.percent() / 10;
  if (progress.total == total_ && step == step_) return false;
  total_ = progress.total;
  step_ = step;
  return true;
}

}  // namespace troupe::cli
