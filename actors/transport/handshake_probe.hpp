// Why a connection to a task ended during its handshake, told by trying one more.
//
// When CAF reports that a connection closed during its handshake, the cause may be a
// certificate the server refuses, a server without TLS (or with it, when this process has
// none), or a server that shut the connection down before it finished: its admission caps were
// full, or its handshake deadline passed (actors/transport/accept_gate.hpp). Only the first two
// are worth failing at once for; the third passes. CAF keeps none of this, so the probe opens
// one connection of its own and watches how the handshake goes: a TLS alert from the server
// (OpenSSL sends one when it refuses a certificate), a failed verification of the server's
// certificate here, a plaintext greeting, a close without an alert, or success.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "troupe/actors/transport/tls.hpp"

namespace troupe {

struct HandshakeProbe {
  enum class Verdict {
    kRefusedOurCertificate,    // the server sent a TLS alert: it refuses this process's
    kRefusedTheirCertificate,  // the server's certificate does not verify against our CA
    kProtocolMismatch,         // one side speaks TLS and the other does not
    kClosedWithoutAlert,       // shut down mid-handshake: admission cap, deadline, or not troupe
    kNoAnswer,                 // nothing in time: busy, or TLS to a plain client
    kAccepted,                 // the handshake succeeds now: the failure was transient
    kUnreachable,              // no connection at all
  };
  Verdict verdict = Verdict::kUnreachable;
  std::string detail;  // OpenSSL's reason or what was seen

  // Whether connecting again may succeed (not a credentials or protocol mismatch).
  bool retry_may_help() const;
  // A clause for an error message: what happened and what to check.
  std::string explanation() const;
};

// Opens one connection to `host`:`port` and runs a handshake as this process would: TLS with
// `tls` when it is enabled, else waiting for a plaintext node's greeting. Bounded by `timeout`.
HandshakeProbe probe_handshake(const TlsOptions& tls, const std::string& host, uint16_t port,
                               std::chrono::milliseconds timeout);

}  // namespace troupe
