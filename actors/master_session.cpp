// The master session actor: run preparation (prune, place, partition, register) and steps.
#include "troupe/actors/master_session.hpp"

#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/random_id.hpp"
#include "troupe/actors/transport/data_plane.hpp"
#include "troupe/devices/kernel_registry.hpp"
#include "troupe/graph/partition.hpp"
#include "troupe/graph/placement.hpp"

namespace troupe {
namespace {

// How long listing the cluster's devices and registering a partition may take.
constexpr auto kControlTimeout = std::chrono::seconds(120);

struct PreparedPartition {
  caf::actor device;
  caf::actor runner;  // where run_partition goes: the device, or a CallProxy for it
  std::string device_name;
  int64_t handle = 0;
  std::vector<int> feed_of_arg;
  std::vector<int> fetch_of_ret;
};

struct PreparedRun {
  bool ready = false;
  bool failed = false;  // preparation failed (or a task it needs was lost)
  std::vector<PreparedPartition> partitions;
  std::vector<DataType> feed_types;
  std::vector<PartialShape> feed_shapes;
  std::vector<std::function<void(const Status&)>> waiters;  // while preparing
};

// The actor system's clock: the steady clock, or the virtual one of a deterministic
// simulation (actors/sim/deterministic_cluster.hpp).
using Clock = caf::actor_clock;

struct PendingStep {
  caf::typed_response_promise<RunStepResponse> promise;
  caf::node_id client;  // where the response goes
  std::vector<std::string> fetch_names;
  std::vector<caf::actor> devices;  // devices running a partition of the step
  std::vector<std::string> device_names;
  RunStepResponse response;
  size_t remaining = 0;
  // The step's timeout (0: none) and its deadline, counted from the step's arrival: it covers
  // preparing the run (listing devices, reaching their tasks, registering partitions) too.
  int64_t timeout_ms = 0;
  Clock::time_point deadline = Clock::time_point::max();
  bool started = false;  // its partitions were sent
  int64_t step_tag = 0;  // RunOptions::step_tag
};

struct MasterSessionState {
  MasterSessionConfig config;
  Graph graph;
  std::string container;                           // "" unless state is isolated
  std::optional<std::vector<DeviceInfo>> devices;  // the cluster's, once listed
  std::vector<std::function<void(const Status&)>> device_waiters;
  std::map<RunSignature, std::shared_ptr<PreparedRun>> runs;
  std::map<int64_t, PendingStep> pending;
  // The runner of each device actor of another process (a restarted device is a new actor).
  std::map<caf::actor_addr, caf::actor> runners;
  // Tasks lost since the devices were listed ("/job:ps/replica:0/task:0/"): their device
  // actors are looked up again before a run is placed on them.
  std::set<std::string> stale_tasks;
  static inline const char* name = "troupe.master_session";
};

using Self = caf::stateful_actor<MasterSessionState>;

// Device `device_name` belongs to the task of `task_prefix` ("/job:ps/replica:0/task:0/").
bool on_task(const std::string& device_name, const std::string& task_prefix) {
  return device_name.starts_with(task_prefix);
}

Status check_client_nodes(const GraphDef& delta) {
  for (const NodeDef& node : delta.nodes) {
    if (node.name.starts_with('_') || node.op.starts_with('_')) {
      return errors::InvalidArgument(
          "node '{}' ({}): names and ops starting with '_' are reserved for the runtime", node.name,
          node.op);
    }
  }
  return Status::OK();
}

// Answers step `id` with `status` if it is still pending, and cancels it on every device.
void fail_step(Self* self, int64_t id, const Status& status) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end()) return;
  for (const caf::actor& device : it->second.devices) {
    self->anon_send(device, abort_step_atom::value, id, to_caf_error(status));
  }
  it->second.promise.deliver(to_caf_error(status));
  self->state.pending.erase(it);
}

