// DeterministicCluster: every task of a ClusterSpec as task actors of one actor system whose
// actors all run on the calling thread, one message at a time, in an order drawn from a seed,
// on a virtual clock. Part of the simulation library (actors/sim/).
//
// The system runs on CAF 0.17's test coordinator (the scheduler behind caf/test/dsl.hpp): an
// actor with a message waiting is a job, and step() runs one message of the job the seed picks
// among those waiting. When no actor has a message, the virtual clock jumps to the next timer
// (a request's timeout, a delayed_send, a step's deadline, a directory's retry) and fires it:
// nothing sleeps, and a 1 s deadline costs no wall time. The runtime reads time through the
// actor system's clock (caf::actor_clock, LevelDB's Env in this role), so deadlines, retries
// and simulated delays all run on the virtual clock; random ids come from the seed as well
// (seed_random_ids). Kernels run inside their device actor's turn, on one compute thread the
// caller waits for. So the same seed gives the same messages in the same order at the same
// virtual times, on any machine: every message taken is a hop ("sender -> receiver: what" at
// a virtual time), and trace_hash() is an FNV-1a hash of them. Each message taken moves the
// clock by DeterministicOptions::message_time, and a timer that is due fires before the next
// message, so deadlines hold even while actors never idle.
//
// Not simulated: the network (tasks find each other in the process's registry, as LocalCluster's
// without `listen`) and wall-clock waits outside the actors (none in this mode: the clients are
// actors of the system too, see actors/sim/simulated_training.hpp).
//
// Not thread-safe: one thread starts it, drives it and destroys it, and for a run to follow
// from its seed no other cluster may run on that thread meanwhile (they share the thread's id
// generator, which the cluster seeds and, when it goes, leaves to the operating system again).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/run_options.hpp"
#include "troupe/actors/sim/fault_injector.hpp"
#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/cluster/server_def.hpp"
#include "troupe/graph/core/tensor.hpp"
#include "troupe/graph/graph_def.hpp"

namespace caf::scheduler {
class test_coordinator;
}  // namespace caf::scheduler

namespace caf::detail {
class test_actor_clock;
}  // namespace caf::detail

namespace troupe {

class CpuPool;

struct DeterministicOptions {
  uint64_t seed = 1;  // picks the order of messages and the random ids
  // How far the clock moves for each message taken, so that time passes while actors are busy
  // too: a deadline then fires even in a step that never lets the cluster idle (a loop).
  std::chrono::nanoseconds message_time{1000};
  // Simulated faults, at most one per task (actors/sim/fault_injector.hpp). A kDelay holds a
  // partition run on the virtual clock; a kFreeze freezes the whole task (freeze()), a
  // kPartition cuts it off the network (partition()).
  std::vector<Fault> faults;
  // Keep every hop's text (trace()); the hash is kept either way.
  bool keep_trace = false;
};

class DeterministicCluster {
 public:
  // Starts every task of `cluster` (addresses are names only). InvalidArgument for an empty
  // cluster or a bad fault.
  static StatusOr<std::unique_ptr<DeterministicCluster>> start(const ClusterSpec& cluster,
                                                               DeterministicOptions options = {});
  // Stops what is still running (stop()).
  ~DeterministicCluster();
  DeterministicCluster(const DeterministicCluster&) = delete;
  DeterministicCluster& operator=(const DeterministicCluster&) = delete;

  caf::actor_system& system() { return system_; }
  const ClusterSpec& cluster() const { return cluster_; }
  uint64_t seed() const { return options_.seed; }

  // The task actor of (job, index); InvalidArgument naming it if the cluster has none,
  // Unavailable if it was killed.
  StatusOr<caf::actor> task(const std::string& job, int index) const;

  // Runs one message of an actor the seed picks among those with one waiting; when none has
  // one, moves the virtual clock to the next timer and fires it. False when nothing is left.
  bool step();
  // Runs until `done()` holds (true), nothing is left to run, or the virtual clock passes
  // `limit` from now (false).
  bool run_until(const std::function<bool()>& done, std::chrono::nanoseconds limit);
  // Runs until no actor that may run has a message left: time moves only with the messages
  // (timers that come due meanwhile fire), never to a later timer.
  void run_ready();

