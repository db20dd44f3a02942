// Session: the client's handle on a master session — TensorFlow's tf.Session / the C++
// Session interface — as a blocking facade over actor messages.
//
//   TROUPE_ASSIGN_OR_RETURN(auto server, Server::create_local_server());
//   Scope root = Scope::new_root();
//   auto product = ops::MatMul(root, ops::Const(root, {{2.f, 1.f}}),
//                              ops::Const(root, {{1.f}, {2.f}}));
//   TROUPE_ASSIGN_OR_RETURN(Session session, Session::create(server->target()));
//   TROUPE_ASSIGN_OR_RETURN(Tensor result, session.run(product));   // [[4]]
//
// A session is bound to one graph: the first graph it runs Outputs of (or the nodes given to
// extend()); new nodes of that graph are sent along before each run. Several threads may call
// run() at once; close() from another thread cancels steps in flight (they fail with
// Cancelled). Every call that can fail returns Status or StatusOr, with TensorFlow's codes;
// troupe/graph/core/throwing.hpp turns them into exceptions for tests and short programs.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "troupe/actors/run_options.hpp"
#include "troupe/graph/cluster/server_def.hpp"
#include "troupe/graph/output.hpp"

namespace troupe {

class Runtime;

using FeedDict = std::vector<std::pair<Output, Tensor>>;

class Session {
 public:
  // Opens a session on the server at `target`: "troupe://host:port" (any task of a cluster,
  // in this process or reached over the network) or a Server::target() of this process
  // ("inproc://<n>"). Without `config` the server's default session config applies.
  // InvalidArgument for a malformed target, NotFound for an "inproc://" target this process
  // does not have, Unavailable if the server cannot be reached or does not answer (or refuses
  // this process's TLS credentials, or their absence). A network target is reached through
  // `runtime` — its TLS settings — or the process's shared one when null.
  static StatusOr<Session> create(const std::string& target,
                                  std::optional<SessionConfig> config = std::nullopt,
                                  std::shared_ptr<Runtime> runtime = nullptr);
  ~Session();  // closes
  // A handle: it moves (a moved-from Session may only be destroyed or assigned to), and does
  // not copy.
  Session(Session&& other) noexcept;
  Session& operator=(Session&& other) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // A step's deadline — RunOptions::timeout_ms, else the operation_timeout_ms of the config
  // this session was opened with, else the server's default — starts when run() is called and
  // covers every phase: sending the graph's new nodes, reaching the tasks the step needs
  // (connecting included) and running it. DeadlineExceeded names the device, or the task and
  // address, the step was still waiting for.
  //
  // TensorFlow's Session::Run: feeds by tensor name ("x:0"), fetches by tensor name, targets
  // by node name. `outputs` receives the fetched values in order, `metadata` (if given) what
  // the step involved.
  Status run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
             std::vector<Tensor>* outputs, const RunOptions& options = {},
             RunMetadata* metadata = nullptr);

  // The first half of a builder-API run(): sends the nodes of `graph` the server has not seen,
  // within `timeout_ms` (0: the control timeout). A caller that guards its graph with a lock of
  // its own (the Python module: the GIL) calls this under it, then run() by names without it.
  // InvalidArgument for another graph than the session's.
  Status send_new_nodes(const Graph& graph, int64_t timeout_ms = 0);
  // Adds nodes to the session's graph (all or nothing), in one message.
  Status extend(const GraphDef& graph);

  // Builder-API runs (TensorFlow's ClientSession::Run): they send the new nodes of the
  // outputs' graph first, in pieces of about 1 MiB (so that heartbeats never wait behind a
  // whole large graph; docs/reliability.md). InvalidArgument for an invalid Output (its op failed:
  // see Scope::status()), for outputs of two graphs, or for a run with nothing to fetch or run.
  StatusOr<Tensor> run(const Output& fetch);
  StatusOr<std::vector<Tensor>> run(const std::vector<Output>& fetches);
  StatusOr<std::vector<Tensor>> run(const FeedDict& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets = {},
                                    const RunOptions& options = {},
                                    RunMetadata* metadata = nullptr);
  // Runs `targets` for their effects (e.g. an initialiser).
  Status run_targets(const std::vector<Operation>& targets, const FeedDict& feeds = {},
                     const RunOptions& options = {});

  // Cancels the steps in flight that were run with RunOptions::step_tag == `step_tag` (they
  // fail with Cancelled) and returns how many there were: 0 when such a step has not reached
  // the server yet, or has ended. The session stays usable.
  StatusOr<int> cancel_step(int64_t step_tag);
  // Cancels steps in flight and releases the session's state on the server. Later calls fail
  // with FailedPrecondition. Idempotent.
  Status close();

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  // run(), of which the client already spent `spent_ms` (sending new nodes).
  Status run_step(const std::vector<std::pair<std::string, Tensor>>& feeds,
                  const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                  std::vector<Tensor>* outputs, const RunOptions& options, RunMetadata* metadata,
                  int64_t spent_ms);
  // Sends the nodes of `graph` the server has not seen, within `timeout_ms` (0: the control
  // timeout); InvalidArgument for another graph.
  Status sync_graph(const Graph& graph, int64_t timeout_ms);
  // extend() within `timeout` (0: the control timeout); `why` is added to its error context.
  Status extend_within(const GraphDef& graph, std::chrono::milliseconds timeout,
                       const std::string& why);

  std::unique_ptr<Impl> impl_;
};

}  // namespace troupe