// Calls `then` once the cluster's devices are known (listed once per session).
void with_devices(Self* self, std::function<void(const Status&)> then) {
  auto& st = self->state;
  if (st.devices) return then(Status::OK());
  st.device_waiters.push_back(std::move(then));
  if (st.device_waiters.size() > 1) return;
  self->request(st.config.directory, kControlTimeout, list_devices_atom::value,
                st.config.config.device_filters)
      .then(
          [=](std::vector<DeviceInfo>& devices) {
            self->state.devices = std::move(devices);
            auto waiters = std::move(self->state.device_waiters);
            for (auto& w : waiters)
              w(Status::OK());
          },
          [=](caf::error& err) {
            Status status = from_caf_error(err, "listing the cluster's devices");
            auto waiters = std::move(self->state.device_waiters);
            for (auto& w : waiters)
              w(status);
          });
}

// Prune, place and partition for `signature` (the synchronous part of preparing a run).
StatusOr<std::vector<Partition>> plan_run(Self* self, const RunSignature& signature,
                                          PreparedRun& run) {
  auto& st = self->state;
  TROUPE_ASSIGN_OR_RETURN(GraphDef def, rewrite_for_run(st.graph, signature));
  TROUPE_ASSIGN_OR_RETURN(Graph run_graph, Graph::create(def));
  run.feed_types.resize(signature.feeds.size());
  run.feed_shapes.resize(signature.feeds.size());
  for (int id = 0; id < run_graph.num_nodes(); ++id) {
    const Node& node = run_graph.node(id);
    if (node.op_name() != "_Arg") continue;
    auto index = node.def().find_attr("index")->get<int64_t>();
    run.feed_types[index] = node.output_type(0);
    run.feed_shapes[index] = node.output_shape(0);
  }
  PlacementOptions placement;
  for (const DeviceInfo& d : *st.devices)
    placement.devices.push_back(d.name);
  placement.default_device = st.config.default_device;
  placement.allow_missing_colocation_targets = true;  // pruned runs may lose a target
  placement.allow_soft_placement = st.config.config.allow_soft_placement;
  placement.has_kernel = [](const std::string& op, const std::string& type) {
    return KernelRegistry::global().has_kernel(op, type);
  };
  TROUPE_ASSIGN_OR_RETURN(auto devices, place(run_graph, placement));
  return partition_by_device(run_graph, devices);
}

void finish_preparation(Self* self, const RunSignature& signature,
                        const std::shared_ptr<PreparedRun>& run, const Status& status) {
  if (run->ready || run->failed) return;  // already decided (e.g. failed by a lost task)
  if (status.ok()) {
    run->ready = true;
  } else {
    // Forget the failed run (a later call retries) and release what was registered.
    run->failed = true;
    if (auto it = self->state.runs.find(signature);
        it != self->state.runs.end() && it->second == run) {
      self->state.runs.erase(it);
    }
    for (const PreparedPartition& p : run->partitions) {
      if (p.handle != 0) self->anon_send(p.device, deregister_partition_atom::value, p.handle);
    }
  }
  auto waiters = std::move(run->waiters);
  for (auto& waiter : waiters)
    waiter(status);
}

// Calls `then` with where the steps' run_partition requests for `device` (named `name`) go:
// the data plane's runner for a device of another process whose process has a plane (asked
// once per device actor), the device itself otherwise.
void with_runner(Self* self, const caf::actor& device, const std::string& name,
                 std::function<void(caf::actor)> then) {
  auto& st = self->state;
  if (st.config.plane == nullptr || device.node() == self->node()) return then(device);
  if (auto it = st.runners.find(device.address()); it != st.runners.end()) return then(it->second);
  self->request(device, kControlTimeout, channel_endpoint_atom::value)
      .then(
          [=](std::string& endpoint) {
            caf::actor runner = self->state.config.plane->runner(endpoint, name, device);
            self->state.runners.emplace(device.address(), runner);
            then(runner);
          },
          // A device that does not answer still takes actor messages.
          [=](caf::error&) { then(device); });
}

