// JSON lines for report.py, and memory figures from /proc.
#include "report.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace troupe::bench {
namespace {

// The number of a "<key>: <n> [kB]" line of /proc/<pid>/status; -1 if absent.
int64_t status_field(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid == 0 ? getpid() : pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  return -1;
}

int64_t kib_to_bytes(int64_t kib) {
  return kib < 0 ? -1 : kib * 1024;
}

}  // namespace

void report(const Series& series) {
  nlohmann::json line = {{"bench", series.bench},
                         {"case", series.case_name},
                         {"system", series.system},
                         {"unit", series.unit},
                         {"samples", series.samples}};
  std::cout << line.dump() << std::endl;
}

std::string child_result(const testing::ProcessResult& run, const std::string& prefix,
                         const std::string& what) {
  size_t start = run.out.rfind(prefix);
  if (run.exit_code != 0 || start == std::string::npos) {
    throw std::runtime_error(what + " failed:\n" + run.out);
  }
  start += prefix.size();
  return run.out.substr(start, run.out.find('\n', start) - start);
}

int64_t resident_bytes(int pid) {
  return kib_to_bytes(status_field(pid, "VmRSS"));
}
int64_t peak_resident_bytes(int pid) {
  return kib_to_bytes(status_field(pid, "VmHWM"));
}

int process_threads() {
  return static_cast<int>(status_field(0, "Threads"));
}

}  // namespace troupe::bench
