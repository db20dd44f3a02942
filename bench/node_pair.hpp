// The two-process set-up of the transfer, latency and memory benchmarks: a cluster of ps:0 and
// worker:0 on free loopback ports, ps:0 a `troupe node` process, worker:0 a Server in this
// process that sessions connect to; with TLS credentials or, without, --insecure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apps/child_process.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe::bench {

class NodePair {
 public:
  // Throws StatusError if a port, the node or the server cannot be had. `shared_memory`: both
  // processes' tensor channels use shared memory for large tensors (else the socket). `tls`:
  // both processes' credentials (off: plain TCP). `calls`: worker:0's sessions send steps to
  // ps:0 as calls on the tensor channel (ServerOptions::channel_calls).
  explicit NodePair(const std::vector<std::string>& extra_node_flags = {},
                    bool shared_memory = true, const TlsOptions& tls = {}, bool calls = true);
  ~NodePair();

  const std::string& target() const { return server_->target(); }
  // The runtime sessions to target() must use (it has the TLS credentials).
  const std::shared_ptr<Runtime>& runtime() const { return runtime_; }
  int node_pid() const { return node_->pid(); }

 private:
  std::shared_ptr<Runtime> runtime_;
  std::unique_ptr<testing::ChildProcess> node_;
  std::unique_ptr<Server> server_;
};

}  // namespace troupe::bench
