// CpuPool: the threads CPU kernels use for intra-op parallelism (an Eigen thread pool, its
// threads named "troupe-cpu"). A Device makes one of its own, or shares one with the devices of
// other tasks: the tasks of an in-process cluster (actors/sim/local_cluster.hpp) share one pool
// sized to the machine, so thousands of simulated tasks do not each own threads.
//
// Thread-safe: kernels of several devices may run work on one pool at once. Work is only
// started from outside the pool (a device actor's thread), never from one of its threads.
#pragma once

#include <memory>

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace troupe {

class CpuPool {
 public:
  // `threads` >= 1 threads (clamped to 1 below that); reserves as many for OpenBLAS.
  explicit CpuPool(int threads);
  ~CpuPool();
  CpuPool(const CpuPool&) = delete;
  CpuPool& operator=(const CpuPool&) = delete;

  int threads() const { return threads_; }
  // Where CPU kernels evaluate Eigen expressions.
  const Eigen::ThreadPoolDevice& eigen() const;

 private:
  struct Impl;
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace troupe