  // Virtual time since the cluster started.
  std::chrono::nanoseconds now() const;
  // Messages taken (and timers fired) so far, and the hash of their hops: of each hop's time,
  // actor ids (given in spawn order) and kind, and of the text of freezes, cuts and held
  // messages. The same for the same seed and options, keep_trace or not.
  uint64_t messages() const { return messages_; }
  uint64_t trace_hash() const { return hash_; }
  // Every hop, "t=<virtual us> sender -> receiver: what", with DeterministicOptions::keep_trace.
  const std::vector<std::string>& trace() const { return trace_; }
  // Names `actor` in the trace ("actor#<id>" otherwise).
  void label(const caf::actor& actor, std::string name);
  // Names `actor` and makes it part of task (job, index): it freezes with the task. The task's
  // own actors (task, directory, devices, master service) and the sessions create_session
  // makes are; a client of a task's process (as a TF 1.x worker's) should be too.
  void adopt(const caf::actor& actor, std::string name, const std::string& job, int index);

  // The client side of a session, driven on this thread (each call runs the simulation until
  // it is answered, or `timeout` of virtual time passed: DeadlineExceeded). A session on task
  // (job, index)'s master service, as Session::create makes one:
  StatusOr<caf::actor> create_session(const std::string& job, int index,
                                      std::optional<SessionConfig> config = std::nullopt,
                                      std::chrono::milliseconds timeout = kClientTimeout);
  // Extends the session's graph by `graph`'s nodes (all of them: a GraphDef of new nodes).
  Status extend(const caf::actor& session, const GraphDef& graph,
                std::chrono::milliseconds timeout = kClientTimeout);
  // Runs a step: feeds, fetches and targets by name.
  StatusOr<std::vector<Tensor>> run(const caf::actor& session,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {},
                                    const RunOptions& options = {},
                                    std::chrono::milliseconds timeout = kClientTimeout);
  static constexpr std::chrono::milliseconds kClientTimeout{60000};

  // Sends a request from the cluster's client, runs until its answer came or the virtual
  // clock passed `timeout`, and returns it: DeadlineExceeded when none came.
  template <class T, class... Ts>
  StatusOr<T> ask(const caf::actor& to, std::chrono::milliseconds timeout, Ts&&... xs) {
    // A client of its own: an answer that comes after its ask gave up goes nowhere, instead
    // of standing in the way of the next ask's.
    caf::scoped_actor client{system_, /*hide=*/true};
    const caf::actor_id client_id = client->id();
    labels_[client_id] = "client";
    auto handle = client->request(to, caf::infinite, std::forward<Ts>(xs)...);
    const bool answered = run_until([&] { return !client->mailbox().empty(); }, timeout);
    labels_.erase(client_id);
    if (!answered) {
      return errors::DeadlineExceeded("no answer within {} ms of virtual time", timeout.count());
    }
    StatusOr<T> result = errors::Internal("unexpected answer");
    if constexpr (std::is_same_v<T, caf::unit_t>) {  // an empty answer
      handle.receive([&] { result = caf::unit; },
                     [&](caf::error& error) { result = from_caf_error(error); });
    } else {
      handle.receive([&](T& value) { result = std::move(value); },
                     [&](caf::error& error) { result = from_caf_error(error); });
    }
    return result;
  }

  // Stops task (job, index) as if its process died: its actors exit (reason kill) and its
  // name leaves the registry. InvalidArgument if there is no such task.
  Status kill(const std::string& job, int index);
  // Freezes task (job, index) for `duration` of virtual time from now: none of its actors (see
  // adopt) runs until then; messages to them wait. InvalidArgument if there is no such task.
  Status freeze(const std::string& job, int index, std::chrono::milliseconds duration);
  // Whether task (job, index) was frozen at some time in [from, to] (times as now() gives).
  bool was_frozen(const std::string& job, int index, std::chrono::nanoseconds from,
                  std::chrono::nanoseconds to) const;
  // Cuts task (job, index) off the network for `duration` of virtual time from now: messages
  // between its actors and other tasks' are held, in order, and delivered when it heals, as
  // TCP would hold them (steps that need them meet their deadlines meanwhile). Messages within
  // the task go on. InvalidArgument if there is no such task.
  Status partition(const std::string& job, int index, std::chrono::milliseconds duration);
  // Messages held by partitions so far.
  uint64_t held_messages() const { return held_count_; }

