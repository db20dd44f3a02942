// probe_handshake: one connection, watched through its handshake (handshake_probe.hpp).
#include "troupe/actors/transport/handshake_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "troupe/actors/transport/sigpipe_blocked.hpp"
#include "troupe/actors/transport/tcp_connect.hpp"

namespace troupe {
namespace {

using Clock = std::chrono::steady_clock;
using Verdict = HandshakeProbe::Verdict;

// After a TLS 1.3 handshake the client has finished before the server has checked its
// certificate; a refusal comes as an alert just after. How long to wait for one when the
// server sends nothing else.
constexpr auto kAlertWait = std::chrono::milliseconds(500);
// How long to wait for a plaintext node's greeting before the TLS handshake.
constexpr int kGreetingWait = 250;

int millis_until(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(left, 0));
}

HandshakeProbe probe_plaintext(int fd, Clock::time_point deadline) {
  // A plaintext node greets first; a TLS node waits for the client's hello. After a short
  // silence the probe sends a TLS record of application data, which a TLS server refuses with
  // an alert (record type 21) before any handshake: a positive sign of TLS, where silence
  // alone could also be a busy node.
  pollfd readable{fd, POLLIN, 0};
  if (::poll(&readable, 1, std::min(millis_until(deadline), kGreetingWait)) != 1) {
    static constexpr char kApplicationData[] = {0x17, 0x03, 0x03, 0x00, 0x01, 0x00};
    (void)::send(fd, kApplicationData, sizeof kApplicationData, MSG_NOSIGNAL);
    if (::poll(&readable, 1, millis_until(deadline)) != 1) {
      return {Verdict::kNoAnswer,
              "this process does not use TLS, and the server said nothing: it uses TLS (give "
              "this process the cluster's credentials) or is too busy to greet"};
    }
  }
  char first = 0;
  ssize_t n = ::recv(fd, &first, 1, 0);
  if (n == 1 && first == 0x15) {
    return {Verdict::kProtocolMismatch,
            "this process does not use TLS, and the server does (it answered with a TLS "
            "alert): give this process the cluster's credentials"};
  }
  if (n == 1) return {Verdict::kAccepted, "the server greeted in plaintext"};
  return {Verdict::kClosedWithoutAlert, "the server closed the connection before greeting"};
}

// The verdict for a failed TLS call on `ssl` (`error` from SSL_get_error).
HandshakeProbe tls_failure(SSL* ssl, int error) {
  long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) {
    return {Verdict::kRefusedTheirCertificate, X509_verify_cert_error_string(verified)};
  }
  unsigned long first = ERR_peek_error();
  std::string why = take_openssl_errors();
  if (first != 0 && ERR_GET_LIB(first) == ERR_LIB_SSL) {
    int reason = ERR_GET_REASON(first);
    if (reason >= SSL_AD_REASON_OFFSET) return {Verdict::kRefusedOurCertificate, why};
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
        reason == SSL_R_UNKNOWN_PROTOCOL) {
      return {Verdict::kProtocolMismatch, "the server does not use TLS, and this process does (" +
                                              why +
                                              "): start the server with the cluster's credentials"};
    }
  }
  if (error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN || why.empty()) {
    return {Verdict::kClosedWithoutAlert,
            why.empty() ? std::string("the server closed the connection") : why};
  }
  return {Verdict::kClosedWithoutAlert, why};
}

