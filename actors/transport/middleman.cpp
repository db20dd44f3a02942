// Transport: picks CAF's plain or OpenSSL connection manager.
#include "troupe/actors/transport/middleman.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include "troupe/actors/transport/accept_gate.hpp"

namespace troupe {

void link_openssl_error_queue_fix();  // actors/transport/openssl_error_queue.cpp

bool uses_tls(caf::actor_system& system) {
  link_openssl_error_queue_fix();
  return system.has_openssl_manager();
}

caf::io::middleman_actor connection_manager(caf::actor_system& system) {
  return uses_tls(system) ? system.openssl_manager().actor_handle()
                          : system.middleman().actor_handle();
}

caf::expected<uint16_t> publish(caf::actor_system& system, const caf::actor& whom, uint16_t port,
                                const char* bind, int cluster_tasks) {
  bool tls = uses_tls(system);
  auto published = tls ? caf::openssl::publish(whom, port, bind, true)
                       : system.middleman().publish(whom, port, bind, true);
  if (published) accept_gate::watch_port(*published, tls, cluster_tasks);
  return published;
}

void unpublish(caf::actor_system& system, const caf::actor& whom, uint16_t port) {
  accept_gate::unwatch_port(port);
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

bool connection_closed(const caf::actor& remote) {
  auto* actor =
      dynamic_cast<caf::monitorable_actor*>(caf::actor_cast<caf::abstract_actor*>(remote));
  return actor != nullptr && actor->fail_state() == caf::exit_reason::remote_link_unreachable;
}

TlsOptions tls_options_of(caf::actor_system& system) {
  const caf::actor_system_config& config = system.config();
  if (!uses_tls(system)) return TlsOptions{};
  return TlsOptions{config.openssl_certificate, config.openssl_key, config.openssl_cafile,
                    config.openssl_passphrase};
}

}  // namespace troupe
