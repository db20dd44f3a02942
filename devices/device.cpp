// Device: the Eigen thread pool behind CPU kernels.
#include "troupe/devices/device.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/eigen.hpp"

namespace troupe {

namespace {

// Eigen's threads, named "troupe-cpu" (as `top -H` and debuggers show them).
struct NamedThreads : Eigen::StlThreadEnvironment {
  EnvThread* CreateThread(std::function<void()> work) {
    return new EnvThread([work = std::move(work)] {
      pthread_setname_np(pthread_self(), "troupe-cpu");
      work();
    });
  }
};

}  // namespace

struct Device::CpuContext {
  explicit CpuContext(int threads) : pool(threads), device(&pool, threads) {}
  Eigen::ThreadPoolTempl<NamedThreads> pool;
  Eigen::ThreadPoolDevice device;
};

Device::Device(std::string name, std::string type, int intra_op_threads)
    : name_(std::move(name)), type_(std::move(type)) {
  threads_ = intra_op_threads > 0 ? intra_op_threads : available_cores();
  reserve_blas_threads(threads_);
  cpu_ = std::make_unique<CpuContext>(threads_);
}

Device::~Device() = default;

int Device::available_cores() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) return std::max(1, CPU_COUNT(&cpus));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

const Eigen::ThreadPoolDevice& Device::eigen_cpu() const {
  return cpu_->device;
}

}  // namespace troupe
