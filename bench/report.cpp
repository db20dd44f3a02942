// JSON lines for report.py, and memory figures from /proc.
#include "report.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace troupe::bench {
namespace {

// A "<key>: <n> kB" line of /proc/<pid>/status, in bytes; -1 if absent.
int64_t status_field(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid == 0 ? getpid() : pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  }
  return -1;
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
  return status_field(pid, "VmRSS");
}
int64_t peak_resident_bytes(int pid) {
  return status_field(pid, "VmHWM");
}

int process_threads() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

}  // namespace troupe::bench