// Waits until `ssl` wants no more (`want`: SSL_ERROR_WANT_READ/WRITE) or the deadline.
bool wait_for(int fd, int want, Clock::time_point deadline) {
  pollfd ready{fd, static_cast<short>(want == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
  return ::poll(&ready, 1, millis_until(deadline)) == 1;
}

HandshakeProbe probe_tls(int fd, const TlsOptions& tls, Clock::time_point deadline) {
  // A TLS server waits for the client's hello; a plaintext node greets at once. Its greeting
  // is looked for first: a node that then closes on the hello may reset the connection and
  // take the greeting with it.
  pollfd readable{fd, POLLIN, 0};
  if (::poll(&readable, 1, std::min(millis_until(deadline), kGreetingWait)) == 1) {
    char first = 0;
    ssize_t n = ::recv(fd, &first, 1, MSG_PEEK);
    if (n == 0) return {Verdict::kClosedWithoutAlert, "the server closed the connection"};
    if (n == 1 && !(first >= 20 && first <= 23)) {  // a TLS record starts with 20..23
      return {Verdict::kProtocolMismatch,
              "the server does not use TLS, and this process does (it greeted in plaintext): "
              "start the server with the cluster's credentials"};
    }
  }
  auto context = tls.load();
  if (!context.ok()) return {Verdict::kUnreachable, context.status().message()};
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context->get()), SSL_free);
  if (!ssl || SSL_set_fd(ssl.get(), fd) != 1 ||
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    return {Verdict::kUnreachable, "cannot start TLS: " + take_openssl_errors()};
  }
  SSL_set_verify(ssl.get(), SSL_VERIFY_PEER, nullptr);
  SSL_set_connect_state(ssl.get());
  for (;;) {
    ERR_clear_error();
    int result = SSL_do_handshake(ssl.get());
    if (result == 1) break;
    int error = SSL_get_error(ssl.get(), result);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
      return tls_failure(ssl.get(), error);
    }
    if (!wait_for(fd, error, deadline)) {
      return {Verdict::kNoAnswer, "the TLS handshake did not finish: the server is busy"};
    }
  }
  // The server's verdict on this certificate, or its first bytes (a node greets).
  auto until = std::min(deadline, Clock::now() + kAlertWait);
  for (;;) {
    char byte = 0;
    ERR_clear_error();
    int result = SSL_read(ssl.get(), &byte, 1);
    if (result > 0) return {Verdict::kAccepted, "the server greeted over TLS"};
    int error = SSL_get_error(ssl.get(), result);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
      return tls_failure(ssl.get(), error);
    }
    if (!wait_for(fd, error, until)) {
      return {Verdict::kAccepted, "the server accepted the handshake"};
    }
  }
}

}  // namespace

bool HandshakeProbe::retry_may_help() const {
  switch (verdict) {
    case Verdict::kClosedWithoutAlert:
    case Verdict::kNoAnswer:
    case Verdict::kAccepted:
    case Verdict::kUnreachable:
      return true;
    default:
      return false;
  }
}

std::string HandshakeProbe::explanation() const {
  switch (verdict) {
    case Verdict::kRefusedOurCertificate:
      return fmt::format(
          "this process uses TLS, and the server refused its certificate ({}): the server's "
          "CA must be the one that signed this process's certificate",
          detail);
    case Verdict::kRefusedTheirCertificate:
      return fmt::format(
          "this process uses TLS, and refused the server's certificate ({}): it must be "
          "signed by this process's CA",
          detail);
    case Verdict::kProtocolMismatch:
      return detail;
    case Verdict::kClosedWithoutAlert:
      return fmt::format(
          "the server closed the connection during the handshake without a TLS alert ({}), so "
          "it did not refuse a certificate: its admission caps may be full or its handshake "
          "timeout passed (max_pending_connections, max_pending_connections_per_peer, "
          "handshake_timeout_ms; its log names the one)",
          detail);
    case Verdict::kNoAnswer:
      return fmt::format("a second handshake did not finish in time: {}", detail);
    case Verdict::kAccepted:
      return fmt::format(
          "a second handshake succeeded ({}): the first was shut down while the server was "
          "busy (its admission caps may have been full; its log says)",
          detail);
    case Verdict::kUnreachable:
      return fmt::format("it cannot be reached again: {}", detail);
  }
  return detail;
}

HandshakeProbe probe_handshake(const TlsOptions& tls, const std::string& host, uint16_t port,
                               std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  int fd = tcp_connect(host, port, timeout);
  if (fd < 0) return {Verdict::kUnreachable, fmt::format("cannot connect to {}:{}", host, port)};
  SigpipeBlocked quiet;  // the server may close the connection as the probe writes
  HandshakeProbe probe =
      tls.enabled() ? probe_tls(fd, tls, deadline) : probe_plaintext(fd, deadline);
  ::close(fd);
  return probe;
}

}  // namespace troupe
