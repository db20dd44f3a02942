// The runtime's options on the command line of the commands that run a node (`troupe node`,
// `troupe train` in a cluster): TLS — --tls_cert, --tls_key and --tls_ca (defaults:
// TROUPE_TLS_CERT, TROUPE_TLS_KEY, TROUPE_TLS_CA, which `troupe launch` sets), or --insecure
// (default: TROUPE_INSECURE=1) to run without; a node with neither refuses to start
// (docs/security.md) — --max_message_bytes, and --buffer_pool_bytes (graph/core/buffer_pool.hpp).
#pragma once

#include <optional>
#include <string>

#include "troupe/apps/cli/flags.hpp"

namespace troupe::cli {

void add_runtime_flags(FlagSet& flags);

// Whether TROUPE_INSECURE=1 is set: the default of --insecure here and in `troupe launch`.
bool insecure_by_environment();

// Makes the flags' settings those of this process's runtime. Returns nullopt to go on, or the
// exit code (2) after printing why not: credentials that do not validate, none and no
// --insecure, or both, a limit out of range. With --insecure it prints a warning and goes on.
std::optional<int> apply_runtime_flags(const FlagSet& flags, const std::string& command);

}  // namespace troupe::cli
