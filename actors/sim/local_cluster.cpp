// LocalCluster: one Server per task, in one process.
#include "troupe/actors/sim/local_cluster.hpp"

#include <pthread.h>

#include <atomic>

#include <caf/all.hpp>

#include "troupe/actors/runtime.hpp"
#include "troupe/devices/cpu_pool.hpp"
#include "troupe/devices/device.hpp"
#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

StatusOr<ClusterSpec> make_ps_worker_cluster(int num_ps, int num_workers, bool free_ports) {
  if (num_ps < 0 || num_workers < 1) {
    return errors::InvalidArgument("a cluster needs ps >= 0 and workers >= 1 tasks, got {} and {}",
                                   num_ps, num_workers);
  }
  if (free_ports) return free_port_cluster({{"ps", num_ps}, {"worker", num_workers}});
  ClusterSpec cluster;
  for (const auto& [job, count] :
       {std::pair<std::string, int>{"ps", num_ps}, {"worker", num_workers}}) {
    if (count == 0) continue;
    std::vector<std::string> addresses;
    for (int i = 0; i < count; ++i)
      addresses.push_back(fmt::format("{}{}.local.invalid:2222", job, i));
    TROUPE_RETURN_IF_ERROR(cluster.add_job(job, std::move(addresses)));
  }
  return cluster;
}

StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::start(const ClusterSpec& cluster,
                                                            LocalClusterOptions options) {
  if (cluster.empty()) return errors::InvalidArgument("the cluster has no jobs");
  if (options.runtime == nullptr) {
    TROUPE_ASSIGN_OR_RETURN(options.runtime, Runtime::shared_default());
  }
  std::map<std::pair<std::string, int>, const Fault*> faults;
  for (const Fault& fault : options.faults) {
    TROUPE_RETURN_IF_ERROR(fault.validate(cluster));
    if (fault.kind == FaultKind::kFreeze || fault.kind == FaultKind::kPartition) {
      return errors::InvalidArgument(
          "fault {}: freezes and partitions need a DeterministicCluster (threads cannot stop one "
          "task's actors, or hold its messages, and not the others')",
          fault.to_string());
    }
    if (!faults.emplace(std::make_pair(fault.job, fault.task), &fault).second) {
      return errors::InvalidArgument("more than one fault for {}",
                                     DeviceName::task_name(fault.job, fault.task));
    }
  }
  std::unique_ptr<LocalCluster> local(new LocalCluster());
  local->cluster_ = cluster;
  local->runtime_ = options.runtime;
  // The tasks find each other by this name in the process's registry, not by address: a task
  // listening on port 0 has bound a port of its own before its peers could know it.
  static std::atomic<uint64_t> next_group{1};
  const std::string group = fmt::format("in-process cluster {}", next_group++);
  // One pool for every task: simulated tasks share the machine's cores, as actors share the
  // runtime's scheduler, instead of each owning threads.
  const int threads = options.default_session_config.intra_op_threads > 0
                          ? options.default_session_config.intra_op_threads
                          : Device::available_cores();
  local->cpu_pool_ = std::make_shared<const CpuPool>(threads);
  for (const std::string& job : cluster.jobs()) {
    for (int index : cluster.task_indices(job).value()) {
      TROUPE_ASSIGN_OR_RETURN(ServerDef def, ServerDef::create(cluster, job, index, "troupe",
                                                               options.default_session_config));
      ServerOptions server_options;
      server_options.listen = options.listen;
      server_options.runtime = options.runtime;
      server_options.cpu_pool = local->cpu_pool_;
      server_options.in_process_group = group;
      if (auto fault = faults.find({job, index}); fault != faults.end()) {
        LocalCluster* owner = local.get();
        server_options.faults = std::make_shared<FaultInjector>(
            *fault->second, [owner, job, index] { (void)owner->kill(job, index); });
      }
      auto server = Server::create(def, server_options);
      if (!server.ok()) {
        local->stop();
        return server.status();
      }
      local->servers_.emplace(std::make_pair(job, index), std::move(server).value());
    }
  }
  if (options.listen) {  // the addresses the tasks bound, for other processes
    ClusterSpec bound;
    for (const std::string& job : cluster.jobs()) {
      ClusterSpec::Tasks tasks;
      for (int index : cluster.task_indices(job).value())
        tasks.emplace(index, local->servers_.at({job, index})->address());
      TROUPE_RETURN_IF_ERROR(bound.add_sparse_job(job, std::move(tasks)));
    }
    local->cluster_ = std::move(bound);
  }
  return local;
}

StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::start(int num_ps, int num_workers,
                                                            LocalClusterOptions options) {
  // Listening, every task binds a port of the kernel's choosing (port 0).
  TROUPE_ASSIGN_OR_RETURN(ClusterSpec cluster, make_ps_worker_cluster(num_ps, num_workers, false));
  if (options.listen) {
    ClusterSpec port_zero;
    for (const auto& [job, tasks] : cluster.as_map()) {
      TROUPE_RETURN_IF_ERROR(
          port_zero.add_job(job, std::vector<std::string>(tasks.size(), "127.0.0.1:0")));
    }
    cluster = std::move(port_zero);
  }
  return start(cluster, std::move(options));
}

LocalCluster::~LocalCluster() {
  stop();
}

int LocalCluster::compute_threads() const {
  return cpu_pool_->threads();
}

int LocalCluster::scheduler_threads() const {
  return static_cast<int>(runtime_->system().scheduler().num_workers());
}

StatusOr<Server*> LocalCluster::server(const std::string& job, int index) const {
  auto it = servers_.find({job, index});
  if (it == servers_.end()) {
    return errors::InvalidArgument(
        "the local cluster has no task /job:{}/replica:0/task:{}; it "
        "has {}",
        job, index, cluster_.to_string());
  }
  return it->second.get();
}

StatusOr<std::string> LocalCluster::target(const std::string& job, int index) const {
  TROUPE_ASSIGN_OR_RETURN(Server * server, this->server(job, index));
  return server->target();
}

Status LocalCluster::kill(const std::string& job, int index) {
  TROUPE_ASSIGN_OR_RETURN(Server * server, this->server(job, index));
  std::lock_guard lock(killers_mutex_);
  killers_.emplace_back([server] {
    pthread_setname_np(pthread_self(), "troupe-kill");
    server->stop();
  });
  return Status::OK();
}

void LocalCluster::stop() {
  std::vector<std::thread> killers;
  {
    std::lock_guard lock(killers_mutex_);
    killers.swap(killers_);
  }
  for (std::thread& killer : killers)
    killer.join();
  for (auto& [key, server] : servers_)
    server->stop();
}

}  // namespace troupe
