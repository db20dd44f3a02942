// ChannelTls: the channel's TLS 1.3 handshake and key export (contract in channel_tls.hpp).
#include "troupe/actors/transport/channel_tls.hpp"

#include <fcntl.h>
#include <poll.h>

#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/sigpipe_blocked.hpp"

namespace troupe {
namespace {

constexpr char kExporterLabel[] = "EXPORTER-troupe tensor channel";
// The exporter's context: the channel's frame version, so that the keys of two versions of the
// protocol never coincide (RFC 8446 7.5 tells an empty context from none; neither says which
// protocol the keys are for).
const std::string& exporter_context() {
  static const std::string context = fmt::format("troupe frames v{}", frame::kVersion);
  return context;
}

}  // namespace

StatusOr<std::shared_ptr<const ChannelTls>> ChannelTls::create(const TlsOptions& options) {
  TROUPE_ASSIGN_OR_RETURN(std::shared_ptr<SSL_CTX> context, options.load());
  SSL_CTX* raw = context.get();
  // Both ends are troupe: the newest protocol only, no session to resume, no tickets (which
  // would follow the handshake on the socket).
  if (SSL_CTX_set_min_proto_version(raw, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_num_tickets(raw, 0) != 1) {
    return errors::Internal("OpenSSL cannot be set to TLS 1.3 without tickets: {}",
                            take_openssl_errors());
  }
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return std::shared_ptr<const ChannelTls>(new ChannelTls(std::move(context)));
}

StatusOr<ChannelTls::Keys> ChannelTls::handshake(int fd, Role role,
                                                 std::chrono::milliseconds timeout,
                                                 const std::string& peer) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  const char* side = role == Role::kConnector ? "to" : "from";
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context_.get()), SSL_free);
  int blocking = ::fcntl(fd, F_GETFL);
  if (!ssl || blocking < 0 || SSL_set_fd(ssl.get(), fd) != 1 ||
      ::fcntl(fd, F_SETFL, blocking | O_NONBLOCK) != 0) {
    return errors::Internal("tensor channel: cannot start TLS on the connection {} {}: {}", side,
                            peer, take_openssl_errors());
  }
  role == Role::kConnector ? SSL_set_connect_state(ssl.get()) : SSL_set_accept_state(ssl.get());
  SigpipeBlocked quiet;  // the peer may close the connection as the handshake writes
  Status failed;
  for (;;) {
    ERR_clear_error();
    int result = SSL_do_handshake(ssl.get());
    if (result == 1) break;
    int error = SSL_get_error(ssl.get(), result);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
      std::string why = take_openssl_errors();
      long verified = SSL_get_verify_result(ssl.get());
      if (verified != X509_V_OK) {
        why = fmt::format("its certificate is not accepted: {}",
                          X509_verify_cert_error_string(verified));
      } else if (why.empty()) {
        why = error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN
                  ? "the peer closed the connection (it does not take this task's certificate, "
                    "or does not use TLS)"
                  : fmt::format("OpenSSL error {}", error);
      }
      failed =
          errors::Unavailable("tensor channel: TLS handshake {} {} failed: {}", side, peer, why);
      break;
    }
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd ready{fd, static_cast<short>(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) != 1) {
      failed = errors::DeadlineExceeded(
          "tensor channel: TLS handshake {} {} did not finish within {} ms", side, peer,
          timeout.count());
      break;
    }
  }
  ::fcntl(fd, F_SETFL, blocking);
  if (!failed.ok()) return failed;
  // Verified by OpenSSL during the handshake (SSL_VERIFY_PEER); a certificate is required.
  if (SSL_get0_peer_certificate(ssl.get()) == nullptr ||
      SSL_get_verify_result(ssl.get()) != X509_V_OK) {
    return errors::Unavailable("tensor channel: {} {} presented no acceptable certificate", side,
                               peer);
  }
  if (SSL_has_pending(ssl.get()) != 0) {
    return errors::Unavailable("tensor channel: {} {} sent data inside the TLS session", side,
                               peer);
  }
  uint8_t material[2 * (32 + 12)];
  const std::string& context = exporter_context();
  if (SSL_export_keying_material(
          ssl.get(), material, sizeof material, kExporterLabel, std::strlen(kExporterLabel),
          reinterpret_cast<const unsigned char*>(context.data()), context.size(), 1) != 1) {
    return errors::Internal("tensor channel: cannot export TLS keys for {}: {}", peer,
                            take_openssl_errors());
  }
  // The connector's key, the acceptor's key, the connector's IV, the acceptor's IV.
  StreamKeys connector, acceptor;
  std::memcpy(connector.key.data(), material, 32);
  std::memcpy(acceptor.key.data(), material + 32, 32);
  std::memcpy(connector.iv.data(), material + 64, 12);
  std::memcpy(acceptor.iv.data(), material + 76, 12);
  OPENSSL_cleanse(material, sizeof material);
  // Freeing the session sends nothing (no close_notify): the socket goes on with sealed streams.
  if (role == Role::kConnector) return Keys{connector, acceptor};
  return Keys{acceptor, connector};
}

}  // namespace troupe
