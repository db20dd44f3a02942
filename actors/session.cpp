// Session: the blocking client facade over the master session actor.
#include "troupe/actors/session.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <type_traits>
#include <variant>

#include <caf/io/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/blocking_request.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/transport/handshake_probe.hpp"
#include "troupe/actors/transport/middleman.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

// How long opening or extending a session may take.
const caf::duration kControlTimeout{std::chrono::seconds(60)};
// The longest pause before connecting again to a server whose connection closed as it was
// made (100, 200, 400, 800 ms: four more tries).
constexpr auto kCrossedConnectPauseLimit = std::chrono::milliseconds(800);
// How long the probe of a failed handshake may take (actors/transport/handshake_probe.hpp).
constexpr auto kProbeTimeout = std::chrono::milliseconds(1000);
// Extra time the client waits beyond a step's own deadline for the server's verdict.
constexpr auto kDeadlineGrace = std::chrono::seconds(10);
// New nodes go to the server in requests of about this many bytes each (a node bigger than
// this, a large constant, goes alone).
constexpr size_t kExtendPieceBytes = size_t{1} << 20;

// About how many bytes `node` takes in a message: its strings and its attributes' values.
size_t approximate_bytes(const NodeDef& node) {
  size_t bytes = 64 + node.name.size() + node.op.size() + node.device.size();
  for (const std::string& input : node.inputs)
    bytes += 8 + input.size();
  for (const auto& [key, value] : node.attrs) {
    bytes += 16 + key.size();
    std::visit(
        [&](const auto& held) {
          using T = std::decay_t<decltype(held)>;
          if constexpr (std::is_same_v<T, Tensor>) {
            bytes += held.total_bytes();
          } else if constexpr (std::is_same_v<T, std::string>) {
            bytes += held.size();
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            for (const std::string& text : held)
              bytes += 8 + text.size();
          } else if constexpr (std::is_same_v<T, std::vector<PartialShape>>) {
            for (const PartialShape& shape : held)
              bytes += 8 + 8 * static_cast<size_t>(std::max(shape.rank(), 0));
          } else if constexpr (requires { held.size(); }) {
            bytes += 8 * held.size();
          }
        },
        value.storage());
  }
  return bytes;
}

}  // namespace

struct Session::Impl {
  ~Impl() {
    if (client) caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
  }

  std::shared_ptr<Runtime> runtime;
  std::string target;
  // Lives as long as the Session; the master session monitors it, so when this process dies
  // its session on the server closes and its steps are cancelled.
  caf::actor client;
  caf::actor master_session;
  // The server's task actor, in the master session's process: it answers the client's
  // heartbeats while the master session is busy (importing a large graph).
  caf::actor task;
  // The session's default step timeout, when the client gave a config (0: none or the
  // server's default, which the server enforces).
  int64_t operation_timeout_ms = 0;
  std::atomic<bool> closed{false};
  // The graph the session is bound to and how many of its nodes the server has.
  std::mutex graph_mutex;
  const Graph* graph = nullptr;
  int sent_nodes = 0;

  // The timeout a step run with `options` has, as far as the client knows (0: none).
  int64_t step_timeout_ms(const RunOptions& options) const {
    return options.timeout_ms > 0 ? options.timeout_ms : operation_timeout_ms;
  }
};

