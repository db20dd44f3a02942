// Must not compile: the simulation library (actors/sim/, LocalCluster) is above the runtime
// (actors/), though its folder is inside the runtime's. The test
// `the_runtime_does_not_see_the_simulation_library` builds this file against troupe_actors
// alone and expects the compiler to miss the header.
#include "troupe/actors/sim/local_cluster.hpp"