void register_partitions(Self* self, const RunSignature& signature,
                         const std::shared_ptr<PreparedRun>& run,
                         std::vector<Partition> partitions) {
  auto& st = self->state;
  auto remaining = std::make_shared<size_t>(partitions.size());
  auto first_error = std::make_shared<Status>();
  // By name, once: a step over every task of a large cluster has as many partitions as devices.
  std::unordered_map<std::string_view, const DeviceInfo*> by_name;
  by_name.reserve(st.devices->size());
  for (const DeviceInfo& d : *st.devices)
    by_name.emplace(d.name, &d);
  for (Partition& partition : partitions) {
    auto found = by_name.find(partition.device);
    if (found == by_name.end()) {  // placement only picks listed devices
      if (first_error->ok()) {
        *first_error = errors::Internal("a partition for {}, which the session did not list",
                                        partition.device);
      }
      if (--*remaining == 0) finish_preparation(self, signature, run, *first_error);
      continue;
    }
    const DeviceInfo* device = found->second;
    size_t slot = run->partitions.size();
    run->partitions.push_back(PreparedPartition{device->actor, device->actor, partition.device, 0,
                                                std::move(partition.feed_of_arg),
                                                std::move(partition.fetch_of_ret)});
    auto done = [=](const Status& status) {
      if (!status.ok() && first_error->ok()) *first_error = status;
      if (--*remaining == 0) finish_preparation(self, signature, run, *first_error);
    };
    std::string name = partition.device;
    self->request(device->actor, kControlTimeout, register_partition_atom::value,
                  PartitionSpec{std::move(partition.graph), st.container})
        .then(
            [=](int64_t handle) {
              run->partitions[slot].handle = handle;
              if (run->failed) {  // the run was given up while this partition registered
                self->anon_send(run->partitions[slot].device, deregister_partition_atom::value,
                                handle);
                return done(Status::OK());
              }
              with_runner(self, run->partitions[slot].device, name, [=](caf::actor runner) {
                run->partitions[slot].runner = std::move(runner);
                done(Status::OK());
              });
            },
            [=](caf::error& err) {
              done(from_caf_error(err, "registering a partition on " + name));
            });
  }
}

// Looks up again the devices of `partitions` that are on lost tasks (a restarted task has new
// actors), then calls `then`.
void refresh_stale_devices(Self* self, const std::vector<Partition>& partitions,
                           std::function<void(const Status&)> then) {
  auto& st = self->state;
  std::set<std::string> stale;
  for (const Partition& p : partitions) {
    for (const std::string& task : st.stale_tasks) {
      if (on_task(p.device, task)) stale.insert(p.device);
    }
  }
  if (stale.empty()) return then(Status::OK());
  auto remaining = std::make_shared<size_t>(stale.size());
  auto first_error = std::make_shared<Status>();
  for (const std::string& name : stale) {
    auto done = [=](const Status& status) {
      if (!status.ok() && first_error->ok()) *first_error = status;
      if (--*remaining == 0) then(*first_error);
    };
    self->request(st.config.directory, kControlTimeout, resolve_device_atom::value, name)
        .then(
            [=](caf::actor& actor) {
              auto& st = self->state;
              if (st.devices) {
                for (DeviceInfo& d : *st.devices) {
                  if (d.name == name) d.actor = actor;
                }
              }
              std::erase_if(st.stale_tasks,
                            [&](const std::string& task) { return on_task(name, task); });
              done(Status::OK());
            },
            [=](caf::error& err) { done(from_caf_error(err, "looking up " + name)); });
  }
}

// Calls `then` once the run for `signature` is registered on every device (or failed).
void with_prepared_run(Self* self, const RunSignature& signature,
                       std::function<void(const Status&, std::shared_ptr<PreparedRun>)> then) {
  auto& st = self->state;
  if (auto it = st.runs.find(signature); it != st.runs.end()) {
    auto run = it->second;
    if (run->ready) return then(Status::OK(), run);
    run->waiters.push_back([then, run](const Status& s) { then(s, run); });
    return;
  }
  auto run = std::make_shared<PreparedRun>();
  st.runs.emplace(signature, run);
  run->waiters.push_back([then, run](const Status& s) { then(s, run); });
  with_devices(self, [=](const Status& listed) {
    if (!listed.ok()) return finish_preparation(self, signature, run, listed);
    auto planned = plan_run(self, signature, *run);
    if (!planned.ok()) return finish_preparation(self, signature, run, planned.status());
    auto partitions = std::make_shared<std::vector<Partition>>(std::move(planned).value());
    refresh_stale_devices(self, *partitions, [=](const Status& refreshed) {
      if (!refreshed.ok()) return finish_preparation(self, signature, run, refreshed);
      register_partitions(self, signature, run, std::move(*partitions));
    });
  });
}

