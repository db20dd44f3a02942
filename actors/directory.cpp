// The directory actor: task and device resolution with lazy, retried connections, and failure
// detection (closed connections, heartbeats).
#include "troupe/actors/directory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/transport/handshake_probe.hpp"
#include "troupe/actors/transport/middleman.hpp"
#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/core/logging.hpp"

namespace troupe {
namespace {

using TaskKey = std::pair<std::string, int>;
using TaskCallback = std::function<void(const Status&, const caf::actor&)>;
// The actor system's clock: the steady clock, or the virtual one of a deterministic
// simulation (actors/sim/deterministic_cluster.hpp).
using Clock = caf::actor_clock;

// How long the probe of a failed handshake may take (actors/transport/handshake_probe.hpp).
constexpr auto kProbeTimeout = std::chrono::milliseconds(1000);

struct Resolving {
  std::vector<TaskCallback> waiters;
  std::string address;
  Clock::time_point deadline;
  std::chrono::milliseconds backoff{100};
  bool retry = true;  // false: one attempt (the task was lost)
  // Connected, monitored, and asked for a first heartbeat; handed out once it answers.
  caf::actor settling;
  uint64_t settle_attempt = 0;  // tells this heartbeat's answer from an earlier one's
};

// A task we are connected to.
// Each connection to a task has a generation of its own. A heartbeat's answer or timeout is
// taken for the connection it was sent on only: a task restarted in a container has the same
// CAF node id and actor ids as before (same host, pid 1), so its new handle compares equal to
// the old one, and a heartbeat to the old process timing out after the new one connected must
// not mark the new one lost.
struct Connected {
  caf::actor actor;
  bool remote = false;  // in another actor system: watched by heartbeats
  bool ping_in_flight = false;
  uint64_t generation = 0;
};

// A task that died or stopped answering.
struct Lost {
  Status reason;
  caf::actor frozen;  // the handle of a task that is connected but does not answer, else null
  bool ping_in_flight = false;
  uint64_t generation = 0;  // of the frozen connection
};

struct DirectoryState {
  DirectoryConfig config;
  std::map<TaskKey, Connected> tasks;
  std::map<caf::actor_addr, TaskKey> task_at;  // tasks, by their actor's address
  uint64_t next_generation = 1;
  std::map<TaskKey, Lost> lost;
  std::map<TaskKey, Resolving> resolving;
  std::map<std::string, std::pair<caf::actor, TaskKey>> devices;  // device -> actor, its task
  std::set<caf::actor> watchers;
  bool ticking = false;  // a heartbeat tick is scheduled
  static inline const char* name = "troupe.directory";
};

using Self = caf::stateful_actor<DirectoryState>;

std::string task_label(const TaskKey& key) {
  return DeviceName::task_name(key.first, key.second);
}

// Forgets task `key`'s connection (and its index entry, if the entry is this task's).
void erase_connected(DirectoryState& st, const TaskKey& key) {
  auto it = st.tasks.find(key);
  if (it == st.tasks.end()) return;
  if (auto at = st.task_at.find(it->second.actor.address());
      at != st.task_at.end() && at->second == key) {
    st.task_at.erase(at);
  }
  st.tasks.erase(it);
}

// Task `key` is connected as `task` (indexed by its actor, so that a down message finds it
// without a scan: a directory of a simulated cluster knows 100,000 tasks).
void set_connected(DirectoryState& st, const TaskKey& key, Connected task) {
  erase_connected(st, key);
  st.task_at[task.actor.address()] = key;
  st.tasks[key] = std::move(task);
}

// Where task `key` is, for messages: its address, or for a task of this task's in-process
// group (whose address may be only a name, or port 0) the group.
std::string task_address(Self* self, const TaskKey& key) {
  if (!self->state.config.in_process_group.empty()) return self->state.config.in_process_group;
  auto address = self->state.config.server_def.cluster.task_address(key.first, key.second);
  return address.ok() ? *address : std::string("?");
}

bool heartbeats_enabled(Self* self) {
  return self->state.config.peers.heartbeat_timeout.count() > 0;
}

// How long a connected task has to answer a control request (it answers at once if alive).
std::chrono::milliseconds answer_timeout(Self* self) {
  const PeerOptions& peers = self->state.config.peers;
  return heartbeats_enabled(self)
             ? std::max(peers.heartbeat_timeout, std::chrono::milliseconds(1000))
             : peers.connect_timeout;
}

void schedule_tick(Self* self) {
  if (self->state.ticking || !heartbeats_enabled(self)) return;
  self->state.ticking = true;
  self->delayed_send(self, self->state.config.peers.heartbeat_interval, heartbeat_tick_atom::value);
}

// Forgets task `key` as connected, remembers why it is lost and tells the watchers; logs one
// line unless the task stopped cleanly.
void mark_lost(Self* self, const TaskKey& key, Status reason, caf::actor frozen, bool log = true) {
  auto& st = self->state;
  uint64_t generation = 0;
  if (auto it = st.tasks.find(key); it != st.tasks.end()) generation = it->second.generation;
  erase_connected(st, key);
  // Its devices, named "<task>/device:...", are one range of the map.
  const std::string prefix = task_label(key) + "/";
  for (auto it = st.devices.lower_bound(prefix);
       it != st.devices.end() && it->first.starts_with(prefix);) {
    it = st.devices.erase(it);
  }
  if (log) log_warning("{}", reason.to_string());
  for (const caf::actor& watcher : st.watchers) {
    self->send(watcher, task_lost_atom::value, key.first, static_cast<int32_t>(key.second),
               to_caf_error(reason));
  }
  st.lost[key] = Lost{std::move(reason), std::move(frozen), false, generation};
  if (st.lost[key].frozen != nullptr) schedule_tick(self);
}

void finish_resolve(Self* self, const TaskKey& key, const Status& status, const caf::actor& task,
                    bool monitored = false) {
  auto it = self->state.resolving.find(key);
  if (it == self->state.resolving.end()) return;
  auto waiters = std::move(it->second.waiters);
  self->state.resolving.erase(it);
  if (status.ok()) {
    bool remote = task.node() != self->node();
    set_connected(self->state, key, Connected{task, remote, false, self->state.next_generation++});
    if (self->state.lost.erase(key) > 0) {
      log_info("{} at {} is back", task_label(key), task_address(self, key));
    }
    if (!monitored) self->monitor(task);
    if (remote) schedule_tick(self);
  }
  for (auto& waiter : waiters)
    waiter(status, task);
}

// Asks task `key` (connected, or lost but still connected) whether it is alive, on its
// connection of `generation`.
void ping(Self* self, const TaskKey& key, const caf::actor& task, uint64_t generation) {
  self->request(task, self->state.config.peers.heartbeat_timeout, heartbeat_atom::value)
      .then(
          [=] {
            auto& st = self->state;
            if (auto it = st.tasks.find(key);
                it != st.tasks.end() && it->second.generation == generation) {
              it->second.ping_in_flight = false;
            } else if (auto lost = st.lost.find(key); lost != st.lost.end() &&
                                                      lost->second.frozen != nullptr &&
                                                      lost->second.generation == generation) {
              // It answers again: connected as before.
              st.lost.erase(lost);
              set_connected(st, key, Connected{task, true, false, generation});
              log_info("{} at {} answers again", task_label(key), task_address(self, key));
            }
          },
          [=](caf::error& err) {
            auto& st = self->state;
            if (auto it = st.tasks.find(key);
                it != st.tasks.end() && it->second.generation == generation) {
              bool timeout = err == caf::sec::request_timeout;
              Status reason =
                  timeout
                      ? errors::Unavailable(
                            "{} at {} is lost: it did not answer a heartbeat within {} ms",
                            task_label(key), task_address(self, key),
                            st.config.peers.heartbeat_timeout.count())
                      : errors::Unavailable("{} at {} is lost: {}", task_label(key),
                                            task_address(self, key), self->system().render(err));
              mark_lost(self, key, std::move(reason), timeout ? task : caf::actor());
            } else if (auto lost = st.lost.find(key); lost != st.lost.end() &&
                                                      lost->second.frozen != nullptr &&
                                                      lost->second.generation == generation) {
              lost->second.ping_in_flight = false;
            }
          });
}

void heartbeat_tick(Self* self) {
  auto& st = self->state;
  st.ticking = false;
  bool watching = false;
  for (auto& [key, task] : st.tasks) {
    if (!task.remote) continue;
    watching = true;
    if (task.ping_in_flight) continue;
    task.ping_in_flight = true;
    ping(self, key, task.actor, task.generation);
  }
  for (auto& [key, lost] : st.lost) {
    if (lost.frozen == nullptr) continue;
    watching = true;
    if (lost.ping_in_flight) continue;
    lost.ping_in_flight = true;
    ping(self, key, lost.frozen, lost.generation);
  }
  if (watching) schedule_tick(self);
}

void settle(Self* self, const TaskKey& key, const caf::actor& task);
void settle_failed(Self* self, const TaskKey& key, const caf::error& err);
void retry_or_give_up(Self* self, const TaskKey& key, const std::string& why);
void probe_failed_handshake(Self* self, const TaskKey& key, const std::string& error);

// One connection attempt to the task's address; a failure is retried with back-off until
// the deadline.
void connect(Self* self, const TaskKey& key) {
  Resolving& r = self->state.resolving.at(key);
  // A task of this task's in-process group is reached through the process's registry only, not
  // its address: until its deadline it is looked for there again (it may still be starting).
  if (const std::string& group = self->state.config.in_process_group; !group.empty()) {
    if (auto local = find_local_task(in_process_task_name(group, key.first, key.second));
        local && local->task && &local->task->home_system() == &self->system()) {
      return finish_resolve(self, key, Status::OK(), local->task);
    }
    return retry_or_give_up(self, key, "it is not running in this process");
  }
  auto host_port = parse_host_port(r.address);
  if (!host_port.ok()) {
    finish_resolve(self, key, host_port.status().with_context(task_label(key)), caf::actor());
    return;
  }
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(r.deadline - self->clock().now());
  self->request(connection_manager(self->system()), std::max(left, std::chrono::milliseconds(1)),
                caf::connect_atom::value, host_port->first,
                static_cast<uint16_t>(host_port->second))
      .then(
          [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
            if (ptr == nullptr) {
              finish_resolve(
                  self, key,
                  errors::Unavailable("{} at {}: no task is published there", task_label(key),
                                      self->state.resolving.at(key).address),
                  caf::actor());
              return;
            }
            settle(self, key, caf::actor_cast<caf::actor>(ptr));
          },
          [=](caf::error& err) {
            if (self->state.resolving.count(key) == 0) return;
            if (err == caf::sec::disconnect_during_handshake) {
              probe_failed_handshake(self, key, self->system().render(err));
              return;
            }
            retry_or_give_up(self, key, self->system().render(err));
          });
}

// Connects again after the back-off, or, past the deadline (or for a lost task), gives up
// with `why`.
void retry_or_give_up(Self* self, const TaskKey& key, const std::string& why) {
  Resolving& again = self->state.resolving.at(key);
  if (!again.retry || self->clock().now() + again.backoff >= again.deadline) {
    Status unreachable =
        errors::Unavailable("{} at {} is unreachable: {}", task_label(key), again.address, why);
    // Never reached (or lost and still away): the next lookups try once each instead of
    // waiting out the connect timeout again.
    auto& lost = self->state.lost[key];
    if (lost.frozen == nullptr) lost.reason = unreachable;
    finish_resolve(self, key, unreachable, caf::actor());
    return;
  }
  self->delayed_send(self, again.backoff, retry_connect_atom::value, key.first,
                     static_cast<int32_t>(key.second));
  again.backoff = std::min(again.backoff * 2, std::chrono::milliseconds(2000));
}

// The task closed a connection during its handshake. A credentials or protocol mismatch
// fails at once (trying again changes nothing); a task too busy to finish the handshake (its
// admission caps were full: actors/transport/accept_gate.hpp) is tried again. A probe on a
// thread of its own tells them apart (actors/transport/handshake_probe.hpp).
void probe_failed_handshake(Self* self, const TaskKey& key, const std::string& error) {
  auto host_port = parse_host_port(self->state.resolving.at(key).address);
  if (!host_port.ok()) return retry_or_give_up(self, key, error);
  TlsOptions tls = tls_options_of(self->system());
  auto prober =
      self->system().spawn<caf::detached>([tls](caf::event_based_actor* prober) -> caf::behavior {
        return {[=](const std::string& host, uint16_t port) -> std::tuple<bool, std::string> {
          HandshakeProbe probe = probe_handshake(tls, host, port, kProbeTimeout);
          prober->quit();
          return {probe.retry_may_help(), probe.explanation()};
        }};
      });
  self->request(prober, kProbeTimeout + std::chrono::seconds(5), host_port->first,
                static_cast<uint16_t>(host_port->second))
      .then(
          [=](bool retry, const std::string& explanation) {
            auto it = self->state.resolving.find(key);
            if (it == self->state.resolving.end()) return;
            if (retry) return retry_or_give_up(self, key, error + " (" + explanation + ")");
            finish_resolve(
                self, key,
                errors::Unavailable("{} at {} refused the connection during the handshake: {} ({}; "
                                    "docs/security.md)",
                                    task_label(key), it->second.address, error, explanation),
                caf::actor());
          },
          [=](caf::error& err) {
            if (self->state.resolving.count(key) != 0) {
              retry_or_give_up(self, key, error + " (" + self->system().render(err) + ")");
            }
          });
}

// CAF 0.17 loses both connections when two tasks connect to each other at the same time:
// each takes the other's handshake on the connection it accepted first, closes the one it
// opened as redundant, and so closes the only connection the other kept; every proxy of each
// task dies on the other side (remote_link_unreachable) right after the connect succeeded.
// So a task reached over the network is handed out only once it has answered a heartbeat on
// the connection, which comes after that closing if it happens. When it does, the task that
// sorts first in the cluster connects again at once and the other after a pause, so that the
// second try does not cross again.
void settle(Self* self, const TaskKey& key, const caf::actor& task) {
  auto& st = self->state;
  Resolving& r = st.resolving.at(key);
  if (task.node() == self->node()) return finish_resolve(self, key, Status::OK(), task);
  r.settling = task;
  uint64_t attempt = ++r.settle_attempt;
  self->monitor(task);
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(r.deadline - self->clock().now());
  auto timeout = std::max(std::min(left, answer_timeout(self)), std::chrono::milliseconds(1));
  // The answer (or error) of an earlier attempt's heartbeat is for a handle that compares equal
  // to this one (same node and actor id), so attempts are told apart by number.
  auto current = [=]() -> Resolving* {
    auto it = self->state.resolving.find(key);
    if (it == self->state.resolving.end() || it->second.settling == nullptr ||
        it->second.settle_attempt != attempt) {
      return nullptr;
    }
    return &it->second;
  };
  self->request(task, timeout, heartbeat_atom::value)
      .then(
          [=] {
            if (Resolving* now = current()) {
              now->settling = nullptr;
              finish_resolve(self, key, Status::OK(), task, /*monitored=*/true);
            }
          },
          [=](caf::error& err) {
            if (current() != nullptr) settle_failed(self, key, err);
          });
}

// Task `key`, being settled, closed its connection or did not answer its first heartbeat.
// Only a connection closed as it was made (remote_link_unreachable) is tried again.
void settle_failed(Self* self, const TaskKey& key, const caf::error& err) {
  auto& st = self->state;
  Resolving& r = st.resolving.at(key);
  caf::actor task = std::exchange(r.settling, nullptr);
  self->demonitor(task);
  const ServerDef& def = st.config.server_def;
  bool sorts_first = TaskKey{def.job_name, def.task_index} < key;
  // 100 ms after the first close, doubling up to 2 s; none the first time for the task that
  // sorts first.
  auto backoff = std::chrono::milliseconds(100 << std::min<uint64_t>(r.settle_attempt - 1, 5));
  auto pause = sorts_first && r.settle_attempt == 1
                   ? std::chrono::milliseconds(0)
                   : std::min(backoff, std::chrono::milliseconds(2000));
  bool crossed = err == caf::exit_reason::remote_link_unreachable || connection_closed(task);
  if (!crossed || self->clock().now() + pause >= r.deadline) {
    Status why;
    if (err == caf::sec::request_timeout) {
      why = errors::Unavailable("{} at {} was connected but did not answer a heartbeat in time",
                                task_label(key), r.address);
    } else if (err == caf::exit_reason::user_shutdown) {
      why = errors::Unavailable("{} at {} stopped", task_label(key), r.address);
    } else {
      why = errors::Unavailable("{} at {} is lost: its connection closed ({})", task_label(key),
                                r.address, self->system().render(err));
    }
    // As for a task never reached: the next lookups try once each.
    auto& lost = st.lost[key];
    if (lost.frozen == nullptr) lost.reason = why;
    finish_resolve(self, key, why, caf::actor());
    return;
  }
  log_debug("{} at {}: the connection closed as it was made ({}); connecting again in {} ms",
            task_label(key), r.address, self->system().render(err), pause.count());
  self->delayed_send(self, pause, retry_connect_atom::value, key.first,
                     static_cast<int32_t>(key.second));
}

void resolve_task(Self* self, const TaskKey& key, TaskCallback done) {
  auto& st = self->state;
  if (auto it = st.tasks.find(key); it != st.tasks.end()) {
    return done(Status::OK(), it->second.actor);
  }
  const ServerDef& def = st.config.server_def;
  if (key.first == def.job_name && key.second == def.task_index) {
    return done(Status::OK(), st.config.self_task);
  }
  auto address = def.cluster.task_address(key.first, key.second);
  if (!address.ok()) return done(address.status(), caf::actor());
  if (auto it = st.resolving.find(key); it != st.resolving.end()) {
    it->second.waiters.push_back(std::move(done));
    return;
  }
  auto lost = st.lost.find(key);
  // A frozen task fails fast until a heartbeat finds it again.
  if (lost != st.lost.end() && lost->second.frozen != nullptr) {
    return done(lost->second.reason, caf::actor());
  }
  Resolving& r = st.resolving[key];
  r.waiters.push_back(std::move(done));
  r.address = *address;
  r.deadline = self->clock().now() + st.config.peers.connect_timeout;
  if (lost != st.lost.end()) {
    // A task that died gets one attempt per lookup (it may have been restarted).
    r.retry = false;
    r.deadline = self->clock().now() + answer_timeout(self);
  }
  // A server of this process and this actor system needs no network. (A task of this task's
  // in-process group is looked up by name, in connect().)
  if (auto local = st.config.in_process_group.empty() ? find_local_task(*address) : std::nullopt;
      local && local->task && &local->task->home_system() == &self->system()) {
    finish_resolve(self, key, Status::OK(), local->task);
    return;
  }
  connect(self, key);
}

// The devices of one task.
void task_devices(Self* self, const TaskKey& key,
                  std::function<void(const Status&, std::vector<DeviceInfo>)> done) {
  resolve_task(self, key, [=](const Status& status, const caf::actor& task) {
    if (!status.ok()) return done(status, {});
    self->request(task, answer_timeout(self), get_devices_atom::value)
        .then(
            [=](std::vector<DeviceInfo>& devices) {
              for (const DeviceInfo& d : devices)
                self->state.devices[d.name] = {d.actor, key};
              done(Status::OK(), std::move(devices));
            },
            [=](caf::error& err) {
              done(from_caf_error(err, "listing the devices of " + task_label(key)), {});
            });
  });
}

// A listing of the devices of many tasks (list_devices_atom).
struct Listing {
  std::vector<TaskKey> keys;
  size_t next = 0;  // keys[next] is the next task to ask
  size_t in_flight = 0;
  size_t answered = 0;
  bool asking = false;  // in ask_tasks(), whose loop asks the next ones
  std::vector<DeviceName> filters;
  std::vector<DeviceInfo> devices;
  Status failed;
  caf::typed_response_promise<std::vector<DeviceInfo>> promise;
};

// At most this many tasks are asked at once, so that each request's deadline measures that
// task's answer, not its place in a queue of thousands (a cluster of 100,000 simulated tasks).
constexpr size_t kListingWindow = 4096;

void listing_answered(Self* self, const std::shared_ptr<Listing>& listing);

// Asks the tasks of `listing` for their devices, up to kListingWindow at once. A loop, not a
// recursion: a task that fails at once (a frozen one) answers inside task_devices().
void ask_tasks(Self* self, const std::shared_ptr<Listing>& listing) {
  if (listing->asking) return;
  listing->asking = true;
  while (listing->in_flight < kListingWindow && listing->next < listing->keys.size()) {
    ++listing->in_flight;
    task_devices(self, listing->keys[listing->next++],
                 [=](const Status& status, std::vector<DeviceInfo> devices) {
                   --listing->in_flight;
                   if (!status.ok() && listing->failed.ok()) listing->failed = status;
                   listing->devices.insert(listing->devices.end(), devices.begin(), devices.end());
                   ++listing->answered;
                   listing_answered(self, listing);
                 });
  }
  listing->asking = false;
}

// After each answer: asks the next task, or, when every task has answered, delivers the
// devices (or the first error).
void listing_answered(Self* self, const std::shared_ptr<Listing>& listing) {
  if (listing->answered < listing->keys.size()) return ask_tasks(self, listing);
  if (!listing->failed.ok()) {
    listing->promise.deliver(to_caf_error(listing->failed));
    return;
  }
  const std::vector<DeviceName>& filters = listing->filters;
  std::erase_if(listing->devices, [&](const DeviceInfo& d) {
    auto name = DeviceName::parse(d.name);
    return !name.ok() || (!filters.empty() &&
                          std::none_of(filters.begin(), filters.end(),
                                       [&](const DeviceName& f) { return f.matches(*name); }));
  });
  std::sort(listing->devices.begin(), listing->devices.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  listing->promise.deliver(std::move(listing->devices));
}

caf::behavior directory_behavior(Self* self, DirectoryConfig config) {
  self->state.config = std::move(config);
  self->set_down_handler([=](caf::down_msg& msg) {
    // A task that went away is lost (looked up again, once, on next use); a watcher that went
    // away is forgotten.
    auto& st = self->state;
    for (auto& [key, r] : st.resolving) {
      if (r.settling == nullptr || r.settling.address() != msg.source) continue;
      TaskKey settling = key;  // settle_failed may erase the entry
      settle_failed(self, settling, msg.reason);
      return;
    }
    if (auto at = st.task_at.find(msg.source); at != st.task_at.end()) {
      TaskKey gone = at->second;
      bool stopped = msg.reason == caf::exit_reason::user_shutdown;
      Status reason = stopped ? errors::Unavailable("{} at {} stopped", task_label(gone),
                                                    task_address(self, gone))
                              : errors::Unavailable("{} at {} is lost: its connection closed ({})",
                                                    task_label(gone), task_address(self, gone),
                                                    self->system().render(msg.reason));
      mark_lost(self, gone, std::move(reason), caf::actor(), /*log=*/!stopped);
      return;
    }
    for (auto& [key, lost] : st.lost) {
      if (lost.frozen != nullptr && lost.frozen.address() == msg.source) lost.frozen = nullptr;
    }
    std::erase_if(st.watchers, [&](const caf::actor& w) { return w.address() == msg.source; });
  });
  return {
      [=](pending_lookups_atom) {
        std::vector<std::string> pending;
        for (const auto& [key, r] : self->state.resolving) {
          pending.push_back(task_label(key) + " at " + r.address);
        }
        return pending;
      },
      [=](resolve_task_atom, const std::string& job, int32_t index) -> caf::result<caf::actor> {
        auto promise = self->make_response_promise<caf::actor>();
        resolve_task(self, {job, index}, [=](const Status& status, const caf::actor& task) mutable {
          if (status.ok()) {
            promise.deliver(task);
          } else {
            promise.deliver(to_caf_error(status));
          }
        });
        return promise;
      },
      [=](resolve_role_atom, const std::string& job, int32_t index) -> caf::result<caf::actor> {
        auto promise = self->make_response_promise<caf::actor>();
        resolve_task(self, {job, index}, [=](const Status& status, const caf::actor& task) mutable {
          if (!status.ok()) {
            promise.deliver(to_caf_error(status));
            return;
          }
          self->request(task, answer_timeout(self), get_role_atom::value)
              .then([=](caf::actor& role) mutable { promise.deliver(role); },
                    [=](caf::error& err) mutable {
                      promise.deliver(to_caf_error(
                          from_caf_error(err, "finding the role of " + task_label({job, index}))));
                    });
        });
        return promise;
      },
      [=](watch_tasks_atom) {
        auto watcher = caf::actor_cast<caf::actor>(self->current_sender());
        if (watcher != nullptr && self->state.watchers.insert(watcher).second) {
          self->monitor(watcher);
        }
      },
      [=](heartbeat_tick_atom) { heartbeat_tick(self); },
      [=](retry_connect_atom, const std::string& job, int32_t index) {
        auto it = self->state.resolving.find({job, index});
        if (it != self->state.resolving.end() && it->second.settling == nullptr) {
          connect(self, {job, index});
        }
      },
      [=](resolve_device_atom, const std::string& device) -> caf::result<caf::actor> {
        if (auto it = self->state.devices.find(device); it != self->state.devices.end()) {
          return it->second.first;
        }
        auto name = DeviceName::parse(device);
        if (!name.ok()) return to_caf_error(name.status());
        if (!name->job || !name->task) {
          return to_caf_error(
              errors::InvalidArgument("device '{}' does not name a job and task", device));
        }
        auto promise = self->make_response_promise<caf::actor>();
        task_devices(self, {*name->job, *name->task},
                     [=](const Status& status, const std::vector<DeviceInfo>&) mutable {
                       if (!status.ok()) {
                         promise.deliver(to_caf_error(status));
                         return;
                       }
                       auto it = self->state.devices.find(device);
                       if (it == self->state.devices.end()) {
                         promise.deliver(to_caf_error(errors::InvalidArgument(
                             "device '{}' does not exist on its task", device)));
                         return;
                       }
                       promise.deliver(it->second.first);
                     });
        return promise;
      },
      [=](list_devices_atom,
          const std::vector<std::string>& filter_names) -> caf::result<std::vector<DeviceInfo>> {
        const ClusterSpec& cluster = self->state.config.server_def.cluster;
        std::vector<DeviceName> filters;
        for (const std::string& name : filter_names) {
          auto filter = DeviceName::parse(name);
          if (!filter.ok()) return to_caf_error(filter.status().with_context("device_filters"));
          filters.push_back(*filter);
        }
        // A device is seen if it matches a filter (or there are none); a task is asked for its
        // devices only if it could have one.
        auto could_match = [&](const DeviceName& device) {
          return filters.empty() ||
                 std::any_of(filters.begin(), filters.end(),
                             [&](const DeviceName& f) { return f.is_compatible_with(device); });
        };
        std::vector<TaskKey> keys;
        for (const std::string& job : cluster.jobs()) {
          for (int index : cluster.task_indices(job).value()) {
            if (could_match(DeviceName{job, 0, index, std::nullopt, std::nullopt})) {
              keys.emplace_back(job, index);
            }
          }
        }
        if (keys.empty()) return std::vector<DeviceInfo>{};
        auto listing = std::make_shared<Listing>();
        listing->keys = std::move(keys);
        listing->filters = std::move(filters);
        listing->promise = self->make_response_promise<std::vector<DeviceInfo>>();
        ask_tasks(self, listing);
        return listing->promise;
      },
  };
}

}  // namespace

Status PeerOptions::validate() const {
  auto check = [](std::chrono::milliseconds value, const char* name) {
    if (value.count() < 0) {
      return errors::InvalidArgument("{} is {} ms: expected >= 0", name, value.count());
    }
    return Status::OK();
  };
  TROUPE_RETURN_IF_ERROR(check(connect_timeout, "connect_timeout"));
  TROUPE_RETURN_IF_ERROR(check(heartbeat_interval, "heartbeat_interval"));
  TROUPE_RETURN_IF_ERROR(check(heartbeat_timeout, "heartbeat_timeout"));
  if (heartbeat_timeout.count() > 0 && heartbeat_interval.count() == 0) {
    return errors::InvalidArgument(
        "heartbeat_interval is 0 ms but heartbeat_timeout is {} ms: heartbeats need an interval "
        "(or a timeout of 0 to turn them off)",
        heartbeat_timeout.count());
  }
  return Status::OK();
}

caf::actor spawn_directory(caf::local_actor* parent, DirectoryConfig config) {
  return parent->spawn<caf::linked>(directory_behavior, std::move(config));
}

}  // namespace troupe