  // Stops every task and every actor spawned with spawn_owned, and runs until no actor has a
  // message left. Returns how many actors of the system still run (0: none leaked).
  size_t stop();
  // Spawns an actor of the simulation (a client) that stop() stops, labelled `name`.
  template <class F, class... Ts>
  caf::actor spawn_owned(std::string name, F fn, Ts&&... xs) {
    caf::actor actor = system_.spawn(fn, std::forward<Ts>(xs)...);
    label(actor, std::move(name));
    owned_.push_back(actor);
    return actor;
  }

 private:
  explicit DeterministicCluster(DeterministicOptions options);
  static caf::actor_system_config& configure(caf::actor_system_config& config);
  Status start_task(const std::string& job, int index);
  void record(const std::string& text);
  void record_hop(caf::abstract_actor& receiver, caf::mailbox_element& element);
  void hash_bytes(const void* data, size_t size);
  void hash_value(uint64_t value);
  std::string name_of(caf::actor_id id) const;
  int64_t now_us() const;  // now(), in microseconds: the time a trace line shows
  caf::detail::test_actor_clock& clock() const;
  bool frozen(caf::resumable* job) const;
  // The index in the coordinator's queue of a job the seed picks among those not frozen; the
  // queue's size if there is none.
  size_t pick_runnable();
  // step(), except that time does not pass beyond `until` (false then), and with `jump`
  // false, does not jump to the next timer either (false when no actor has a message).
  bool advance(caf::actor_clock::time_point until, bool jump = true);
  // When the next timer fires or the next freeze or partition ends, whichever comes first;
  // none if neither.
  std::optional<caf::actor_clock::time_point> next_event() const;
  // After the clock moved: freezes and partitions that ended are over, and the messages held
  // by a partition that healed go to their receivers.
  void time_moved();
  // Whether `element`, about to go to `receiver`, crosses a cut link (partition()).
  bool crosses_cut(const caf::mailbox_element& element, const caf::abstract_actor& receiver) const;
  using TaskKey = std::pair<std::string, int>;

  DeterministicOptions options_;
  caf::actor_system_config config_;
  caf::actor_system system_;
  caf::scheduler::test_coordinator& scheduler_;
  std::mt19937_64 order_;
  caf::actor_clock::time_point started_;
  ClusterSpec cluster_;
  std::string group_;
  std::shared_ptr<const CpuPool> cpu_pool_;
  std::map<std::pair<std::string, int>, caf::actor> tasks_;
  std::vector<caf::actor> owned_;
  std::map<caf::actor_id, std::string> labels_;
  std::map<caf::actor_id, TaskKey> members_;                      // adopt()
  std::map<TaskKey, caf::actor_clock::time_point> frozen_until_;  // freeze()
  struct Freeze {
    TaskKey task;
    std::chrono::nanoseconds from, until;  // as now() gives
  };
  std::vector<Freeze> freezes_;                                // every freeze so far
  std::map<TaskKey, caf::actor_clock::time_point> cut_until_;  // partition()
  struct Held {
    caf::strong_actor_ptr receiver;
    caf::mailbox_element_ptr element;
  };
  std::vector<Held> held_;  // in the order they were held
  uint64_t held_count_ = 0;
  uint64_t messages_ = 0;
  uint64_t hash_ = 14695981039346656037ull;  // FNV-1a's offset basis
  std::vector<std::string> trace_;
  size_t baseline_actors_ = 0;
  bool stopped_ = false;
};

}  // namespace troupe
