// random_id: a thread's own 64-bit Mersenne Twister, seeded once from std::random_device.
#include "troupe/actors/random_id.hpp"

#include <random>

namespace troupe {
namespace {

std::mt19937_64& generator() {
  thread_local std::mt19937_64 generator{(static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                         std::random_device{}()};
  return generator;
}

}  // namespace

int64_t random_id() {
  return static_cast<int64_t>(generator()() >> 1);
}

void seed_random_ids(uint64_t seed) {
  generator().seed(seed);
}

}  // namespace troupe
