// HealthEndpoint: a poll loop on one listening socket, one request per connection.
#include "troupe/apps/cli/health_endpoint.hpp"

#include "troupe/apps/cli/flags.hpp"

#include <fmt/core.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace troupe::cli {
namespace {

constexpr int kPollMs = 100;             // how soon the thread sees the destructor
constexpr int kRequestTimeoutMs = 1000;  // for the request line
constexpr size_t kMaxRequestBytes = 1024;

void send_all(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string response(int code, const char* reason, const std::string& body) {
  return fmt::format(
      "HTTP/1.0 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: "
      "close\r\n\r\n{}",
      code, reason, body.size(), body);
}

// The request line's method and path, read within kRequestTimeoutMs; empty if it is not one.
std::pair<std::string, std::string> read_request_line(int client) {
  std::string request;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestTimeoutMs);
  while (request.find("\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd readable{client, POLLIN, 0};
    if (left <= 0 || ::poll(&readable, 1, static_cast<int>(left)) <= 0) return {};
    char buffer[512];
    ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) return {};
    request.append(buffer, static_cast<size_t>(n));
  }
  std::string line = request.substr(0, request.find("\r\n"));
  size_t space = line.find(' ');
  size_t second = line.find(' ', space + 1);
  if (space == std::string::npos || second == std::string::npos ||
      line.compare(second + 1, 5, "HTTP/") != 0) {
    return {};
  }
  return {line.substr(0, space), line.substr(space + 1, second - space - 1)};
}

}  // namespace

StatusOr<std::unique_ptr<HealthEndpoint>> HealthEndpoint::start(int port,
                                                                std::function<Status()> check) {
  if (port < 0 || port > 65535) {
    return errors::InvalidArgument("--health_port={} is not a port (0..65535)", port);
  }
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = fd >= 0;
  if (!v6) fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errors::Unavailable("health endpoint: socket: {}", std::strerror(errno));
  int one = 1, zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int bound;
  if (v6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));  // IPv4 too
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_addr = in6addr_any;
    address.sin6_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  } else {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons(static_cast<uint16_t>(port));
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  if (bound != 0 || ::listen(fd, 16) != 0) {
    int err = errno;
    ::close(fd);
    return errors::Unavailable("cannot listen on the health port {}: {}", port, std::strerror(err));
  }
  sockaddr_storage actual{};
  socklen_t length = sizeof(actual);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &length);
  int actual_port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&actual)->sin6_port
                             : reinterpret_cast<sockaddr_in*>(&actual)->sin_port);
  std::unique_ptr<HealthEndpoint> endpoint(new HealthEndpoint(fd, actual_port, std::move(check)));
  endpoint->thread_ = std::thread([raw = endpoint.get()] { raw->serve(); });
  return endpoint;
}

HealthEndpoint::HealthEndpoint(int fd, int port, std::function<Status()> check)
    : fd_(fd), port_(port), check_(std::move(check)) {}

HealthEndpoint::~HealthEndpoint() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void HealthEndpoint::serve() {
  while (!stopping_) {
    pollfd listening{fd_, POLLIN, 0};
    if (::poll(&listening, 1, kPollMs) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    answer(client);
    ::close(client);
  }
}

void HealthEndpoint::answer(int client) {
  auto [method, path] = read_request_line(client);
  if (method.empty()) {
    send_all(client, response(400, "Bad Request", "expected an HTTP request line\n"));
  } else if (method != "GET" && method != "HEAD") {
    send_all(client, response(405, "Method Not Allowed", "GET /healthz or /readyz\n"));
  } else if (path != "/healthz" && path != "/readyz") {
    send_all(client, response(404, "Not Found", "GET /healthz or /readyz\n"));
  } else if (Status status = check_(); status.ok()) {
    send_all(client, response(200, "OK", "ok\n"));
  } else {
    send_all(client, response(503, "Service Unavailable", status.to_string() + "\n"));
  }
}

void add_health_port_flag(FlagSet& flags) {
  const char* port = std::getenv("TROUPE_HEALTH_PORT");
  flags.add_string("health_port", port != nullptr && *port != '\0' ? port : "0",
                   "serve GET /healthz and /readyz for probes on this port (0: none; default: "
                   "$TROUPE_HEALTH_PORT)");
}

StatusOr<std::unique_ptr<HealthEndpoint>> start_health_endpoint(const FlagSet& flags,
                                                                Server& server) {
  const std::string text = flags.get_string("health_port");
  char* end = nullptr;
  errno = 0;
  long port = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || port < 0 || port > 65535) {
    return errors::InvalidArgument(
        "--health_port='{}' (or $TROUPE_HEALTH_PORT) is not a port (expected 0..65535, 0 for "
        "none)",
        text);
  }
  if (port == 0) return std::unique_ptr<HealthEndpoint>();
  return HealthEndpoint::start(static_cast<int>(port), [&server] {
    return server.check_health(std::chrono::milliseconds(1000));
  });
}

}  // namespace troupe::cli
