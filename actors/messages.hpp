// The payloads of troupe's actor messages, and how CAF inspects (serialises) them.
//
// In one process a message is passed by reference and nothing here runs. Between processes,
// tensors and graphs travel as Cap'n Proto messages (docs/wire.md): the inspect functions below
// write the flat Cap'n Proto bytes with one raw copy and read them back in place.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/deserializer.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/node_id.hpp>
#include <caf/serializer.hpp>

#include "troupe/actors/run_options.hpp"
#include "troupe/graph/cluster/server_def.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/graph_def.hpp"
#include "troupe/graph/subgraph.hpp"

namespace troupe {

// Client -> master session: one call of Session::run.
struct RunStepRequest {
  RunSignature signature;
  std::vector<Tensor> feeds;  // values of signature.feeds, in order
  RunOptions options;
  // What the client already spent of the step's timeout before sending this (the graph's new
  // nodes); the step's deadline is what is left.
  int64_t spent_ms = 0;
};

struct RunStepResponse {
  std::vector<Tensor> fetches;  // values of signature.fetches, in order
  RunMetadata metadata;
};

// Master session -> device actor: a graph partition to instantiate.
struct PartitionSpec {
  GraphDef graph;
  std::string container;  // variable container of the session ("" = shared)
};

// Master session -> device actor: run a registered partition once.
struct RunPartitionRequest {
  int64_t step_id = 0;
  int64_t handle = 0;
  std::vector<Tensor> args;    // for the partition's _Arg nodes, by index
  bool collect_stats = false;  // answer with the step's statistics (a traced step)
  bool return_graph = false;   // answer with the partition's graph
};

struct RunPartitionResponse {
  std::vector<Tensor> rets;     // from the partition's _Retval nodes, by index
  DeviceStepStats stats;        // when collect_stats was asked
  std::vector<GraphDef> graph;  // the partition's, when return_graph was asked (else empty)
};

// Task actor -> anyone: a device of the task.
struct DeviceInfo {
  std::string name;  // "/job:worker/replica:0/task:1/device:CPU:0"
  std::string type;  // "CPU"
  caf::actor actor;
};

// The size limit on one tensor or graph inside an actor message between processes
// (RuntimeOptions::max_message_bytes): the default, which is also the most (CAF's frames end
// at 4 GiB), the least that may be set, and where an actor system's config keeps it.
inline constexpr uint64_t kDefaultMaxMessageBytes = uint64_t{2} << 30;
inline constexpr uint64_t kMinMaxMessageBytes = uint64_t{4} << 10;
inline constexpr char kMaxMessageBytesKey[] = "troupe.max-message-bytes";

// The limit `system` was configured with.
uint64_t max_message_bytes(caf::actor_system& system);

// How a client waiting on another process checks that the process is alive
// (RuntimeOptions::client_heartbeat_interval / _timeout), kept in an actor system's config.
inline constexpr char kClientHeartbeatIntervalKey[] = "troupe.client-heartbeat-interval-ms";
inline constexpr char kClientHeartbeatTimeoutKey[] = "troupe.client-heartbeat-timeout-ms";
struct ClientHeartbeats {
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds timeout{4000};  // 0: none
};
ClientHeartbeats client_heartbeats(caf::actor_system& system);

// Whether `tensor` fits a message of at most `limit` bytes, with room for its encoding (a few
// words per tensor and per chunk of data).
inline bool fits_in_message(uint64_t limit, const Tensor& tensor) {
  return static_cast<uint64_t>(tensor.total_bytes()) + 1024 <= limit;
}
// Whether `tensor` fits `system`'s limit.
inline bool fits_in_message(caf::actor_system& system, const Tensor& tensor) {
  return fits_in_message(max_message_bytes(system), tensor);
}
// The InvalidArgument for `what`, a tensor that does not fit.
Status too_large_for_message(caf::actor_system& system, const Tensor& tensor,
                             std::string_view what);

// What a sender checks before a tensor leaves for another process (the receiver would drop a
// message over its limit, and the sender would wait in vain): OK if `tensor` fits `system`'s
// limit; InvalidArgument naming `what` (formatted only then: this runs for every tensor that
// may leave the process) otherwise. Every process of a cluster should use the same limit.
template <typename... Args>
Status check_fits_in_message(caf::actor_system& system, const Tensor& tensor,
                             fmt::format_string<Args...> what, Args&&... args) {
  if (fits_in_message(system, tensor)) return Status::OK();
  return too_large_for_message(system, tensor, fmt::format(what, std::forward<Args>(args)...));
}
// The same, OK at once if `destination` is this process's node.
template <typename... Args>
Status check_fits_in_message(caf::actor_system& system, const caf::node_id& destination,
                             const Tensor& tensor, fmt::format_string<Args...> what,
                             Args&&... args) {
  if (destination == system.node()) return Status::OK();
  return check_fits_in_message(system, tensor, what, std::forward<Args>(args)...);
}

// A traced step's statistics and partition graphs on their way to `destination` (a device's
// answer to its master session, or a master session's to its client): each is held to the
// message limit as a tensor is, and one over it is left out, with a warning naming it, rather
// than failing (or losing) a step that was only traced. Nothing is checked in one process.
void drop_oversized_trace(caf::actor_system& system, const caf::node_id& destination,
                          std::vector<DeviceStepStats>& stats, std::vector<GraphDef>& graphs);

namespace detail {
// Flat Cap'n Proto <-> CAF's binary inspectors (defined in messages.cpp).
caf::error save_tensor(caf::serializer& sink, const Tensor& tensor);
caf::error load_tensor(caf::deserializer& source, Tensor& tensor);
caf::error save_graph(caf::serializer& sink, const GraphDef& graph);
caf::error load_graph(caf::deserializer& source, GraphDef& graph);
}  // namespace detail

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tensor& x) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return detail::save_tensor(f, x);
  } else if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
    return detail::load_tensor(f, x);
  } else {
    return f(caf::meta::type_name("Tensor"), x.debug_string());
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GraphDef& x) {
  if constexpr (std::is_base_of_v<caf::serializer, Inspector>) {
    return detail::save_graph(f, x);
  } else if constexpr (std::is_base_of_v<caf::deserializer, Inspector>) {
    return detail::load_graph(f, x);
  } else {
    return f(caf::meta::type_name("GraphDef"), x.nodes.size());
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunSignature& x) {
  return f(caf::meta::type_name("RunSignature"), x.feeds, x.fetches, x.targets);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunOptions& x) {
  return f(caf::meta::type_name("RunOptions"), x.timeout_ms, x.step_tag, x.trace_level,
           x.output_partition_graphs);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SessionConfig& x) {
  return f(caf::meta::type_name("SessionConfig"), x.isolate_session_state, x.operation_timeout_ms,
           x.intra_op_threads, x.device_filters, x.allow_soft_placement, x.cpu_devices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunStepRequest& x) {
  return f(caf::meta::type_name("RunStepRequest"), x.signature, x.feeds, x.options, x.spent_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunMetadata& x) {
  return f(caf::meta::type_name("RunMetadata"), x.devices, x.tensors_to_master, x.bytes_to_master,
           x.step_stats, x.partition_graphs);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunStepResponse& x) {
  return f(caf::meta::type_name("RunStepResponse"), x.fetches, x.metadata);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PartitionSpec& x) {
  return f(caf::meta::type_name("PartitionSpec"), x.graph, x.container);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunPartitionRequest& x) {
  return f(caf::meta::type_name("RunPartitionRequest"), x.step_id, x.handle, x.args,
           x.collect_stats, x.return_graph);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeOutputStats& x) {
  return f(caf::meta::type_name("NodeOutputStats"), x.slot, x.dtype, x.shape, x.bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, NodeExecStats& x) {
  return f(caf::meta::type_name("NodeExecStats"), x.node_name, x.timeline_label, x.all_start_micros,
           x.op_start_rel_micros, x.op_end_rel_micros, x.all_end_rel_micros, x.thread_id,
           x.outputs);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DeviceStepStats& x) {
  return f(caf::meta::type_name("DeviceStepStats"), x.device, x.node_stats);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RunPartitionResponse& x) {
  return f(caf::meta::type_name("RunPartitionResponse"), x.rets, x.stats, x.graph);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, DeviceInfo& x) {
  return f(caf::meta::type_name("DeviceInfo"), x.name, x.type, x.actor);
}

}  // namespace troupe
