// Transport: picks CAF's plain or OpenSSL connection manager.
#include "actors/transport.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

namespace troupe {

void link_openssl_error_queue_fix();  // actors/openssl_error_queue.cpp

bool uses_tls(caf::actor_system& system) {
  link_openssl_error_queue_fix();
  return system.has_openssl_manager();
}

caf::io::middleman_actor connection_manager(caf::actor_system& system) {
  return uses_tls(system) ? system.openssl_manager().actor_handle()
                          : system.middleman().actor_handle();
}

caf::expected<uint16_t> publish(caf::actor_system& system, const caf::actor& whom, uint16_t port,
                                const char* bind) {
  if (uses_tls(system)) return caf::openssl::publish(whom, port, bind, true);
  return system.middleman().publish(whom, port, bind, true);
}

void unpublish(caf::actor_system& system, const caf::actor& whom) {
  if (uses_tls(system)) {
    // CAF 0.17's caf::openssl::unpublish does not compile; this is what it means to do.
    caf::function_view<caf::io::middleman_actor> manager(connection_manager(system));
    (void)manager(caf::unpublish_atom::value, whom.address(), uint16_t{0});
  } else {
    system.middleman().unpublish(whom, 0);
  }
}

caf::expected<caf::actor> remote_actor(caf::actor_system& system, const std::string& host,
                                       uint16_t port) {
  if (uses_tls(system)) return caf::openssl::remote_actor(system, host, port);
  return system.middleman().remote_actor(host, port);
}

}  // namespace troupe
