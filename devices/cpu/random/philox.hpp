// Philox4x32-10: the counter-based random number generator TensorFlow's random ops use
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
//
// A generator is a 64-bit key and a 128-bit counter. next() encrypts the counter with the key
// in ten rounds, giving four 32-bit words, and adds 1 to the counter; skip(n) adds n. Because
// the words of block i depend only on the key and the counter, a kernel split over threads
// gives each thread the blocks of its part by skipping to them, and every split gives the same
// numbers. Seeding as TensorFlow's GuardedPhiloxRandom: (seed, seed2) both 0 means random.
#pragma once

#include <array>
#include <cstdint>

namespace troupe::random {

class Philox {
 public:
  using Block = std::array<uint32_t, 4>;

  Philox() = default;
  // The key from `seed`, the high half of the counter from `seed2`.
  Philox(uint64_t seed, uint64_t seed2) {
    key_[0] = static_cast<uint32_t>(seed);
    key_[1] = static_cast<uint32_t>(seed >> 32);
    counter_[2] = static_cast<uint32_t>(seed2);
    counter_[3] = static_cast<uint32_t>(seed2 >> 32);
  }

  // Moves the counter `blocks` blocks ahead.
  void skip(uint64_t blocks) {
    uint64_t low = (uint64_t{counter_[1]} << 32 | counter_[0]);
    uint64_t sum = low + blocks;
    counter_[0] = static_cast<uint32_t>(sum);
    counter_[1] = static_cast<uint32_t>(sum >> 32);
    if (sum < low) {  // carry into the high half
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  Block next() {
    Block counter = counter_;
    std::array<uint32_t, 2> key = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += kWeyl0;
        key[1] += kWeyl1;
      }
      uint64_t product0 = uint64_t{kMultiplier0} * counter[0];
      uint64_t product1 = uint64_t{kMultiplier1} * counter[2];
      auto hi0 = static_cast<uint32_t>(product0 >> 32), lo0 = static_cast<uint32_t>(product0);
      auto hi1 = static_cast<uint32_t>(product1 >> 32), lo1 = static_cast<uint32_t>(product1);
      counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    }
    skip(1);
    return counter;
  }

 private:
  static constexpr uint32_t kMultiplier0 = 0xD2511F53;
  static constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
  static constexpr uint32_t kWeyl0 = 0x9E3779B9;
  static constexpr uint32_t kWeyl1 = 0xBB67AE85;
  std::array<uint32_t, 2> key_{};
  Block counter_{};
};

}  // namespace troupe::random
