// The device actor: partition registry, asynchronous steps, rendezvous and abort.
#include "troupe/actors/device_actor.hpp"

#include <deque>
#include <map>
#include <set>

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/device_rendezvous.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/partition_run_hook.hpp"
#include "troupe/actors/transport/data_plane.hpp"
#include "troupe/actors/transport/inline_unit.hpp"
#include "troupe/devices/executor.hpp"
#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {
namespace {

struct Partition {
  std::shared_ptr<Executor> executor;
  std::string container;
};

struct RunningStep {
  std::unique_ptr<StepContext> context;
  std::shared_ptr<Executor> executor;  // kept alive even if the partition is deregistered
  caf::actor_addr master;              // the master session driving the step
  std::unique_ptr<std::vector<NodeExecStats>> stats;  // a traced step's (StepContext::stats)
};

// A partition run a simulated delay holds back (FaultKind::kDelay).
struct DelayedRun {
  RunPartitionRequest request;
  caf::actor_addr master;
  caf::typed_response_promise<RunPartitionResponse> promise;
};

struct DeviceState {
  std::unique_ptr<Device> device;
  std::unique_ptr<DeviceRendezvous> rendezvous;
  std::map<int64_t, Partition> partitions;
  std::map<int64_t, RunningStep> running;
  std::set<caf::actor_addr> masters;  // monitored masters (of steps that ran here)
  std::deque<std::function<void()>> work;
  std::map<int64_t, DelayedRun> delayed;
  int64_t next_handle = 1;
  int64_t next_delayed = 1;
  static inline const char* name = "troupe.device";
};

using Self = caf::stateful_actor<DeviceState>;

// Cancels step `step_id` here: a running step fails with `reason`, a later one at once.
void abort_step(Self* self, int64_t step_id, const Status& reason) {
  self->state.rendezvous->abort_step(step_id, reason);
  if (auto it = self->state.running.find(step_id); it != self->state.running.end()) {
    it->second.context->cancellation.start_cancel(reason);
  }
}

// A master is monitored from its first step here until it is gone (its down message), not
// from step to step: demonitoring scans every monitor the master has (CAF 0.17), and a master
// whose step touches N devices has N, so that a monitor per step cost O(N^2) per step.
void watch_master(Self* self, const caf::actor_addr& master) {
  if (master && self->state.masters.insert(master).second) self->monitor(master);
}

using RunPartitionPromise = caf::typed_response_promise<RunPartitionResponse>;

// How many iterations a loop of a simulated device runs before it lets other messages in.
constexpr int64_t kSimulatedSliceIterations = 256;

// Runs partition `request.handle` for step `request.step_id` of `master`, answering through
// `promise`.
void run_partition(Self* self, RunPartitionRequest request, const caf::actor_addr& master,
                   RunPartitionPromise promise, bool simulated) {
  auto& st = self->state;
  auto it = st.partitions.find(request.handle);
  if (it == st.partitions.end()) {
    promise.deliver(to_caf_error(
        errors::NotFound("device {} has no partition {}", st.device->name(), request.handle)));
    return;
  }
  if (Status aborted = st.rendezvous->table().aborted(request.step_id); !aborted.ok()) {
    promise.deliver(to_caf_error(aborted));
    return;
  }
  int64_t step_id = request.step_id;
  auto context = std::make_unique<StepContext>();
  context->step_id = step_id;
  context->container = it->second.container;
  context->args = std::move(request.args);
  context->rendezvous = st.rendezvous.get();
  if (simulated) context->slice_iterations = kSimulatedSliceIterations;
  context->schedule = [self](std::function<void()> fn) {
    if (self->state.work.empty()) self->send(self, run_work_atom::value);
    self->state.work.push_back(std::move(fn));
  };
  std::unique_ptr<std::vector<NodeExecStats>> stats;
  if (request.collect_stats) {
    stats = std::make_unique<std::vector<NodeExecStats>>();
    context->stats = stats.get();
  }
  StepContext& step = *context;
  auto executor = it->second.executor;
  st.running.emplace(step_id, RunningStep{std::move(context), executor, master, std::move(stats)});
  watch_master(self, master);
  bool return_graph = request.return_graph;
  executor->run_async(step, [self, step_id, promise, return_graph](const Status& status) mutable {
    // The answer waits for the step's sends to peers still being resolved.
    self->state.rendezvous->when_sent(step_id, [self, step_id, promise, status,
                                                return_graph](const Status& sent) mutable {
      auto node = self->state.running.extract(step_id);
      self->state.rendezvous->table().finish_step(step_id);
      Status done = status.ok() ? sent : status;
      auto& rets = node.mapped().context->rets;
      for (size_t r = 0; r < rets.size() && done.ok(); ++r) {
        done = check_fits_in_message(self->system(), node.mapped().master.node(), rets[r],
                                     "partition result {}", r);
      }
      // A master session waiting for this may take the answer on this thread.
      InlineUnit::NestedScope nested;
      if (!done.ok()) {
        promise.deliver(to_caf_error(done));
      } else {
        RunPartitionResponse response{std::move(rets), {}, {}};
        std::vector<DeviceStepStats> stats;
        if (node.mapped().stats != nullptr) {
          stats.push_back({self->state.device->name(), std::move(*node.mapped().stats)});
        }
        if (return_graph) {
          response.graph.push_back(node.mapped().executor->graph().to_graph_def());
        }
        drop_oversized_trace(self->system(), node.mapped().master.node(), stats, response.graph);
        if (!stats.empty()) response.stats = std::move(stats.front());
        promise.deliver(std::move(response));
      }
    });
  });
}

caf::behavior device_behavior(Self* self, DeviceActorConfig config) {
  auto& st = self->state;
  // Steps whose master is gone (its task died) can never finish: abort them.
  // A device that stops (its task is stopping) cancels the steps still running here first: a
  // step waiting on a queue is held by the queue's waiter while holding the queue, a cycle
  // that would otherwise outlive the device (and its master session with it).
  self->set_exit_handler([=](caf::exit_msg& msg) {
    std::vector<int64_t> ids;
    for (const auto& [id, running] : self->state.running)
      ids.push_back(id);
    for (int64_t id : ids) {
      abort_step(self, id,
                 errors::Cancelled("step {} on {}: the device is stopping", id,
                                   self->state.device->name()));
    }
    if (config.plane != nullptr) config.plane->detach(self->state.device->name());
    self->quit(msg.reason);
  });
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    st.masters.erase(msg.source);
    std::vector<int64_t> orphaned;
    for (const auto& [id, step] : st.running) {
      if (step.master == msg.source) orphaned.push_back(id);
    }
    for (int64_t id : orphaned) {
      abort_step(self, id,
                 errors::Aborted("step {} on {}: its master session is gone ({})", id,
                                 st.device->name(), self->system().render(msg.reason)));
    }
  });
  self->send(config.directory, watch_tasks_atom::value);
  if (config.gpu != nullptr) {
    st.device = config.cpu_pool != nullptr
                    ? std::make_unique<Device>(config.name, config.gpu, config.cpu_pool)
                    : std::make_unique<Device>(config.name, config.gpu, config.intra_op_threads);
  } else {
    st.device = config.cpu_pool != nullptr
                    ? std::make_unique<Device>(config.name, config.type, config.cpu_pool)
                    : std::make_unique<Device>(config.name, config.type, config.intra_op_threads);
  }
  st.rendezvous = std::make_unique<DeviceRendezvous>(
      self, config.directory, st.device->name(),
      [self](int64_t step, const Status& status) { abort_step(self, step, status); }, config.plane);
  if (config.plane != nullptr) {
    config.plane->attach(st.device->name(), caf::actor_cast<caf::actor>(self));
  }
  return {
      [=](register_partition_atom, PartitionSpec& spec) -> caf::result<int64_t> {
        auto graph = Graph::create(spec.graph);
        if (!graph.ok()) return to_caf_error(graph.status());
        auto executor = Executor::create(std::make_shared<const Graph>(std::move(graph).value()),
                                         *self->state.device);
        if (!executor.ok()) return to_caf_error(executor.status());
        int64_t handle = self->state.next_handle++;
        self->state.partitions.emplace(
            handle, Partition{std::move(executor).value(), std::move(spec.container)});
        return handle;
      },
      [=](run_partition_atom, RunPartitionRequest& request) -> caf::result<RunPartitionResponse> {
        // Before make_response_promise, which takes the sender out of the current message.
        auto master = caf::actor_cast<caf::actor_addr>(self->current_sender());
        auto promise = self->make_response_promise<RunPartitionResponse>();
        if (config.faults != nullptr) {
          std::chrono::milliseconds delay{0};
          switch (config.faults->on_run_partition(&delay)) {
            case PartitionRunHook::Action::kRun:
              break;
            case PartitionRunHook::Action::kDelay: {
              // A slow machine: this run starts late, on a timer (of the actor system's clock,
              // so virtual in a deterministic simulation), and the device goes on meanwhile.
              int64_t key = self->state.next_delayed++;
              self->state.delayed.emplace(key, DelayedRun{std::move(request), master, promise});
              self->delayed_send(self, delay, delayed_run_atom::value, key);
              return promise;
            }
            case PartitionRunHook::Action::kDrop:
            case PartitionRunHook::Action::kKill:
              // Lost, or the task is dying: never answered.
              return promise;
          }
        }
        run_partition(self, std::move(request), master, promise, config.simulated);
        return promise;
      },
      [=](delayed_run_atom, int64_t key) {
        auto node = self->state.delayed.extract(key);
        if (node.empty()) return;
        DelayedRun& run = node.mapped();
        run_partition(self, std::move(run.request), run.master, run.promise, config.simulated);
      },
      [=](run_work_atom) {
        // The work there is now; work it schedules waits for the next run_work, behind the
        // messages that came meanwhile (a step's cancellation, say: a long loop that schedules
        // its next slice cannot keep them out).
        std::deque<std::function<void()>> batch;
        batch.swap(self->state.work);
        while (!batch.empty()) {
          auto fn = std::move(batch.front());
          batch.pop_front();
          fn();
        }
      },
      [=](flush_sends_atom) { self->state.rendezvous->flush(); },
      [=](recv_tensor_atom, int64_t step_id, std::string& key, Tensor& value) {
        Status status = self->state.rendezvous->deliver(step_id, key, std::move(value));
        if (!status.ok()) abort_step(self, step_id, status);
      },
      [=](channel_endpoint_atom) {
        return config.plane != nullptr ? config.plane->address() : std::string();
      },
      [=](abort_step_atom, int64_t step_id, const caf::error& reason) {
        abort_step(self, step_id, from_caf_error(reason));
      },
      [=](task_lost_atom, const std::string& job, int32_t index, const caf::error&) {
        // Tensors for its devices are sent to a fresh lookup from now on.
        self->state.rendezvous->forget_task(DeviceName::task_name(job, index) + "/");
      },
      [=](deregister_partition_atom, int64_t handle) {
        self->state.partitions.erase(handle);
        return caf::unit;
      },
      [=](clear_container_atom, const std::string& container) {
        self->state.device->resources().clear(container);
        return caf::unit;
      },
  };
}

}  // namespace

caf::actor spawn_device_actor(caf::local_actor* parent, DeviceActorConfig config) {
  return parent->spawn<caf::linked>(device_behavior, std::move(config));
}

}  // namespace troupe
