// Transport: picks CAF's plain or OpenSSL connection manager.
#include "troupe/actors/transport/middleman.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include "troupe/actors/transport/accept_gate.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"

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
                                const char* bind) {
  bool tls = uses_tls(system);
  auto published = tls ? caf::openssl::publish(whom, port, bind, true)
                       : system.middleman().publish(whom, port, bind, true);
  if (published) accept_gate::watch_port(*published, tls);
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

bool speaks_plaintext_first(const std::string& host, uint16_t port,
                            std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int fd = tcp_connect(host, port, timeout);
  if (fd < 0) return false;
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  pollfd readable{fd, POLLIN, 0};
  char first = 0;
  // A TLS record starts with a content type of 20..23; BASP's header does not.
  bool plaintext =
      ::poll(&readable, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) == 1 &&
      ::recv(fd, &first, 1, 0) == 1 && !(first >= 20 && first <= 23);
  ::close(fd);
  return plaintext;
}

}  // namespace troupe
