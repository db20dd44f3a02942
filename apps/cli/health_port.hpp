// --health_port: the flag of the commands that run a task (`troupe node`, `troupe train`), and
// the health endpoint (actors/health_endpoint.hpp) they start with it beside their Server.
#pragma once

#include <memory>
#include <string>

#include "troupe/actors/health_endpoint.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe::cli {

class FlagSet;

// --health_port, whose default is $TROUPE_HEALTH_PORT (what troupe k8s's manifests set), else 0
// (no endpoint).
void add_health_port_flag(FlagSet& flags);
// --health_port's value; InvalidArgument naming the flag for one that is not a port. Commands
// check it with their other flags, before anything starts.
StatusOr<int> health_port_of(const FlagSet& flags);
// The endpoint on `port`, answering with the server's check_health, announced on stdout as
// "troupe <command>: health checks at ..."; null for 0. Unavailable if the port cannot be
// bound.
StatusOr<std::unique_ptr<HealthEndpoint>> start_health_endpoint(int port, Server& server,
                                                                const std::string& command);

}  // namespace troupe::cli
