// Fuzz target: a GraphDef as it arrives inside an actor message (a session's extend, a
// partition), then checked as the master checks it (Graph::create: unknown ops, cycles, wrong
// dtypes and shapes). Anything may be rejected; nothing may crash or hang.
#include <caf/binary_deserializer.hpp>

#include "troupe/actors/messages.hpp"
#include "troupe/graph/graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  caf::binary_deserializer source(nullptr, reinterpret_cast<const char*>(data), size);
  troupe::GraphDef graph;
  if (troupe::detail::load_graph(source, graph)) return 0;
  (void)troupe::Graph::create(graph);
  return 0;
}
