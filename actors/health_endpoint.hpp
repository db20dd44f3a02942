// HealthEndpoint: the HTTP port Kubernetes probes a task on (`--health_port`, docs/deploy.md;
// apps/cli/health_port.hpp starts it for the commands).
//
//   GET /healthz, GET /readyz: 200 "ok" while the task's actors answer within a second and it
//   is not stopping (Server::check_health), else 503 with the reason. A task whose actor
//   system no longer schedules work fails its liveness probe and is restarted.
// Other paths are 404, other methods 405, a request that is not HTTP 400. Plain HTTP on a port of
// its own: the task's port admits only the cluster's handshake, and a probe there would be refused
// as a connection that never finishes it. One thread serves one request at a time; a client gets a
// second to send its request line, and the answer says why a check failed.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class HealthEndpoint {
 public:
  // Listens on `port` on every interface (0: a free port, port() says which) and answers with
  // `check`, which must return within about a second. Unavailable naming the port if it cannot
  // be bound.
  static StatusOr<std::unique_ptr<HealthEndpoint>> start(int port, std::function<Status()> check);
  ~HealthEndpoint();  // stops listening and joins the thread
  HealthEndpoint(const HealthEndpoint&) = delete;
  HealthEndpoint& operator=(const HealthEndpoint&) = delete;

  int port() const { return port_; }

 private:
  HealthEndpoint(int fd, int port, std::function<Status()> check);
  void serve();
  void answer(int client, const std::string& request_line);

  int fd_;
  int port_;
  std::function<Status()> check_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace troupe
