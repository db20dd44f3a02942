// CpuPool: an Eigen thread pool with named threads, and OpenBLAS told how many to use.
#include "troupe/devices/cpu_pool.hpp"

#include <pthread.h>

#include <algorithm>
#include <functional>

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

struct CpuPool::Impl {
  explicit Impl(int threads) : pool(threads), device(&pool, threads) {}
  Eigen::ThreadPoolTempl<NamedThreads> pool;
  Eigen::ThreadPoolDevice device;
};

CpuPool::CpuPool(int threads) : threads_(std::max(1, threads)) {
  reserve_blas_threads(threads_);
  impl_ = std::make_unique<Impl>(threads_);
}

CpuPool::~CpuPool() = default;

const Eigen::ThreadPoolDevice& CpuPool::eigen() const {
  return impl_->device;
}

}  // namespace troupe
