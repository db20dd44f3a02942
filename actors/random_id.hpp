// random_id: non-negative 63-bit random ids (master sessions, steps) that keep the ids of
// concurrent sessions apart across a cluster. One generator per thread, seeded by the operating
// system, so that an actor holds no generator of its own (2.5 KB each; a simulated cluster has
// thousands of master services). Thread-safe.
#pragma once

#include <cstdint>

namespace troupe {

int64_t random_id();

// Seeds this thread's generator: the ids it gives from now on follow from `seed` alone. For a
// deterministic simulation (actors/sim/deterministic_cluster.hpp), whose actors all run on the
// thread that drives it.
void seed_random_ids(uint64_t seed);
// Seeds this thread's generator from the operating system again (after seed_random_ids).
void unseed_random_ids();

}  // namespace troupe
