// Device: its thread pool, and the cores this process may run on.
#include "troupe/devices/device.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "troupe/devices/cpu_pool.hpp"

namespace troupe {

Device::Device(std::string name, std::string type, int intra_op_threads)
    : Device(std::move(name), std::move(type),
             std::make_shared<const CpuPool>(intra_op_threads > 0 ? intra_op_threads
                                                                  : available_cores())) {}

Device::Device(std::string name, std::string type, std::shared_ptr<const CpuPool> pool)
    : name_(std::move(name)), type_(std::move(type)), cpu_(std::move(pool)) {}

Device::Device(std::string name, std::shared_ptr<GpuContext> gpu, int intra_op_threads)
    : Device(std::move(name), std::move(gpu), std::make_shared<const CpuPool>(intra_op_threads)) {}

Device::Device(std::string name, std::shared_ptr<GpuContext> gpu,
               std::shared_ptr<const CpuPool> pool)
    : name_(std::move(name)), type_("GPU"), cpu_(std::move(pool)), gpu_(std::move(gpu)) {}

Device::~Device() = default;

namespace {

// A quota in cores rounded up, or 0 for none.
int64_t cores_of(int64_t quota, int64_t period) {
  return quota > 0 && period > 0 ? (quota + period - 1) / period : 0;
}

// The CPU quota of this process's cgroup and its parents, in cores rounded up, as Kubernetes'
// CPU limits and `podman run --cpus` set it (cgroup v2's cpu.max, or v1's cpu.cfs_quota_us);
// 0 where none is set or readable.
int cgroup_quota_cores() {
  std::ifstream self("/proc/self/cgroup");
  std::string line, v2_path, v1_path;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) v2_path = line.substr(3);
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controllers.find(",cpu,") != std::string::npos) v1_path = line.substr(second + 1);
  }
  int64_t cores = 0;
  auto take = [&](int64_t limit) {
    if (limit > 0 && (cores == 0 || limit < cores)) cores = limit;
  };
  // The cgroup and each parent up to the root of what this process sees.
  auto each_level = [](const std::string& path, auto visit) {
    for (std::filesystem::path dir = path.empty() ? "/" : path;; dir = dir.parent_path()) {
      visit(dir == "/" ? std::string() : dir.string());
      if (!dir.has_relative_path()) break;
    }
  };
  if (!v2_path.empty()) {
    each_level(v2_path, [&](const std::string& dir) {
      std::ifstream max("/sys/fs/cgroup" + dir + "/cpu.max");
      std::string quota;
      int64_t period = 0;
      if (max >> quota >> period && quota != "max") take(cores_of(std::stoll(quota), period));
    });
  }
  if (!v1_path.empty()) {
    each_level(v1_path, [&](const std::string& dir) {
      std::ifstream quota_file("/sys/fs/cgroup/cpu" + dir + "/cpu.cfs_quota_us");
      std::ifstream period_file("/sys/fs/cgroup/cpu" + dir + "/cpu.cfs_period_us");
      int64_t quota = 0, period = 0;
      if (quota_file >> quota && period_file >> period) take(cores_of(quota, period));
    });
  }
  return static_cast<int>(cores);
}

}  // namespace

int Device::available_cores() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) cores = CPU_COUNT(&cpus);
  if (int quota = cgroup_quota_cores(); quota > 0) cores = std::min(cores, quota);
  return std::max(1, cores);
}

int Device::intra_op_threads() const {
  return cpu_->threads();
}

const Eigen::ThreadPoolDevice& Device::eigen_cpu() const {
  return cpu_->eigen();
}

}  // namespace troupe
