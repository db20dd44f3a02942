// The distributions of TensorFlow's random ops, over Philox blocks (philox.hpp). Each draws a
// fixed number of blocks per group of outputs, so outputs split over threads are the same:
//   uniform float     one block -> 4 values in [0, 1): 23 random mantissa bits, 1.0 subtracted
//   uniform double    one block -> 2 values in [0, 1): 52 mantissa bits
//   normal            Box-Muller on pairs of uniforms: one block -> 4 floats or 2 doubles
//   truncated normal  normals with |x| >= 2 drawn again; each group of 4 (float) or 2 (double)
//                     outputs owns kTruncatedBlocksPerGroup blocks, so groups stay independent
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>

#include "troupe/devices/cpu/random/philox.hpp"

namespace troupe::random {

inline float uint32_to_float(uint32_t x) {
  uint32_t bits = (127u << 23) | (x & 0x7fffffu);  // a float in [1, 2)
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value - 1.0f;
}

inline double uint64_to_double(uint32_t high, uint32_t low) {
  uint64_t mantissa = (uint64_t{high} << 32 | low) & ((uint64_t{1} << 52) - 1);
  uint64_t bits = (uint64_t{1023} << 52) | mantissa;  // a double in [1, 2)
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value - 1.0;
}

// Outputs one group (of one block) holds.
template <class T>
inline constexpr int kGroupSize = sizeof(T) == 4 ? 4 : 2;

// Blocks a truncated normal group may use; with |x| < 2 kept 95% of the time, running out is
// one chance in astronomically many (and then the last draws are kept, clamped).
inline constexpr int kTruncatedBlocksPerGroup = 64;

template <class T>
void uniform_group(Philox& gen, T* out) {
  Philox::Block b = gen.next();
  if constexpr (sizeof(T) == 4) {
    for (int i = 0; i < 4; ++i)
      out[i] = uint32_to_float(b[i]);
  } else {
    out[0] = uint64_to_double(b[0], b[1]);
    out[1] = uint64_to_double(b[2], b[3]);
  }
}

// A pair of standard normals from two uniforms in [0, 1).
template <class T>
void box_muller(T u1, T u2, T* out) {
  constexpr T kEpsilon = sizeof(T) == 4 ? T(1.0e-7) : T(1.0e-20);
  if (u1 < kEpsilon) u1 = kEpsilon;
  T radius = std::sqrt(T(-2) * std::log(u1));
  T angle = T(2) * std::numbers::pi_v<T> * u2;
  out[0] = radius * std::sin(angle);
  out[1] = radius * std::cos(angle);
}

template <class T>
void normal_group(Philox& gen, T* out) {
  T u[kGroupSize<T>];
  uniform_group(gen, u);
  for (int i = 0; i < kGroupSize<T>; i += 2)
    box_muller(u[i], u[i + 1], out + i);
}

template <class T>
void truncated_normal_group(Philox& gen, T* out) {
  constexpr T kLimit = T(2);
  int filled = 0;
  T pool[kGroupSize<T>];
  int pool_at = kGroupSize<T>;
  for (int block = 0; filled < kGroupSize<T>;) {
    if (pool_at == kGroupSize<T>) {
      if (block++ == kTruncatedBlocksPerGroup) {
        while (filled < kGroupSize<T>)
          out[filled++] = T(0);
        return;
      }
      normal_group(gen, pool);
      pool_at = 0;
    }
    T x = pool[pool_at++];
    if (std::abs(x) < kLimit) out[filled++] = x;
  }
}

}  // namespace troupe::random
