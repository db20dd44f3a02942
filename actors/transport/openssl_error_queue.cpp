// Clears OpenSSL's per-thread error queue before each TLS read, write and handshake step that
// CAF 0.17's OpenSSL module makes (and tells the accept gate when a handshake it accepted has
// finished: actors/transport/accept_gate.hpp). OpenSSL requires an empty queue before such a call
// for SSL_get_error() to tell the truth; CAF never clears it, and all its connections share one
// network thread. So one connection that failed (e.g. a peer closing a redundant connection,
// which OpenSSL 3 records as "unexpected eof") made the next SSL_read on a healthy connection
// look failed too, and CAF closed that connection: two TLS nodes that both connected to each
// other lost each other. The SSL_* definitions below take the place of libssl's for the whole
// process (the executable exports them: see actors/CMakeLists.txt; a shared object installs
// the functions they call: actors/transport/caf_call_hooks.hpp), and then call libssl's.
//
// The same handshake steps make every TLS connection of the process TLS 1.3 only: CAF's
// OpenSSL module accepts OpenSSL's whole range (TLS 1.2 with its CBC suites included), and the
// tensor channel already requires 1.3.
#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "troupe/actors/transport/accept_gate.hpp"
#include "troupe/actors/transport/caf_call_hooks.hpp"

namespace {

template <class Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

namespace troupe {

// Referenced by actors/transport/middleman.cpp, so this file is linked into every program that can
// use TLS (an archive member nothing refers to would be left out).
void link_openssl_error_queue_fix() {}

namespace caf_call_hooks {

int ssl_read(SSL* ssl, void* buffer, int size) {
  static auto real = next_definition<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return real(ssl, buffer, size);
}

int ssl_write(SSL* ssl, const void* buffer, int size) {
  static auto real = next_definition<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return real(ssl, buffer, size);
}

// Before a connection's handshake starts: TLS 1.3 or nothing.
void require_tls_1_3(SSL* ssl) {
  if (SSL_in_before(ssl)) SSL_set_min_proto_version(ssl, TLS1_3_VERSION);
}

int ssl_connect(SSL* ssl) {
  static auto real = next_definition<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  require_tls_1_3(ssl);
  return real(ssl);
}

// A finished handshake also proves the connection to the accept gate.
int ssl_accept(SSL* ssl) {
  static auto real = next_definition<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  require_tls_1_3(ssl);
  int result = real(ssl);
  if (result == 1) accept_gate::handshake_finished(SSL_get_fd(ssl));
  return result;
}

}  // namespace caf_call_hooks
}  // namespace troupe

extern "C" {

int SSL_read(SSL* ssl, void* buffer, int size) {
  return troupe::caf_call_hooks::ssl_read(ssl, buffer, size);
}

int SSL_write(SSL* ssl, const void* buffer, int size) {
  return troupe::caf_call_hooks::ssl_write(ssl, buffer, size);
}

int SSL_connect(SSL* ssl) {
  return troupe::caf_call_hooks::ssl_connect(ssl);
}

int SSL_accept(SSL* ssl) {
  return troupe::caf_call_hooks::ssl_accept(ssl);
}

}  // extern "C"