void start_step(Self* self, int64_t step_id, const std::shared_ptr<PreparedRun>& run,
                RunStepRequest& request) {
  auto& st = self->state;
  for (size_t i = 0; i < request.feeds.size(); ++i) {
    const Tensor& value = request.feeds[i];
    const std::string& name = request.signature.feeds[i];
    if (value.dtype() != run->feed_types[i]) {
      return fail_step(
          self, step_id,
          errors::InvalidArgument("feed '{}' is {}, but the graph expects {}", name,
                                  dtype_name(value.dtype()), dtype_name(run->feed_types[i])));
    }
    if (!run->feed_shapes[i].matches(value.shape())) {
      return fail_step(
          self, step_id,
          errors::InvalidArgument("feed '{}' has shape {}, but the graph expects {}", name,
                                  value.shape().to_string(), run->feed_shapes[i].to_string()));
    }
  }
  PendingStep& step = st.pending.at(step_id);
  // What is left of the deadline set when the step arrived.
  int64_t timeout_ms = step.timeout_ms;
  caf::duration timeout(caf::infinite);
  if (timeout_ms > 0) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(step.deadline - self->clock().now());
    timeout = caf::duration(std::max(left, std::chrono::milliseconds(1)));
  }
  step.started = true;
  step.response.fetches.resize(request.signature.fetches.size());
  step.fetch_names = request.signature.fetches;
  step.remaining = run->partitions.size();
  for (const PreparedPartition& p : run->partitions) {
    step.devices.push_back(p.device);
    step.device_names.push_back(p.device_name);
    step.response.metadata.devices.push_back(p.device_name);
  }
  bool traced = request.options.trace_level != TraceLevel::kNoTrace;
  if (traced) step.response.metadata.step_stats.resize(run->partitions.size());
  bool graphs = request.options.output_partition_graphs;
  if (graphs) step.response.metadata.partition_graphs.resize(run->partitions.size());
  for (size_t index = 0; index < run->partitions.size(); ++index) {
    const PreparedPartition& p = run->partitions[index];
    RunPartitionRequest part{step_id, p.handle, {}, traced, graphs};
    for (int feed : p.feed_of_arg)
      part.args.push_back(request.feeds[feed]);
    auto fetch_of_ret = p.fetch_of_ret;
    std::string device_name = p.device_name;
    self->request(p.runner, timeout, run_partition_atom::value, std::move(part))
        .then(
            [=](RunPartitionResponse& response) {
              auto it = self->state.pending.find(step_id);
              if (it == self->state.pending.end()) return;
              RunStepResponse& out = it->second.response;
              for (size_t r = 0; r < response.rets.size(); ++r) {
                out.metadata.tensors_to_master += 1;
                out.metadata.bytes_to_master += response.rets[r].total_bytes();
                out.fetches[fetch_of_ret[r]] = std::move(response.rets[r]);
              }
              if (index < out.metadata.step_stats.size()) {
                out.metadata.step_stats[index] = std::move(response.stats);
                out.metadata.step_stats[index].device = device_name;
              }
              if (index < out.metadata.partition_graphs.size() && !response.graph.empty()) {
                out.metadata.partition_graphs[index] = std::move(response.graph.front());
              }
              if (--it->second.remaining == 0) {
                for (size_t f = 0; f < out.fetches.size(); ++f) {
                  Status fits =
                      check_fits_in_message(self->system(), it->second.client, out.fetches[f],
                                            "fetch '{}'", it->second.fetch_names[f]);
                  if (!fits.ok()) return fail_step(self, step_id, fits);
                }
                drop_oversized_trace(self->system(), it->second.client, out.metadata.step_stats,
                                     out.metadata.partition_graphs);
                it->second.promise.deliver(std::move(out));
                self->state.pending.erase(it);
              }
            },
            [=](caf::error& err) {
              if (err == caf::sec::request_timeout) {
                fail_step(self, step_id,
                          errors::DeadlineExceeded("step did not finish within {} ms (waiting "
                                                   "for {})",
                                                   timeout_ms, device_name));
              } else {
                fail_step(self, step_id, from_caf_error(err, "running a step on " + device_name));
              }
            });
  }
}

