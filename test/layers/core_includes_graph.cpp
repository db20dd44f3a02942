// Must not compile: graph/core/ is below graph/, and a layer's include directories hold only
// itself and the layers it links (CMakeLists.txt, troupe_layer). The test `layers_are_enforced`
// builds this file and expects the compiler to miss the header.
#include "troupe/graph/graph.hpp"
