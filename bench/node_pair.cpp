// ps:0 as a node process, worker:0 here.
#include "node_pair.hpp"

#include <signal.h>

#include <fmt/core.h>

#include "troupe/actors/free_ports.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe::bench {

NodePair::NodePair(const std::vector<std::string>& extra_node_flags, bool shared_memory,
                   const TlsOptions& tls, bool calls) {
  std::string ps = fmt::format("127.0.0.1:{}", value_or_throw(pick_free_port()));
  std::string worker = fmt::format("127.0.0.1:{}", value_or_throw(pick_free_port()));
  std::vector<std::string> argv = {TROUPE_CLI,
                                   "node",
                                   "--ps_hosts=" + ps,
                                   "--worker_hosts=" + worker,
                                   "--job_name=ps",
                                   "--task_index=0",
                                   fmt::format("--shared_memory={}", shared_memory)};
  if (tls.enabled()) {
    argv.insert(argv.end(), {"--tls_cert=" + tls.certificate_file, "--tls_key=" + tls.key_file,
                             "--tls_ca=" + tls.ca_file});
  } else {
    argv.push_back("--insecure");
  }
  argv.insert(argv.end(), extra_node_flags.begin(), extra_node_flags.end());
  node_ = std::make_unique<testing::ChildProcess>(argv);
  if (!node_->wait_for("serving at", 30000)) {
    throw StatusError(errors::Unavailable("the ps node did not start: {}", node_->output()));
  }
  auto cluster = value_or_throw(ClusterSpec::create({{"ps", {ps}}, {"worker", {worker}}}));
  runtime_ = tls.enabled() ? value_or_throw(Runtime::create(RuntimeOptions{.tls = tls}))
                           : value_or_throw(Runtime::shared_default());
  ServerOptions options;
  options.shared_memory = shared_memory;
  options.channel_calls = calls;
  options.runtime = runtime_;
  server_ = value_or_throw(
      Server::create(value_or_throw(ServerDef::create(cluster, "worker", 0)), options));
}

NodePair::~NodePair() {
  server_->stop();
  node_->stop(SIGTERM, 10000);
}

}  // namespace troupe::bench
