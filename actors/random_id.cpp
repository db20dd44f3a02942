// random_id: a thread's own 64-bit Mersenne Twister, seeded once from std::random_device.
#include "troupe/actors/random_id.hpp"

#include <random>

namespace troupe {

int64_t random_id() {
  thread_local std::mt19937_64 generator{(static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                         std::random_device{}()};
  return static_cast<int64_t>(generator() >> 1);
}

}  // namespace troupe
