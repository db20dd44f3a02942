// ChannelTls: how two tensor channels of a TLS cluster authenticate each other and agree on the
// keys of their sealed streams (actors/transport/sealed_stream.hpp).
//
// On a freshly connected socket both ends run a TLS 1.3 handshake with the task's own
// credentials (--tls_cert, --tls_key, --tls_ca): each presents its certificate and verifies the
// other's against the cluster's CA, as CAF's OpenSSL module does for actor messages. Nothing
// else is read from the socket before it succeeds. Then each end exports 88 bytes of keying
// material (RFC 8446, 7.5; label "EXPORTER-troupe tensor channel", context "troupe frames v"
// and the frame version): the keys and IVs of the connector's stream and of the acceptor's. The
// TLS session itself is dropped (no tickets are issued, so none of its bytes follow the
// handshake); the sealed streams carry everything after.
#pragma once

#include <openssl/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "troupe/actors/transport/sealed_stream.hpp"
#include "troupe/actors/transport/tls.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

class ChannelTls {
 public:
  // The context for `options` (enabled, and checked by TlsOptions::validate already):
  // InvalidArgument naming the file OpenSSL cannot use.
  static StatusOr<std::shared_ptr<const ChannelTls>> create(const TlsOptions& options);
  ChannelTls(const ChannelTls&) = delete;
  ChannelTls& operator=(const ChannelTls&) = delete;

  struct Keys {
    StreamKeys send;
    StreamKeys receive;
  };
  enum class Role { kConnector, kAcceptor };

  // Runs the handshake on the connected socket `fd` (left blocking) within `timeout`.
  // Unavailable naming `peer` and OpenSSL's reason if it fails, DeadlineExceeded if the peer
  // is too slow.
  StatusOr<Keys> handshake(int fd, Role role, std::chrono::milliseconds timeout,
                           const std::string& peer) const;

 private:
  explicit ChannelTls(std::shared_ptr<SSL_CTX> context) : context_(std::move(context)) {}
  std::shared_ptr<SSL_CTX> context_;
};

}  // namespace troupe