// The deadline of step `step_id` has come. A step whose partitions were sent is failed by
// their requests' timeouts, which name the device still running; one still being prepared
// fails here, naming the tasks this server is still trying to reach, if any.
void step_deadline(Self* self, int64_t step_id) {
  auto it = self->state.pending.find(step_id);
  if (it == self->state.pending.end() || it->second.started) return;
  int64_t timeout_ms = it->second.timeout_ms;
  auto fail = [=](const std::vector<std::string>& connecting) {
    // Started meanwhile: its partitions' own timeouts, due now too, name the device.
    auto again = self->state.pending.find(step_id);
    if (again == self->state.pending.end() || again->second.started) return;
    std::string waiting = "preparing it (placing and registering its partitions)";
    for (size_t i = 0; i < connecting.size(); ++i) {
      waiting = (i == 0 ? "connecting to " : waiting + ", ") + connecting[i];
    }
    fail_step(self, step_id,
              errors::DeadlineExceeded("step did not finish within {} ms (still {})", timeout_ms,
                                       waiting));
  };
  self->request(self->state.config.directory, std::chrono::seconds(1), pending_lookups_atom::value)
      .then([=](std::vector<std::string>& connecting) { fail(connecting); },
            [=](caf::error&) { fail({}); });
}

// Task `job`:`index` is lost: steps with a partition there fail with `reason`, and runs placed
// there are forgotten, so later steps look its devices up again (failing fast while the task
// is away). Steps and runs that do not use the task go on.
void task_lost(Self* self, const std::string& job, int index, const Status& reason) {
  auto& st = self->state;
  const std::string prefix = DeviceName::task_name(job, index) + "/";
  std::vector<int64_t> failing;
  for (const auto& [id, step] : st.pending) {
    if (std::any_of(step.device_names.begin(), step.device_names.end(),
                    [&](const std::string& d) { return on_task(d, prefix); })) {
      failing.push_back(id);
    }
  }
  for (int64_t id : failing)
    fail_step(self, id, reason);
  st.stale_tasks.insert(prefix);
  st.runners.clear();  // asked again as runs are prepared
  std::vector<RunSignature> gone;
  for (const auto& [signature, run] : st.runs) {
    if (std::any_of(run->partitions.begin(), run->partitions.end(),
                    [&](const PreparedPartition& p) { return on_task(p.device_name, prefix); })) {
      gone.push_back(signature);
    }
  }
  for (const RunSignature& signature : gone) {
    auto run = st.runs.at(signature);
    if (!run->ready) {
      finish_preparation(self, signature, run, reason);  // fails its waiting steps
      continue;
    }
    st.runs.erase(signature);
    for (const PreparedPartition& p : run->partitions) {
      if (p.handle != 0 && !on_task(p.device_name, prefix)) {
        self->anon_send(p.device, deregister_partition_atom::value, p.handle);
      }
    }
  }
}

void close_session(Self* self, const Status& reason) {
  auto& st = self->state;
  std::vector<int64_t> ids;
  for (const auto& [id, step] : st.pending)
    ids.push_back(id);
  for (int64_t id : ids)
    fail_step(self, id, reason);
  auto device_waiters = std::move(st.device_waiters);
  for (auto& waiter : device_waiters)
    waiter(reason);
  for (auto& [signature, run] : st.runs) {
    auto waiters = std::move(run->waiters);
    for (auto& waiter : waiters)
      waiter(reason);
    for (const PreparedPartition& p : run->partitions) {
      if (p.handle != 0) self->anon_send(p.device, deregister_partition_atom::value, p.handle);
    }
  }
  st.runs.clear();
  if (!st.container.empty() && st.devices) {
    for (const DeviceInfo& d : *st.devices) {
      self->anon_send(d.actor, clear_container_atom::value, st.container);
    }
  }
}

