// `troupe node`: one task of a cluster — the node binary users run on every machine. It takes
// its cluster and role from the seed's flags, a cluster file or TF_CONFIG
// (apps/cli/cluster_config.hpp), serves until SIGTERM or SIGINT, then stops cleanly.
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "troupe/actors/server.hpp"
#include "troupe/apps/cli/cluster_config.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/cli/exit_now.hpp"
#include "troupe/apps/cli/health_port.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/apps/cli/runtime_flags.hpp"
#include "troupe/apps/cli/stop_signals.hpp"

namespace troupe::cli {
namespace {

constexpr int kDefaultPort = 2222;

FlagSet node_flags() {
  FlagSet flags(*find_command_help("node"));
  add_cluster_flags(flags);
  add_runtime_flags(flags);
  add_log_level_flag(flags);
  add_health_port_flag(flags);
  flags.add_int("port", kDefaultPort, "port of a node started without a cluster");
  flags.add_int("intra_op_threads", 0,
                "threads per kernel (0: the cores shared among the tasks on this host)");
  flags.add_int("cpu_devices", 1,
                "CPU devices of the task, CPU:0 .. CPU:k-1, sharing its intra-op threads");
  flags.add_int("connect_timeout_ms", 60000, "how long to keep trying to reach another task");
  flags.add_int("heartbeat_interval_ms", 1000, "how often connected tasks are asked if alive");
  flags.add_int("heartbeat_timeout_ms", 4000,
                "how long a task has to answer before it is lost (0: no heartbeats)");
  flags.add_bool("tensor_channel", true,
                 "move large tensors to other processes on a socket of their own (with TLS: "
                 "authenticated and encrypted with the task's credentials)");
  flags.add_int("channel_port", 0, "the tensor channel's port (0: any free one)");
  flags.add_bool("shared_memory", true,
                 "with the tensor channel: large tensors for processes on this host go through "
                 "shared memory");
  return flags;
}

// The one-task cluster of a node started without one.
StatusOr<ServerDef> standalone(int64_t port) {
  if (port < 0 || port > 65535) {
    return errors::InvalidArgument("--port={} is not a port (0..65535)", port);
  }
  TROUPE_ASSIGN_OR_RETURN(
      ClusterSpec cluster,
      ClusterSpec::create({{"localhost", {fmt::format("localhost:{}", port)}}}));
  return ServerDef::create(cluster, "localhost", 0);
}

}  // namespace

static int run_node(const Args& args) {
  FlagSet flags = node_flags();
  if (auto exit_code = flags.parse_command_line(args)) return *exit_code;
  if (auto exit_code = apply_log_level_flag(flags, "node")) return *exit_code;
  auto configured = server_def_from_flags(flags);
  StatusOr<ServerDef> def = configured.ok() && configured->has_value()
                                ? StatusOr<ServerDef>(**configured)
                            : configured.ok() ? standalone(flags.get_int("port"))
                                              : StatusOr<ServerDef>(configured.status());
  if (!def.ok()) {
    std::cerr << "troupe node: " << def.status().message() << "\n";
    return 2;
  }
  def->default_session_config.intra_op_threads =
      static_cast<int>(flags.get_int("intra_op_threads"));
  def->default_session_config.cpu_devices = static_cast<int>(flags.get_int("cpu_devices"));
  auto health_port = health_port_of(flags);
  if (!health_port.ok()) {
    std::cerr << "troupe node: " << health_port.status().message() << "\n";
    return 2;
  }

  StopSignals stop_signals;

  for (const char* name : {"connect_timeout_ms", "heartbeat_interval_ms", "heartbeat_timeout_ms"}) {
    if (flags.get_int(name) < 0) {
      std::cerr << "troupe node: --" << name << "=" << flags.get_int(name)
                << " is negative (expected milliseconds >= 0)\n";
      return 2;
    }
  }
  if (flags.get_int("heartbeat_interval_ms") == 0 && flags.get_int("heartbeat_timeout_ms") > 0) {
    std::cerr << "troupe node: --heartbeat_interval_ms=0 needs --heartbeat_timeout_ms=0 "
                 "(heartbeats off)\n";
    return 2;
  }
  if (auto exit_code = apply_runtime_flags(flags, "node")) return *exit_code;
  ServerOptions options;
  options.peers.connect_timeout = std::chrono::milliseconds(flags.get_int("connect_timeout_ms"));
  options.peers.heartbeat_interval =
      std::chrono::milliseconds(flags.get_int("heartbeat_interval_ms"));
  options.peers.heartbeat_timeout =
      std::chrono::milliseconds(flags.get_int("heartbeat_timeout_ms"));
  options.tensor_channel = flags.get_bool("tensor_channel");
  if (int64_t port = flags.get_int("channel_port"); port < 0 || port > 65535) {
    std::cerr << "troupe node: --channel_port=" << port << " is not a port (0..65535)\n";
    return 2;
  } else {
    options.channel_port = static_cast<uint16_t>(port);
  }
  options.shared_memory = flags.get_bool("shared_memory");
  auto server = Server::create(*def, options);
  if (!server.ok()) {
    std::cerr << "troupe node: " << server.status().to_string() << "\n";
    return 1;
  }
  std::cout << "troupe node: " << (*server)->task_name() << " serving at " << (*server)->target()
            << std::endl;
  auto health = start_health_endpoint(*health_port, **server, "node");
  if (!health.ok()) {
    std::cerr << "troupe node: " << health.status().message() << "\n";
    return 1;
  }

  std::thread waiter([&] {
    pthread_setname_np(pthread_self(), "troupe-signals");
    int signal = stop_signals.wait();
    std::cout << "troupe node: " << strsignal(signal) << ", stopping" << std::endl;
    (*server)->stop();
  });
  (*server)->join();
  waiter.join();
  std::cout << "troupe node: " << (*server)->task_name() << " stopped" << std::endl;
  exit_now(0);
}

int node_command(const Args& args) {
  return exit_code_of("node", [&] { return run_node(args); });
}

}  // namespace troupe::cli
