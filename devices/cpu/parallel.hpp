// parallel_for: splits an element-wise loop over the device's Eigen thread pool when it is big
// enough to pay for the hand-off, and runs it inline otherwise.
#pragma once

#include <cstdint>
#include <functional>

#include "troupe/devices/device.hpp"
#include "troupe/devices/eigen.hpp"

namespace troupe {

// Calls fn(begin, end) over disjoint ranges covering [0, n). `cycles_per_element` is a rough
// cost estimate used to decide whether and how finely to split: an element may be a whole row.
inline void parallel_for(const Device& device, int64_t n, double cycles_per_element,
                         const std::function<void(int64_t, int64_t)>& fn) {
  // Below about a million cycles (a third of a millisecond) the hand-off costs more than it
  // saves: the element-wise ops of a training step of batch 128 (65,536-element activations)
  // ran 1.09x faster inline than split at 16,384 cycles (docs/PERFORMANCE.md).
  constexpr double kInlineBelowCycles = 1 << 20;
  if (n <= 1 || static_cast<double>(n) * cycles_per_element < kInlineBelowCycles ||
      device.intra_op_threads() <= 1) {
    fn(0, n);
    return;
  }
  device.eigen_cpu().parallelFor(n, Eigen::TensorOpCost(8, 4, cycles_per_element),
                                 [&fn](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
}

}  // namespace troupe
