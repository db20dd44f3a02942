// ServerDef: validation, the local server's definition, and the wire form.
#include "troupe/graph/cluster/server_def.hpp"

#include <algorithm>

#include <fmt/ranges.h>
#include <kj/exception.h>

#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/core/check.hpp"

namespace troupe {
namespace {

std::string text_of(capnp::Text::Reader text) {
  return std::string(text.begin(), text.end());
}

// The host of "host:port", with every loopback name spelled "localhost"; "" if unparsable.
std::string host_of(const std::string& address) {
  auto host_port = parse_host_port(address);
  if (!host_port.ok()) return "";
  const std::string& host = host_port->first;
  if (host == "localhost" || host == "::1" || host.starts_with("127.")) return "localhost";
  return host;
}

}  // namespace

bool ServerDef::is_known_protocol(const std::string& protocol) {
  return protocol == "troupe" || protocol == "grpc";
}

StatusOr<ServerDef> ServerDef::create(ClusterSpec cluster, std::string job_name, int task_index,
                                      std::string protocol, SessionConfig default_session_config) {
  std::vector<std::string> jobs = cluster.jobs();
  if (job_name.empty()) {
    if (jobs.size() != 1) {
      std::vector<std::string> quoted;
      for (const auto& job : jobs)
        quoted.push_back(fmt::format("'{}'", job));
      return errors::InvalidArgument(
          "ServerDef: no job name given and the cluster has {} jobs [{}] (expected an explicit "
          "job name unless the cluster has exactly one job)",
          jobs.size(), fmt::join(quoted, ", "));
    }
    job_name = jobs.front();
  }
  // task_address names the job or index and lists the jobs or indices that exist.
  auto address = cluster.task_address(job_name, task_index);
  if (!address.ok()) return address.status().with_context("ServerDef");
  if (!is_known_protocol(protocol)) {
    return errors::InvalidArgument(
        "ServerDef: unknown protocol '{}' (troupe speaks \"troupe\", and accepts \"grpc\", "
        "TensorFlow's default, as the same)",
        protocol);
  }
  TROUPE_RETURN_IF_ERROR(default_session_config.validate().with_context("ServerDef"));
  return ServerDef{std::move(cluster), std::move(job_name), task_index, std::move(protocol),
                   default_session_config};
}

Status SessionConfig::validate() const {
  if (operation_timeout_ms < 0) {
    return errors::InvalidArgument(
        "operation_timeout_ms is {} (expected >= 0; 0 means no deadline)", operation_timeout_ms);
  }
  if (intra_op_threads < 0) {
    return errors::InvalidArgument(
        "intra_op_threads is {} (expected >= 0; 0 means the host's cores shared among its tasks)",
        intra_op_threads);
  }
  if (cpu_devices < 0 || cpu_devices > kMaxCpuDevices) {
    return errors::InvalidArgument("cpu_devices is {} (expected 0..{}; 0 means one CPU device)",
                                   cpu_devices, kMaxCpuDevices);
  }
  for (const std::string& filter : device_filters) {
    auto name = DeviceName::parse(filter);
    if (!name.ok()) return name.status().with_context("device_filters");
  }
  return Status::OK();
}

ServerDef ServerDef::local() {
  ServerDef def;
  TROUPE_CHECK_OK(def.cluster.add_job("localhost", {"localhost:0"}));
  def.job_name = "localhost";
  def.task_index = 0;
  return def;
}

int ServerDef::tasks_on_this_host() const {
  auto own = address();
  if (!own.ok()) return 1;
  const std::string host = host_of(*own);
  int tasks = 0;
  for (const auto& [job, job_tasks] : cluster.as_map()) {
    for (const auto& [index, address] : job_tasks) {
      if (host_of(address) == host) ++tasks;
    }
  }
  return std::max(tasks, 1);
}

int ServerDef::intra_op_threads(int cores) const {
  if (default_session_config.intra_op_threads > 0) return default_session_config.intra_op_threads;
  return std::max(1, cores / tasks_on_this_host());
}

StatusOr<std::string> ServerDef::address() const {
  return cluster.task_address(job_name, task_index);
}

std::string ServerDef::task_name() const {
  return DeviceName::task_name(job_name, task_index);
}

void ServerDef::to_wire(wire::ServerDef::Builder out) const {
  cluster.to_wire(out.initCluster());
  out.setJobName(job_name);
  out.setTaskIndex(task_index);
  out.setProtocol(protocol);
  auto config = out.initDefaultSessionConfig();
  config.setIsolateSessionState(default_session_config.isolate_session_state);
  config.setOperationTimeoutMs(default_session_config.operation_timeout_ms);
  config.setIntraOpThreads(default_session_config.intra_op_threads);
  config.setAllowSoftPlacement(default_session_config.allow_soft_placement);
  config.setCpuDevices(default_session_config.cpu_devices);
  const auto& filters = default_session_config.device_filters;
  auto wire_filters = config.initDeviceFilters(static_cast<unsigned>(filters.size()));
  for (size_t i = 0; i < filters.size(); ++i)
    wire_filters.set(static_cast<unsigned>(i), filters[i]);
}

StatusOr<ServerDef> ServerDef::from_wire(wire::ServerDef::Reader in) {
  try {
    TROUPE_ASSIGN_OR_RETURN(ClusterSpec cluster, ClusterSpec::from_wire(in.getCluster()));
    SessionConfig config;
    auto wire_config = in.getDefaultSessionConfig();
    config.isolate_session_state = wire_config.getIsolateSessionState();
    config.operation_timeout_ms = wire_config.getOperationTimeoutMs();
    config.intra_op_threads = wire_config.getIntraOpThreads();
    config.allow_soft_placement = wire_config.getAllowSoftPlacement();
    config.cpu_devices = wire_config.getCpuDevices();
    for (auto filter : wire_config.getDeviceFilters())
      config.device_filters.push_back(text_of(filter));
    return create(std::move(cluster), text_of(in.getJobName()), in.getTaskIndex(),
                  text_of(in.getProtocol()), config);
  } catch (const kj::Exception& e) {
    return errors::InvalidArgument("malformed ServerDef message: {}", e.getDescription().cStr());
  }
}

}  // namespace troupe
