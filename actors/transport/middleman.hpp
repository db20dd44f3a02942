// How an actor system reaches other processes: plain TCP through CAF's middleman, or TLS
// through CAF's OpenSSL module when its Runtime was given TlsOptions. Everything in troupe
// that listens or connects goes through these, so one setting covers every connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

#include "troupe/actors/transport/tls.hpp"

namespace troupe {

// Whether `system` was configured for TLS.
bool uses_tls(caf::actor_system& system);

// The actor that opens connections (connect_atom) for `system`.
caf::io::middleman_actor connection_manager(caf::actor_system& system);

// Listens for `whom` on `port` (0: any free port) at `bind` (nullptr: every interface), with
// SO_REUSEADDR; the port it got. Connections to it pass the accept gate
// (actors/transport/accept_gate.hpp), with caps fit for a cluster of `cluster_tasks` tasks,
// until unpublish().
caf::expected<uint16_t> publish(caf::actor_system& system, const caf::actor& whom, uint16_t port,
                                const char* bind, int cluster_tasks);
void unpublish(caf::actor_system& system, const caf::actor& whom, uint16_t port);

// The actor published at `host`:`port`.
caf::expected<caf::actor> remote_actor(caf::actor_system& system, const std::string& host,
                                       uint16_t port);

// Whether the handle of a remote actor ended because the connection to its process closed
// (its proxy died with remote_link_unreachable). Two processes that connect to each other at
// the same moment can lose both connections just after both were made (CAF 0.17 keeps, on each
// side, the one it accepted and closes the one it opened); whoever connected then connects
// again (actors/directory.cpp, actors/session.cpp).
bool connection_closed(const caf::actor& remote);

// The TLS credentials `system` was configured with (not enabled when it has none).
TlsOptions tls_options_of(caf::actor_system& system);

}  // namespace troupe