namespace {

// The task actor behind `target`: a server of this process, or one reached over the network
// through `runtime` (the shared one when null).
StatusOr<LocalTask> connect_to(const std::string& target, std::shared_ptr<Runtime> runtime) {
  if (auto local = find_local_task(target); local && local->runtime != nullptr) {
    bool inproc = target.rfind("inproc://", 0) == 0;
    if (inproc || runtime == nullptr || local->runtime == runtime) return *local;
  }
  if (target.rfind("inproc://", 0) == 0) {
    return errors::NotFound("no server of this process has the target '{}'", target);
  }
  constexpr std::string_view kScheme = "troupe://";
  if (target.rfind(kScheme, 0) != 0) {
    return errors::InvalidArgument(
        "target '{}' is not a server: expected 'troupe://host:port' or a Server::target() of "
        "this process ('inproc://<n>')",
        target);
  }
  TROUPE_ASSIGN_OR_RETURN(auto host_port, parse_host_port(target.substr(kScheme.size())));
  if (runtime == nullptr) {
    TROUPE_ASSIGN_OR_RETURN(runtime, Runtime::shared_default());
  }
  caf::actor_system& system = runtime->system();
  // As in the directory (actors/directory.cpp, settle): when this process and the server's
  // connect to each other at the same moment, CAF 0.17 closes both connections just after
  // they were made. The server is used once it has answered a heartbeat, and reached again
  // if its connection closed first.
  const std::string& host = host_port.first;
  auto port = static_cast<uint16_t>(host_port.second);
  auto reach = [&]() -> StatusOr<caf::expected<caf::actor>> {
    auto task = remote_actor(system, host, port);
    for (auto pause = std::chrono::milliseconds(100); task; pause *= 2) {
      auto answered =
          blocking_request<caf::unit_t>(system, *task, kControlTimeout,
                                        "reaching the server at " + target, heartbeat_atom::value);
      if (answered.ok()) break;
      // Only a connection that closed is tried again: a server that does not answer is not.
      if (!connection_closed(*task) || pause > kCrossedConnectPauseLimit) {
        return answered.status();
      }
      log_debug(
          "the connection to the server at {} closed as it was made ({}); connecting again "
          "in {} ms",
          target, answered.status().to_string(), pause.count());
      std::this_thread::sleep_for(pause);
      task = remote_actor(system, host, port);
    }
    return task;
  };
  TROUPE_ASSIGN_OR_RETURN(auto task, reach());
  if (!task && (task.error() == caf::sec::disconnect_during_handshake ||
                task.error() == caf::sec::cannot_connect_to_node)) {
    // Why the handshake ended, told by one more (handshake_probe.hpp): a credentials or
    // protocol mismatch is reported as such; a server that may only have been busy (its
    // admission caps full) is tried once more.
    HandshakeProbe probe = probe_handshake(runtime->options().tls, host, port, kProbeTimeout);
    if (probe.retry_may_help() && probe.verdict != HandshakeProbe::Verdict::kUnreachable) {
      TROUPE_ASSIGN_OR_RETURN(task, reach());
    }
    if (!task) {
      return errors::Unavailable("cannot reach the server at {}: {} ({}; docs/security.md)", target,
                                 system.render(task.error()), probe.explanation());
    }
  }
  if (!task) {
    return errors::Unavailable("cannot reach the server at {}: {}", target,
                               system.render(task.error()));
  }
  return LocalTask{runtime, *task};
}

}  // namespace

