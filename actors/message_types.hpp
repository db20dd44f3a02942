// The message types and error category every troupe actor system registers, under the names
// every process of a cluster uses (CAF drops a message of a type it does not know).
//
// Runtime (runtime.hpp) registers them with the network module and TLS; an actor system of
// one's own, such as a test's with a deterministic scheduler, registers them with this.
#pragma once

#include <caf/fwd.hpp>

namespace troupe {

void add_troupe_types(caf::actor_system_config& config);

}  // namespace troupe
