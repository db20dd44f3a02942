// --health_port and the endpoint a command starts with it.
#include "troupe/apps/cli/health_port.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "troupe/apps/cli/flags.hpp"

namespace troupe::cli {

void add_health_port_flag(FlagSet& flags) {
  const char* port = std::getenv("TROUPE_HEALTH_PORT");
  flags.add_string("health_port", port != nullptr && *port != '\0' ? port : "0",
                   "serve GET /healthz and /readyz for probes on this port (0: none; default: "
                   "$TROUPE_HEALTH_PORT)");
}

StatusOr<int> health_port_of(const FlagSet& flags) {
  const std::string text = flags.get_string("health_port");
  char* end = nullptr;
  errno = 0;
  long port = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || port < 0 || port > 65535) {
    return errors::InvalidArgument(
        "--health_port='{}' (or $TROUPE_HEALTH_PORT) is not a port (expected 0..65535, 0 for "
        "none)",
        text);
  }
  return static_cast<int>(port);
}

StatusOr<std::unique_ptr<HealthEndpoint>> start_health_endpoint(int port, Server& server,
                                                                const std::string& command) {
  if (port == 0) return std::unique_ptr<HealthEndpoint>();
  TROUPE_ASSIGN_OR_RETURN(auto endpoint, HealthEndpoint::start(port, [&server] {
                            return server.check_health(std::chrono::milliseconds(1000));
                          }));
  std::cout << "troupe " << command << ": health checks at http://0.0.0.0:" << endpoint->port()
            << "/healthz and /readyz" << std::endl;
  return endpoint;
}

}  // namespace troupe::cli
