// Runtime flags: from flags or environment to the shared runtime's options.
#include "troupe/apps/cli/runtime_flags.hpp"

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/graph/core/buffer_pool.hpp"

namespace troupe::cli {

void add_runtime_flags(FlagSet& flags) {
  TlsOptions env = TlsOptions::from_environment();
  flags.add_string("tls_cert", env.certificate_file,
                   "this task's certificate, PEM (default: $TROUPE_TLS_CERT)");
  flags.add_string("tls_key", env.key_file, "its private key, PEM (default: $TROUPE_TLS_KEY)");
  flags.add_string("tls_ca", env.ca_file,
                   "the cluster's CA certificate that peers must be signed by, PEM "
                   "(default: $TROUPE_TLS_CA)");
  flags.add_bool("insecure", insecure_by_environment(),
                 "run without TLS: unencrypted, and anyone who reaches the port can join "
                 "(default: $TROUPE_INSECURE=1)");
  flags.add_int("max_message_bytes", static_cast<int64_t>(kDefaultMaxMessageBytes),
                "the largest tensor one message from another process may carry (4096 .. 2 GiB)");
  flags.add_int("buffer_pool_bytes", static_cast<int64_t>(BufferPool::kDefaultLimit),
                "memory of freed tensors of 1 MiB and more kept for reuse (0: none)");
  AdmissionOptions admission;
  flags.add_int("max_pending_connections", admission.max_pending,
                "connections to this task's port that have not finished their handshake, at most");
  flags.add_int("max_pending_connections_per_peer", admission.max_pending_per_peer,
                "the same, from one peer address");
  flags.add_int("handshake_timeout_ms", admission.handshake_timeout.count(),
                "how long a new connection has to finish its handshake before it is closed");
}

bool insecure_by_environment() {
  const char* insecure = std::getenv("TROUPE_INSECURE");
  return insecure != nullptr && std::string_view(insecure) == "1";
}

std::optional<int> apply_runtime_flags(const FlagSet& flags, const std::string& command) {
  RuntimeOptions options;
  options.tls.certificate_file = flags.get_string("tls_cert");
  options.tls.key_file = flags.get_string("tls_key");
  options.tls.ca_file = flags.get_string("tls_ca");
  std::string prefix = "troupe " + command + ": ";
  bool insecure = flags.get_bool("insecure");
  if (options.tls.enabled() && insecure) {
    std::cerr << prefix
              << "--insecure and TLS credentials (--tls_cert/--tls_key/--tls_ca or "
                 "TROUPE_TLS_*) both given: choose one\n";
    return 2;
  }
  if (!options.tls.enabled() && !insecure) {
    std::cerr << prefix
              << "no TLS credentials: give --tls_cert, --tls_key and --tls_ca (or set "
                 "TROUPE_TLS_CERT, TROUPE_TLS_KEY and TROUPE_TLS_CA; docs/security.md), or "
                 "--insecure to run without TLS\n";
    return 2;
  }
  int64_t limit = flags.get_int("max_message_bytes");
  if (limit < static_cast<int64_t>(kMinMaxMessageBytes) ||
      limit > static_cast<int64_t>(kDefaultMaxMessageBytes)) {
    std::cerr << prefix << "--max_message_bytes=" << limit << " is out of range (expected "
              << kMinMaxMessageBytes << " .. " << kDefaultMaxMessageBytes << ")\n";
    return 2;
  }
  options.max_message_bytes = static_cast<uint64_t>(limit);
  for (auto [name, field] :
       {std::pair{"max_pending_connections", &options.admission.max_pending},
        std::pair{"max_pending_connections_per_peer", &options.admission.max_pending_per_peer}}) {
    int64_t value = flags.get_int(name);
    if (value < 1 || value > 1000000) {
      std::cerr << prefix << "--" << name << "=" << value
                << " is out of range (expected 1 .. 1000000)\n";
      return 2;
    }
    *field = static_cast<int>(value);
  }
  int64_t handshake_ms = flags.get_int("handshake_timeout_ms");
  if (handshake_ms < 1) {
    std::cerr << prefix << "--handshake_timeout_ms=" << handshake_ms
              << " is out of range (expected at least 1 ms)\n";
    return 2;
  }
  options.admission.handshake_timeout = std::chrono::milliseconds(handshake_ms);
  int64_t pool_bytes = flags.get_int("buffer_pool_bytes");
  if (pool_bytes < 0) {
    std::cerr << prefix << "--buffer_pool_bytes=" << pool_bytes
              << " is negative (expected bytes >= 0; 0 keeps no memory for reuse)\n";
    return 2;
  }
  if (insecure) {
    std::cerr << prefix
              << "warning: --insecure: traffic is unencrypted and unauthenticated; any process "
                 "that reaches this node's port can join the cluster and run graphs on it\n";
  }
  Status status = options.tls.validate({"--tls_cert", "--tls_key", "--tls_ca"});
  if (status.ok()) status = Runtime::set_default_options(options);
  if (!status.ok()) {
    std::cerr << prefix << status.to_string() << "\n";
    return 2;
  }
  BufferPool::instance().set_limit(static_cast<size_t>(pool_bytes));
  return std::nullopt;
}

}  // namespace troupe::cli