caf::behavior master_session_behavior(Self* self, MasterSessionConfig config) {
  self->state.config = std::move(config);
  if (self->state.config.config.isolate_session_state) {
    self->state.container = fmt::format("session_{}", self->state.config.session_id);
  }
  self->send(self->state.config.directory, watch_tasks_atom::value);
  if (self->state.config.client) {
    self->monitor(self->state.config.client);
    self->set_down_handler([=](caf::down_msg& msg) {
      if (msg.source != self->state.config.client.address()) return;
      // A client that died would otherwise leave its steps running (a dequeue taking items
      // meant for others) and its session here until the server stops.
      close_session(
          self, errors::Cancelled("the client is gone ({})", self->system().render(msg.reason)));
      self->quit();
    });
  }
  self->set_exit_handler([=](caf::exit_msg& msg) {
    close_session(self, errors::Cancelled("the server is shutting down"));
    self->quit(msg.reason);
  });
  return {
      [=](extend_graph_atom, const GraphDef& delta) -> caf::result<caf::unit_t> {
        Status status = check_client_nodes(delta);
        if (status.ok()) status = self->state.graph.extend(delta);
        if (!status.ok()) return to_caf_error(status);
        return caf::unit;
      },
      [=](run_step_atom, RunStepRequest& request) -> caf::result<RunStepResponse> {
        if (request.feeds.size() != request.signature.feeds.size()) {
          return to_caf_error(errors::InvalidArgument("{} feed names but {} feed values",
                                                      request.signature.feeds.size(),
                                                      request.feeds.size()));
        }
        // Before make_response_promise, which takes the sender out of the current message.
        caf::node_id client =
            self->current_sender() ? self->current_sender()->node() : self->node();
        auto promise = self->make_response_promise<RunStepResponse>();
        // Random ids keep concurrent steps of all sessions apart across the cluster.
        int64_t step_id = random_id();
        PendingStep step{promise, client, {}, {}, {}, {}, 0};
        step.timeout_ms = request.options.timeout_ms > 0
                              ? request.options.timeout_ms
                              : self->state.config.config.operation_timeout_ms;
        // The client may have spent some of it already (sending the graph's new nodes).
        auto left = std::chrono::milliseconds(
            std::max<int64_t>(1, step.timeout_ms - std::max<int64_t>(0, request.spent_ms)));
        if (step.timeout_ms > 0) step.deadline = self->clock().now() + left;
        step.step_tag = request.options.step_tag;
        self->state.pending.emplace(step_id, std::move(step));
        auto shared_request = std::make_shared<RunStepRequest>(std::move(request));
        with_prepared_run(self, shared_request->signature,
                          [=](const Status& status, std::shared_ptr<PreparedRun> run) {
                            if (!status.ok()) return fail_step(self, step_id, status);
                            if (self->state.pending.count(step_id) == 0) return;
                            start_step(self, step_id, run, *shared_request);
                          });
        // A step whose run was prepared already has started, and its partitions' requests
        // carry the deadline; one still being prepared gets a timer (one per such step only:
        // a timer for every step would pile up at high step rates).
        if (auto it = self->state.pending.find(step_id);
            it != self->state.pending.end() && !it->second.started && it->second.timeout_ms > 0) {
          self->delayed_send(self, left, step_deadline_atom::value, step_id);
        }
        return promise;
      },
      [=](task_lost_atom, const std::string& job, int32_t index, const caf::error& reason) {
        task_lost(self, job, index, from_caf_error(reason));
      },
      [=](step_deadline_atom, int64_t step_id) { step_deadline(self, step_id); },
      [=](cancel_step_atom, int64_t step_tag) {
        std::vector<int64_t> tagged;
        for (const auto& [id, step] : self->state.pending) {
          if (step_tag != 0 && step.step_tag == step_tag) tagged.push_back(id);
        }
        for (int64_t id : tagged) {
          fail_step(self, id, errors::Cancelled("the step was cancelled by its client"));
        }
        return static_cast<int32_t>(tagged.size());
      },
      [=](heartbeat_atom) { return caf::unit; },
      [=](close_session_atom) {
        close_session(self, errors::Cancelled("the session was closed"));
        self->quit();
        return caf::unit;
      },
  };
}

}  // namespace

caf::actor spawn_master_session(caf::local_actor* parent, MasterSessionConfig config) {
  return parent->spawn<caf::linked>(master_session_behavior, std::move(config));
}

}  // namespace troupe