StatusOr<Session> Session::create(const std::string& target, std::optional<SessionConfig> config,
                                  std::shared_ptr<Runtime> runtime) {
  TROUPE_ASSIGN_OR_RETURN(LocalTask task, connect_to(target, std::move(runtime)));
  auto impl = std::make_unique<Impl>();
  impl->runtime = task.runtime;
  impl->target = target;
  impl->task = task.task;
  caf::actor_system& system = impl->runtime->system();
  // The argument is unused: CAF 0.17 dereferences a null tuple pointer when a function actor
  // is spawned without arguments (undefined behaviour that UBSan reports).
  impl->client = system.spawn(
      [](const std::string&) -> caf::behavior {
        return {[](heartbeat_atom) { return caf::unit; }};
      },
      target);
  TROUPE_ASSIGN_OR_RETURN(caf::actor master,
                          blocking_request<caf::actor>(system, task.task, kControlTimeout,
                                                       "finding the master service of " + target,
                                                       get_master_atom::value));
  TROUPE_ASSIGN_OR_RETURN(impl->master_session,
                          blocking_request<caf::actor>(
                              system, std::move(master), kControlTimeout,
                              "creating a session on " + target, create_session_atom::value,
                              config.has_value(), config.value_or(SessionConfig{}), impl->client));
  if (config) impl->operation_timeout_ms = config->operation_timeout_ms;
  return Session(std::move(impl));
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    if (impl_) (void)close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Session::~Session() {
  if (impl_) (void)close();
}

Status Session::close() {
  if (impl_->closed.exchange(true)) return Status::OK();
  auto closed = blocking_request_with_heartbeats<caf::unit_t>(
      impl_->runtime->system(), impl_->master_session, impl_->task, kControlTimeout,
      "closing the session", close_session_atom::value);
  // A session whose server is already gone is closed all the same.
  if (!closed.ok() && closed.status().code() != Code::kUnavailable) return closed.status();
  return Status::OK();
}

Status Session::send_new_nodes(const Graph& graph, int64_t timeout_ms) {
  if (impl_->closed) return errors::FailedPrecondition("the session is closed");
  return sync_graph(graph, timeout_ms);
}

StatusOr<int> Session::cancel_step(int64_t step_tag) {
  if (impl_->closed) return errors::FailedPrecondition("the session is closed");
  auto cancelled = blocking_request_with_heartbeats<int32_t>(
      impl_->runtime->system(), impl_->master_session, impl_->task, kControlTimeout,
      "cancelling a step", cancel_step_atom::value, step_tag);
  if (!cancelled.ok()) return cancelled.status();
  return static_cast<int>(*cancelled);
}

Status Session::extend(const GraphDef& graph) {
  return extend_within(graph, std::chrono::milliseconds(0), "");
}

Status Session::extend_within(const GraphDef& graph, std::chrono::milliseconds timeout,
                              const std::string& why) {
  if (impl_->closed) return errors::FailedPrecondition("the session is closed");
  caf::duration wait = timeout.count() > 0 ? caf::duration(timeout) : kControlTimeout;
  auto extended = blocking_request_with_heartbeats<caf::unit_t>(
      impl_->runtime->system(), impl_->master_session, impl_->task, wait,
      "extending the session's graph" + why, extend_graph_atom::value, graph);
  return extended.status();
}

Status Session::run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                    const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                    const RunOptions& options, RunMetadata* metadata) {
  return run_step(feeds, fetches, targets, outputs, options, metadata, 0);
}

Status Session::run_step(const std::vector<std::pair<std::string, Tensor>>& feeds,
                         const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                         const RunOptions& options, RunMetadata* metadata, int64_t spent_ms) {
  if (impl_->closed) return errors::FailedPrecondition("the session is closed");
  if (options.timeout_ms < 0) {
    return errors::InvalidArgument("RunOptions.timeout_ms is {}: expected >= 0 (0 = none)",
                                   options.timeout_ms);
  }
  int64_t timeout_ms = impl_->step_timeout_ms(options);
  RunStepRequest request;
  for (const auto& [name, value] : feeds) {
    TROUPE_RETURN_IF_ERROR(check_fits_in_message(
        impl_->runtime->system(), impl_->master_session.node(), value, "feed '{}'", name));
    request.signature.feeds.push_back(name);
    request.feeds.push_back(value);
  }
  request.signature.fetches = fetches;
  request.signature.targets = targets;
  request.options = options;
  request.spent_ms = spent_ms;
  caf::duration wait = caf::infinite;
  if (timeout_ms > 0) {
    wait = caf::duration(std::chrono::milliseconds(timeout_ms) + kDeadlineGrace);
  }
  auto response = blocking_request_with_heartbeats<RunStepResponse>(
      impl_->runtime->system(), impl_->master_session, impl_->task, wait,
      "running a step on " + impl_->target, run_step_atom::value, std::move(request));
  if (!response.ok()) return response.status();
  if (outputs != nullptr) *outputs = std::move(response->fetches);
  if (metadata != nullptr) *metadata = std::move(response->metadata);
  return Status::OK();
}

