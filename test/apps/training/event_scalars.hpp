// Test helper: the TensorBoard scalars a run wrote to a directory, by tag.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/formats/event_writer.hpp"

namespace troupe::testing {

// The scalars of the event files directly in `dir` (not in its subdirectories), by tag, in the
// order each file holds them.
inline std::map<std::string, std::vector<ScalarEvent>> scalars_in(
    const std::filesystem::path& dir) {
  std::map<std::string, std::vector<ScalarEvent>> by_tag;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) != 0) continue;
    for (auto& event : value_or_throw(EventReader::read_scalars(entry.path().string())))
      by_tag[event.tag].push_back(event);
  }
  return by_tag;
}

// The steps of `events`, in order.
inline std::vector<int64_t> steps_of(const std::vector<ScalarEvent>& events) {
  std::vector<int64_t> steps;
  for (const auto& event : events)
    steps.push_back(event.step);
  return steps;
}

}  // namespace troupe::testing
