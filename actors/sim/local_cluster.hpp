// LocalCluster: every task of a ClusterSpec as a Server in this process, on one actor system
// and with the same actors and messages as a real cluster — for tests, for users' own tests,
// and for `troupe sim`. Part of the simulation library (troupe::sim, actors/sim/), which
// programs that only run nodes need not link.
//
//   TROUPE_ASSIGN_OR_RETURN(auto cluster, LocalCluster::start(/*ps=*/2, /*workers=*/2));
//   TROUPE_ASSIGN_OR_RETURN(std::string target, cluster->target("worker", 0));
//   TROUPE_ASSIGN_OR_RETURN(Session session, Session::create(target));
//
// Tasks find each other through the process-local registry, by name, so nothing crosses the
// network; with `listen` each task also listens on its address, so other processes can join or
// connect sessions: a port 0 there (as in start(num_ps, num_workers)) binds a port of the
// kernel's choosing, and cluster() has the bound addresses (nothing probes a port free and binds
// it later). The tasks share one description of the cluster and one pool of compute
// threads (compute_threads()), so a task costs memory, not threads. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "troupe/actors/free_ports.hpp"  // pick_free_port, free_port_cluster
#include "troupe/actors/server.hpp"
#include "troupe/actors/sim/fault_injector.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"

namespace troupe {

class CpuPool;

struct LocalClusterOptions {
  std::shared_ptr<Runtime> runtime;  // the process's shared one when null
  SessionConfig default_session_config;
  // Each task listens on its address (start(num_ps, num_workers) then gives each 127.0.0.1:0).
  bool listen = false;
  // Simulated faults (actors/sim/fault_injector.hpp), at most one per task.
  std::vector<Fault> faults;
};

class LocalCluster {
 public:
  // Starts a server for every task of `cluster`. Without `listen` the addresses are only names;
  // with it each task listens on its own (port 0: any free port).
  static StatusOr<std::unique_ptr<LocalCluster>> start(const ClusterSpec& cluster,
                                                       LocalClusterOptions options = {});
  // Starts jobs "ps" (num_ps tasks, may be 0) and "worker" (num_workers >= 1 tasks); listening,
  // each on 127.0.0.1 port 0.
  static StatusOr<std::unique_ptr<LocalCluster>> start(int num_ps, int num_workers,
                                                       LocalClusterOptions options = {});

  ~LocalCluster();

  // The cluster as started: with the bound addresses when listening. (A task's own
  // server_def() keeps the addresses it was given, port 0 included.)
  const ClusterSpec& cluster() const { return cluster_; }
  // The server of task (job, index); InvalidArgument naming them if there is none.
  StatusOr<Server*> server(const std::string& job, int index) const;
  // Its session target; InvalidArgument naming them if there is no such task.
  StatusOr<std::string> target(const std::string& job, int index) const;
  size_t size() const { return servers_.size(); }
  // The threads every task's CPU kernels share: SessionConfig::intra_op_threads of
  // default_session_config when set, else one per core this process may run on. (Actor
  // messages run on the runtime's scheduler threads, shared as well.)
  int compute_threads() const;
  // The worker threads of the actor system the tasks share (RuntimeOptions::scheduler_threads).
  int scheduler_threads() const;

  // Stops task (job, index) at once, from another thread, as if its process had died: the
  // other tasks see it lost, and steps that need it fail. InvalidArgument if there is none.
  Status kill(const std::string& job, int index);

  // Stops every task. Idempotent.
  void stop();

 private:
  LocalCluster() = default;
  ClusterSpec cluster_;
  std::shared_ptr<Runtime> runtime_;
  std::shared_ptr<const CpuPool> cpu_pool_;
  std::map<std::pair<std::string, int>, std::unique_ptr<Server>> servers_;
  std::mutex killers_mutex_;
  std::vector<std::thread> killers_;  // joined by stop()
};

// A cluster spec of jobs "ps" and "worker" with distinct addresses: free 127.0.0.1 ports if
// `free_ports`, else names that resolve nowhere ("worker0.local.invalid:2222").
StatusOr<ClusterSpec> make_ps_worker_cluster(int num_ps, int num_workers, bool free_ports);

}  // namespace troupe
