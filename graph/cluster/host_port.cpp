// parse_host_port: the grammar of "host:port" addresses.
#include "troupe/graph/cluster/host_port.hpp"

#include <algorithm>

namespace troupe {
namespace {

constexpr int kMaxPort = 65535;

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_host_name_char(char c) {
  return is_ascii_alnum(c) || c == '.' || c == '-' || c == '_';
}

// Inside brackets: hex digits, ':' and '.' (an embedded IPv4 tail), and "%zone" suffixes.
bool is_ipv6_char(char c) {
  return is_ascii_alnum(c) || c == ':' || c == '.' || c == '%' || c == '-' || c == '_';
}

}  // namespace

StatusOr<std::pair<std::string, int>> parse_host_port(std::string_view address) {
  constexpr std::string_view kExpected = "expected \"host:port\" or \"[ipv6]:port\"";
  std::string_view host;
  std::string_view rest;  // ":port", or what follows the host
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos) {
      return errors::InvalidArgument("invalid address '{}': unterminated '[' ({})", address,
                                     kExpected);
    }
    host = address.substr(1, close - 1);
    rest = address.substr(close + 1);
    if (host.empty() || host.find(':') == std::string_view::npos ||
        !std::all_of(host.begin(), host.end(), is_ipv6_char)) {
      return errors::InvalidArgument("invalid address '{}': '[{}]' is not an IPv6 address ({})",
                                     address, host, kExpected);
    }
  } else {
    size_t colon = address.find(':');
    if (colon == std::string_view::npos) {
      return errors::InvalidArgument("invalid address '{}': it has no port ({})", address,
                                     kExpected);
    }
    if (address.find(':', colon + 1) != std::string_view::npos) {
      return errors::InvalidArgument(
          "invalid address '{}': more than one ':' ({}; write IPv6 hosts in brackets)", address,
          kExpected);
    }
    host = address.substr(0, colon);
    rest = address.substr(colon);
    if (host.empty()) {
      return errors::InvalidArgument("invalid address '{}': the host is empty ({})", address,
                                     kExpected);
    }
    auto bad = std::find_if_not(host.begin(), host.end(), is_host_name_char);
    if (bad != host.end()) {
      return errors::InvalidArgument(
          "invalid address '{}': the host '{}' contains '{}' (expected letters, digits, '.', "
          "'-' or '_', or an IPv6 address in brackets)",
          address, host, *bad);
    }
  }
  if (rest.empty() || rest.front() != ':') {
    return errors::InvalidArgument("invalid address '{}': it has no port ({})", address, kExpected);
  }
  std::string_view port_text = rest.substr(1);
  if (port_text.empty()) {
    return errors::InvalidArgument("invalid address '{}': the port is empty ({})", address,
                                   kExpected);
  }
  if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(),
                                           [](char c) { return c >= '0' && c <= '9'; })) {
    return errors::InvalidArgument(
        "invalid address '{}': the port '{}' is not a number in 0..{} ({})", address, port_text,
        kMaxPort, kExpected);
  }
  int port = 0;
  for (char c : port_text)
    port = port * 10 + (c - '0');
  if (port > kMaxPort) {
    return errors::InvalidArgument("invalid address '{}': the port {} is above {} ({})", address,
                                   port, kMaxPort, kExpected);
  }
  return std::pair<std::string, int>(std::string(host), port);
}

}  // namespace troupe
