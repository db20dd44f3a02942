// Throwaway TLS credentials for a cluster on one machine (`troupe launch`): a fresh P-256 key
// and a self-signed certificate that is also the cluster's CA, in a new directory only this
// user can read, removed when the object is destroyed. Every task presents the same
// certificate; a process without the files can neither join nor run graphs.
#pragma once

#include <memory>
#include <string>

#include "troupe/actors/transport/tls.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe::deploy {

class ThrowawayCredentials {
 public:
  // Makes them under $TMPDIR (default /tmp). Internal if OpenSSL fails, or the errno's code
  // if the files cannot be written.
  // `common_name` is the certificate's subject (who made it: "troupe launch", "troupe k8s").
  static StatusOr<std::unique_ptr<ThrowawayCredentials>> create(
      const std::string& common_name = "troupe launch");
  ~ThrowawayCredentials();
  ThrowawayCredentials(const ThrowawayCredentials&) = delete;
  ThrowawayCredentials& operator=(const ThrowawayCredentials&) = delete;

  const std::string& directory() const { return directory_; }
  TlsOptions tls() const;

 private:
  explicit ThrowawayCredentials(std::string directory) : directory_(std::move(directory)) {}
  std::string directory_;
};

}  // namespace troupe::deploy
