// Server: one task of a cluster — TensorFlow's tf.train.Server. It runs the task's device
// actors (the worker service), its master service (which sessions connect to by target()) and
// its directory (which finds the other tasks by their addresses in the ClusterSpec, or, for
// the tasks of one in-process group such as a LocalCluster, by name in this process).
//
//   auto server = Server::create_local_server();            // in-process, one task
//   Session session(server->target());
//
//   auto def = ServerDef::create(cluster, "worker", 1);      // one task of a real cluster
//   auto node = Server::create(*def);                         // listens on its address
//   node->join();                                            // until stop() (e.g. on SIGTERM)
//
// A Server stops when stop() is called or it is destroyed; join() waits for that. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/actors/directory.hpp"
#include "troupe/graph/cluster/server_def.hpp"

namespace troupe {

class CpuPool;
class PartitionRunHook;
class TensorChannel;

class Runtime;

struct ServerOptions {
  // Listen on the task's address so other processes can reach it. Off for servers that only
  // talk within this process (Server::create_local_server, LocalCluster).
  bool listen = true;
  // The actor system; the process's shared one when null. Its TLS settings (RuntimeOptions)
  // decide whether the server listens and connects with TLS.
  std::shared_ptr<Runtime> runtime;
  // How to reach the other tasks and notice when they die or freeze (actors/directory.hpp).
  PeerOptions peers;
  // What the task's devices do with each partition run (actors/partition_run_hook.hpp): the
  // simulated faults of actors/sim/fault_injector.hpp, which LocalCluster sets from
  // LocalClusterOptions::faults. None when null.
  std::shared_ptr<PartitionRunHook> faults;
  // The thread pool of the task's CPU devices, shared with other tasks of this process
  // (LocalCluster gives all its tasks one, sized to the machine). Null: each device makes its
  // own of ServerDef::intra_op_threads threads (docs/clusters.md, "Threads per task").
  std::shared_ptr<const CpuPool> cpu_pool;
  // The in-process group the task belongs to (LocalCluster gives its tasks one): the group's
  // tasks find each other by name in this process, whatever the addresses in their ClusterSpec
  // say, so a task may listen on port 0 and its peers still find it. Empty: by address.
  std::string in_process_group;
  // A listening server moves large tensors to and from other processes on a channel of its
  // own beside CAF's messages (actors/transport/tensor_channel.hpp, docs/wire.md), and its master
  // sessions send steps to devices of other processes as calls on it
  // (actors/transport/call_proxy.hpp): one more port on the task's interface. With TLS, the
  // channel authenticates peers with the same credentials and seals what it carries. Off:
  // everything as actor messages.
  bool tensor_channel = true;
  // The channel's port; 0 picks a free one. Peers learn it from the task either way.
  uint16_t channel_port = 0;
  // With the channel: the bytes of large tensors for processes on the same host go through
  // shared memory rather than the socket (actors/transport/shared_ring.hpp). Off: on the socket.
  bool shared_memory = true;
  // With the channel: steps to devices of other processes go as calls on it. Off: as actor
  // messages (to compare the two: bench/latency_bench.cpp).
  bool channel_calls = true;
};

class Server {
 public:
  // Starts the task `server_def` names. With options.listen it listens on the task's address:
  // on that host's interface if the host is an IP address or "localhost", else on all; port 0
  // picks a free port (address() then has the real one). Unavailable if the port cannot be
  // bound (e.g. already taken), naming the address; InvalidArgument when the shared runtime's
  // TLS settings from the environment do not validate.
  static StatusOr<std::unique_ptr<Server>> create(const ServerDef& server_def,
                                                  ServerOptions options = {});

  // A single-task cluster (job "localhost") in this process, started; as TensorFlow's
  // Server.create_local_server(). Sessions reach it through target() ("inproc://<n>").
  // InvalidArgument when the shared runtime's TLS settings from the environment do not
  // validate.
  static StatusOr<std::unique_ptr<Server>> create_local_server(
      SessionConfig config = {}, std::shared_ptr<Runtime> runtime = nullptr);

  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The session target of this server: "troupe://host:port" when listening, else
  // "inproc://<n>". Both work from this process; the first from anywhere.
  const std::string& target() const { return target_; }
  // The tensor channel of a listening server (ServerOptions::tensor_channel); null otherwise.
  const TensorChannel* tensor_channel() const;
  // The in-process target, which skips the network from this process.
  const std::string& inproc_target() const { return inproc_target_; }
  // The task's "host:port" (with the real port if 0 was asked for).
  const std::string& address() const { return address_; }
  const ServerDef& server_def() const { return server_def_; }
  // "/job:worker/replica:0/task:1"
  std::string task_name() const { return server_def_.task_name(); }

  // The custom role actor of task (job, index) of this server's cluster (actors/role_registry.hpp);
  // NotFound if that job has no role, Unavailable if the task cannot be reached.
  StatusOr<caf::actor> find_role(const std::string& job, int index) const;
  // The actor system the server lives in, for talking to role actors.
  caf::actor_system& system() const;

  // OK when the task's actor answers within `timeout`: its actor system is scheduling work
  // (what a liveness probe asks, actors/health_endpoint.hpp). Unavailable once stop() has
  // begun, or when it does not answer in time, naming the task.
  Status check_health(std::chrono::milliseconds timeout);

  // Stops the task's actors; sessions on it then fail with Cancelled or Unavailable.
  // Idempotent.
  void stop();
  // Blocks until stop() has been called (from another thread or a signal handler's thread).
  void join();

 private:
  struct Impl;
  Server(ServerDef server_def, ServerOptions options);
  Status start();

  ServerDef server_def_;
  ServerOptions options_;
  std::string target_;
  std::string inproc_target_;
  std::string address_;
  std::unique_ptr<Impl> impl_;
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};  // set as stop() begins; read without mutex_
};

}  // namespace troupe
