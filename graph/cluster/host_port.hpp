// Parsing "host:port" network addresses, as written in cluster specs and node addresses.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// Splits "host:port" into its host and port. The host is a name or IPv4 address made of letters,
// digits, '.', '-' and '_', or an IPv6 address in brackets ("[::1]:2222"), returned without
// the brackets. The port is 1 to 5 decimal digits with a value in 0..65535; port 0 means "any
// free port, chosen when the server starts" (as in TensorFlow's "localhost:0").
// InvalidArgument naming the address and what was expected otherwise: no port ("localhost",
// "localhost:"), an empty host (":2222"), an unbracketed IPv6 address, a port out of range.
StatusOr<std::pair<std::string, int>> parse_host_port(std::string_view address);

}  // namespace troupe
