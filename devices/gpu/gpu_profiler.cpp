// GpuProfiler: events around launches, resolved in order as they pass; the table at the end.
#include "troupe/devices/gpu/gpu_profiler.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

namespace troupe {

std::unique_ptr<GpuProfiler> GpuProfiler::from_environment(int ordinal, cudaStream_t stream) {
  const char* asked = std::getenv("TROUPE_GPU_PROFILE");
  if (asked == nullptr || *asked == '\0' || std::string(asked) == "0") return nullptr;
  return std::make_unique<GpuProfiler>(ordinal, stream);
}

cudaEvent_t GpuProfiler::take_event_locked() {
  if (free_events_.empty()) {
    cudaEvent_t event = nullptr;
    if (cudaEventCreate(&event) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return event;
  }
  cudaEvent_t event = free_events_.back();
  free_events_.pop_back();
  return event;
}

GpuProfiler::Mark GpuProfiler::begin() {
  std::lock_guard lock(mutex_);
  Mark mark;
  mark.before = take_event_locked();
  if (mark.before != nullptr) cudaEventRecord(mark.before, stream_);
  if (first_ == nullptr && mark.before != nullptr) {
    first_ = take_event_locked();
    if (first_ != nullptr) cudaEventRecord(first_, stream_);
  }
  mark.host_start = std::chrono::steady_clock::now();
  return mark;
}

void GpuProfiler::end(const Mark& mark, const std::string& node, const std::string& op) {
  const double host_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - mark.host_start)
          .count();
  std::lock_guard lock(mutex_);
  cudaEvent_t after = take_event_locked();
  if (mark.before == nullptr || after == nullptr) return;
  cudaEventRecord(after, stream_);
  if (last_ == nullptr) last_ = take_event_locked();
  if (last_ != nullptr) cudaEventRecord(last_, stream_);
  pending_.push_back(Pending{node, op, mark.before, after, host_us});
  resolve_locked(/*wait=*/false);
}

void GpuProfiler::note(std::string line) {
  std::lock_guard lock(mutex_);
  notes_.push_back(std::move(line));
}

void GpuProfiler::resolve_locked(bool wait) {
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (wait) {
      cudaEventSynchronize(p.after);
    } else if (cudaEventQuery(p.after) != cudaSuccess) {
      cudaGetLastError();  // cudaErrorNotReady
      return;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, p.before, p.after);
    Totals& t = totals_[p.node];
    if (t.first_host_us < 0) {
      t.op = p.op;
      t.first_host_us = p.host_us;
      t.first_stream_us = ms * 1000.0;
    } else {
      t.count += 1;
      t.host_us += p.host_us;
      t.stream_us += ms * 1000.0;
    }
    free_events_.push_back(p.before);
    free_events_.push_back(p.after);
    pending_.pop_front();
  }
}

GpuProfiler::~GpuProfiler() {
  cudaSetDevice(ordinal_);
  cudaStreamSynchronize(stream_);
  std::lock_guard lock(mutex_);
  resolve_locked(/*wait=*/true);
  float span_ms = 0;
  if (first_ != nullptr && last_ != nullptr) cudaEventElapsedTime(&span_ms, first_, last_);
  std::vector<std::pair<std::string, Totals>> rows(totals_.begin(), totals_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.stream_us > b.second.stream_us; });
  double host = 0, stream = 0;
  for (const auto& [what, t] : rows) {
    host += t.host_us;
    stream += t.stream_us;
  }
  double first = 0;
  for (const auto& [node, t] : rows)
    first += t.first_host_us;
  std::string table = fmt::format(
      "GPU:{} profile: {:.1f} ms of stream time from the first launch to the last; first launches "
      "of each node {:.1f} ms on the host; the others {:.1f} ms on the host, {:.1f} ms on the "
      "stream\n{:<56} {:<28} {:>6} {:>9} {:>9} {:>9} {:>9}\n",
      ordinal_, span_ms, first / 1000, host / 1000, stream / 1000, "node", "op", "runs", "first ms",
      "host us", "stream us", "stream ms");
  for (const auto& [node, t] : rows) {
    const double runs = std::max<double>(t.count, 1);
    table += fmt::format("{:<56} {:<28} {:>6} {:>9.2f} {:>9.1f} {:>9.1f} {:>9.2f}\n", node, t.op,
                         t.count, t.first_host_us / 1000, t.host_us / runs, t.stream_us / runs,
                         t.stream_us / 1000);
  }
  for (const auto& line : notes_)
    table += "  " + line + "\n";
  fmt::print(stderr, "{}", table);
  for (cudaEvent_t event : free_events_)
    cudaEventDestroy(event);
  if (first_ != nullptr) cudaEventDestroy(first_);
  if (last_ != nullptr) cudaEventDestroy(last_);
}

}  // namespace troupe
