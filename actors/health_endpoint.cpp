// HealthEndpoint: a poll loop on one listening socket, one request per connection.
#include "troupe/actors/health_endpoint.hpp"

#include <fmt/core.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace troupe {
namespace {

constexpr int kPollMs = 100;  // how soon the thread sees the destructor
constexpr auto kRequestTimeout = std::chrono::milliseconds(1000);  // for the request line
constexpr size_t kMaxRequestBytes = 1024;
constexpr size_t kMaxClients = 64;  // connections waiting for their request line

void send_all(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

// The whole response; a HEAD request's has no body.
std::string response(int code, const char* reason, const std::string& body, bool head) {
  return fmt::format(
      "HTTP/1.0 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: "
      "close\r\n\r\n{}",
      code, reason, body.size(), head ? "" : body);
}

// The method and path of an HTTP request line ("GET /healthz HTTP/1.1"); empty if it is not one.
std::pair<std::string, std::string> parse_request_line(const std::string& line) {
  size_t space = line.find(' ');
  size_t second = space == std::string::npos ? space : line.find(' ', space + 1);
  if (second == std::string::npos || line.compare(second + 1, 5, "HTTP/") != 0) return {};
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

// Every connection waits for its request line in one poll set, so a client that says nothing
// holds up no other; the oldest is dropped when kMaxClients wait.
void HealthEndpoint::serve() {
  struct Client {
    int fd;
    std::chrono::steady_clock::time_point deadline;
    std::string request;
  };
  std::vector<Client> clients;
  auto drop = [&](size_t i) {
    ::close(clients[i].fd);
    clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i));
  };
  bool accepting = true;  // false for one round after the process ran out of descriptors
  while (!stopping_) {
    std::vector<pollfd> polled = {{fd_, static_cast<short>(accepting ? POLLIN : 0), 0}};
    for (const Client& client : clients)
      polled.push_back({client.fd, POLLIN, 0});
    accepting = true;
    if (::poll(polled.data(), polled.size(), kPollMs) < 0) continue;
    for (size_t i = clients.size(); i-- > 0;) {
      Client& client = clients[i];
      if (polled[i + 1].revents != 0) {
        char buffer[512];
        ssize_t n = ::recv(client.fd, buffer, sizeof(buffer), 0);
        if (n <= 0) {
          drop(i);
          continue;
        }
        client.request.append(buffer, static_cast<size_t>(n));
      }
      if (size_t end = client.request.find("\r\n"); end != std::string::npos) {
        answer(client.fd, client.request.substr(0, end));
        drop(i);
      } else if (client.request.size() >= kMaxRequestBytes) {
        answer(client.fd, "");
        drop(i);
      } else if (std::chrono::steady_clock::now() > client.deadline) {
        drop(i);
      }
    }
    if ((polled[0].revents & POLLIN) != 0) {
      int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (client < 0) {
        // Out of descriptors: the connection stays queued; do not spin on it.
        accepting = errno != EMFILE && errno != ENFILE;
        continue;
      }
      if (clients.size() >= kMaxClients) drop(0);
      clients.push_back({client, std::chrono::steady_clock::now() + kRequestTimeout, {}});
    }
  }
  for (const Client& client : clients)
    ::close(client.fd);
}

void HealthEndpoint::answer(int client, const std::string& request_line) {
  auto [method, path] = parse_request_line(request_line);
  const bool head = method == "HEAD";
  auto reply = [&](int code, const char* reason, const std::string& body) {
    send_all(client, response(code, reason, body, head));
  };
  if (method.empty()) {
    reply(400, "Bad Request", "expected an HTTP request line\n");
  } else if (method != "GET" && !head) {
    reply(405, "Method Not Allowed", "GET /healthz or /readyz\n");
  } else if (path != "/healthz" && path != "/readyz") {
    reply(404, "Not Found", "GET /healthz or /readyz\n");
  } else if (Status status = check_(); status.ok()) {
    reply(200, "OK", "ok\n");
  } else {
    reply(503, "Service Unavailable", status.to_string() + "\n");
  }
}

}  // namespace troupe
