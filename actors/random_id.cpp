// random_id: a thread's own 64-bit Mersenne Twister, seeded from std::random_device (or, for a
// deterministic simulation, from a seed).
#include "troupe/actors/random_id.hpp"

#include <random>

namespace troupe {
namespace {

uint64_t from_the_os() {
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

std::mt19937_64& generator() {
  thread_local std::mt19937_64 generator{from_the_os()};
  return generator;
}

}  // namespace

int64_t random_id() {
  return static_cast<int64_t>(generator()() >> 1);
}

void seed_random_ids(uint64_t seed) {
  generator().seed(seed);
}

void unseed_random_ids() {
  generator().seed(from_the_os());
}

}  // namespace troupe
