// JSON lines for report.py, and memory figures from /proc.
#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

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

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

int64_t resident_bytes(int pid) {
  return status_field(pid, "VmRSS");
}
int64_t peak_resident_bytes(int pid) {
  return status_field(pid, "VmHWM");
}

}  // namespace troupe::bench
