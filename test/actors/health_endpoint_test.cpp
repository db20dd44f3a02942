// Tests of the health endpoint Kubernetes probes (actors/health_endpoint.hpp): answers
// while the task's actors answer, 503 once it stops, the HTTP refusals, silent clients that
// cannot hold it. (The flag, as `troupe node` takes it: test/apps/node_test.cpp.)
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "troupe/actors/health_endpoint.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

// Sends `request` and returns everything the endpoint answers before it closes.
std::string exchange(int port, const std::string& request) {
  int fd = connect_to(port);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[512];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;)
    answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(health_endpoint)

BOOST_AUTO_TEST_CASE(ok_while_the_task_answers_503_once_it_stops) {
  auto server = value_or_throw(Server::create_local_server());
  auto endpoint = value_or_throw(HealthEndpoint::start(
      0, [&] { return server->check_health(std::chrono::milliseconds(1000)); }));
  BOOST_REQUIRE(endpoint->port() > 0);
  std::string healthy = exchange(endpoint->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(starts_with(healthy, "HTTP/1.0 200 OK\r\n"), healthy);
  BOOST_TEST(healthy.ends_with("\r\n\r\nok\n"), healthy);
  BOOST_TEST(
      starts_with(exchange(endpoint->port(), "GET /readyz HTTP/1.0\r\n\r\n"), "HTTP/1.0 200 OK"));
  server->stop();
  std::string stopping = exchange(endpoint->port(), "GET /readyz HTTP/1.0\r\n\r\n");
  BOOST_TEST(starts_with(stopping, "HTTP/1.0 503 Service Unavailable"), stopping);
  BOOST_TEST(stopping.find("/job:localhost/replica:0/task:0 is stopping") != std::string::npos,
             stopping);
}

BOOST_AUTO_TEST_CASE(refuses_what_is_not_a_probe_and_outlasts_a_silent_client) {
  auto endpoint = value_or_throw(HealthEndpoint::start(0, [] { return Status::OK(); }));
  const int port = endpoint->port();
  BOOST_TEST(starts_with(exchange(port, "GET /metrics HTTP/1.0\r\n\r\n"), "HTTP/1.0 404"));
  BOOST_TEST(starts_with(exchange(port, "POST /healthz HTTP/1.0\r\n\r\n"), "HTTP/1.0 405"));
  BOOST_TEST(starts_with(exchange(port, "hello\r\n"), "HTTP/1.0 400"));
  std::string head = exchange(port, "HEAD /healthz HTTP/1.0\r\n\r\n");
  BOOST_TEST(head.ends_with("Content-Length: 3\r\nConnection: close\r\n\r\n"), head);
  // Clients that connect and say nothing hold up no probe (they are dropped after a second).
  std::vector<int> silent;
  for (int i = 0; i < 10; ++i)
    silent.push_back(connect_to(port));
  auto start = std::chrono::steady_clock::now();
  std::string after = exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");
  auto waited = std::chrono::steady_clock::now() - start;
  BOOST_TEST(starts_with(after, "HTTP/1.0 200 OK"), after);
  // Not held up until the silent ones are dropped (a second): with room for a loaded machine.
  BOOST_TEST(waited < std::chrono::milliseconds(900));
  char byte;
  BOOST_TEST(::recv(silent[0], &byte, 1, 0) == 0);  // closed by the endpoint within its second
  for (int fd : silent)
    ::close(fd);
  auto taken = HealthEndpoint::start(port, [] { return Status::OK(); });
  BOOST_TEST(taken.status().code() == Code::kUnavailable);
  BOOST_TEST(taken.status().message().find(std::to_string(port)) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
