// TLS on the command line of the commands that run a node (`troupe node`, `troupe train` in a
// cluster): --tls_cert, --tls_key and --tls_ca (defaults: TROUPE_TLS_CERT, TROUPE_TLS_KEY,
// TROUPE_TLS_CA, which `troupe launch` sets), or --insecure (default: TROUPE_INSECURE=1) to run
// without TLS. A node with neither refuses to start (docs/security.md).
#pragma once

#include <optional>
#include <string>

#include "apps/flags.hpp"

namespace troupe::cli {

void add_tls_flags(FlagSet& flags);

// Makes the flags' TLS settings those of this process's runtime. Returns nullopt to go on, or
// the exit code (2) after printing why not: credentials that do not validate, none and no
// --insecure, or both. With --insecure it prints a warning and goes on.
std::optional<int> apply_tls_flags(const FlagSet& flags, const std::string& command);

}  // namespace troupe::cli