Status Session::sync_graph(const Graph& graph, int64_t timeout_ms) {
  std::lock_guard lock(impl_->graph_mutex);
  if (impl_->graph == nullptr) impl_->graph = &graph;
  if (impl_->graph != &graph) {
    return errors::InvalidArgument(
        "this session runs another graph; a session is bound to one graph (open a new Session)");
  }
  if (graph.num_nodes() == impl_->sent_nodes) return Status::OK();
  auto start = std::chrono::steady_clock::now();
  std::string why =
      timeout_ms > 0 ? fmt::format(" (within the step's timeout of {} ms)", timeout_ms) : "";
  // The new nodes go in pieces of about kExtendPieceBytes, each a request of its own, in the
  // order they were made (a node's inputs come before it). So neither the connection nor the
  // server's network thread nor the master session is ever busy with more than one piece, and a
  // heartbeat never waits behind a whole large graph.
  GraphDef fresh = graph.to_graph_def(impl_->sent_nodes);
  size_t total = fresh.nodes.size();
  for (size_t next = 0; next < total;) {
    GraphDef piece;
    piece.version = fresh.version;
    for (size_t bytes = 0; next < total;) {
      size_t node_bytes = approximate_bytes(fresh.nodes[next]);
      if (!piece.nodes.empty() && bytes + node_bytes > kExtendPieceBytes) break;
      bytes += node_bytes;
      piece.nodes.push_back(std::move(fresh.nodes[next++]));
    }
    auto left = std::chrono::milliseconds(0);  // none: each piece gets the control timeout
    if (timeout_ms > 0) {
      left = std::chrono::milliseconds(timeout_ms) -
             std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start);
      if (left.count() <= 0) {
        return errors::DeadlineExceeded(
            "extending the session's graph{}: the time ran out with {} of {} new nodes sent", why,
            next - piece.nodes.size(), total);
      }
    }
    TROUPE_RETURN_IF_ERROR(extend_within(piece, left, why));
    impl_->sent_nodes += static_cast<int>(piece.nodes.size());
  }
  return Status::OK();
}

StatusOr<std::vector<Tensor>> Session::run(const FeedDict& feeds,
                                           const std::vector<Output>& fetches,
                                           const std::vector<Operation>& targets,
                                           const RunOptions& options, RunMetadata* metadata) {
  const Graph* graph = nullptr;
  auto take_graph = [&](const Node* node, const std::string& role) -> Status {
    if (node == nullptr) {
      return errors::InvalidArgument(
          "a {} is not a valid output: the op that should have made it failed (see "
          "Scope::status())",
          role);
    }
    if (graph != nullptr && graph != &node->graph()) {
      return errors::InvalidArgument("{} '{}' belongs to another graph", role, node->name());
    }
    graph = &node->graph();
    return Status::OK();
  };
  std::vector<std::pair<std::string, Tensor>> named_feeds;
  for (const auto& [output, value] : feeds) {
    TROUPE_RETURN_IF_ERROR(take_graph(output.node(), "feed"));
    named_feeds.emplace_back(output.name(), value);
  }
  std::vector<std::string> fetch_names, target_names;
  for (const Output& output : fetches) {
    TROUPE_RETURN_IF_ERROR(take_graph(output.node(), "fetch"));
    fetch_names.push_back(output.name());
  }
  for (const Operation& op : targets) {
    TROUPE_RETURN_IF_ERROR(take_graph(op.node(), "target"));
    target_names.push_back(op.name());
  }
  if (graph == nullptr) {
    return errors::InvalidArgument("a run must fetch a tensor or name a target");
  }
  // The step's deadline starts now and covers sending the graph's new nodes.
  auto start = std::chrono::steady_clock::now();
  int64_t timeout_ms = impl_->step_timeout_ms(options);
  TROUPE_RETURN_IF_ERROR(sync_graph(*graph, timeout_ms));
  int64_t spent_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
  std::vector<Tensor> outputs;
  TROUPE_RETURN_IF_ERROR(
      run_step(named_feeds, fetch_names, target_names, &outputs, options, metadata, spent_ms));
  return outputs;
}

StatusOr<Tensor> Session::run(const Output& fetch) {
  TROUPE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run(FeedDict{}, {fetch}));
  return std::move(outputs.at(0));
}

StatusOr<std::vector<Tensor>> Session::run(const std::vector<Output>& fetches) {
  return run(FeedDict{}, fetches);
}

Status Session::run_targets(const std::vector<Operation>& targets, const FeedDict& feeds,
                            const RunOptions& options) {
  return run(feeds, {}, targets, options).status();
}

}  // namespace troupe
