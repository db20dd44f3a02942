// TLS settings of an actor system: every connection it makes or accepts goes through CAF's
// OpenSSL module, both sides present a certificate, and each verifies the other's against the
// cluster's CA. A process without the cluster's credentials can neither join nor run graphs.
#pragma once

#include <memory>
#include <string>

#include <openssl/types.h>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// OpenSSL's reasons for the last failure on this thread, oldest first, "; "-separated (empty if
// it recorded none); its error queue is cleared.
std::string take_openssl_errors();

struct TlsOptions {
  std::string certificate_file;  // PEM: this process's certificate (and any chain after it)
  std::string key_file;          // PEM: its private key
  std::string ca_file;           // PEM: the CA certificate(s) peers' certificates must chain to
  std::string key_passphrase;    // for an encrypted key_file; empty for none

  // Whether TLS is asked for (any file given).
  bool enabled() const;

  // OK when TLS is off or all three files load and the key belongs to the certificate;
  // InvalidArgument naming the file and what is wrong with it otherwise. `names` says what
  // to call the three settings in messages (flags, environment variables).
  struct Names {
    std::string certificate = "certificate_file";
    std::string key = "key_file";
    std::string ca = "ca_file";
  };
  Status validate(const Names& names) const;
  Status validate() const { return validate(Names{}); }

  // An OpenSSL context holding these credentials, with validate()'s checks passed (its errors
  // otherwise): for the sockets troupe secures itself (actors/transport/channel_tls.hpp).
  StatusOr<std::shared_ptr<SSL_CTX>> load(const Names& names) const;
  StatusOr<std::shared_ptr<SSL_CTX>> load() const { return load(Names{}); }

  // The settings in the environment: TROUPE_TLS_CERT, TROUPE_TLS_KEY, TROUPE_TLS_CA (what
  // `troupe launch` gives the tasks it starts). Empty fields where a variable is unset.
  static TlsOptions from_environment();
  static Names environment_names();
};

}  // namespace troupe
