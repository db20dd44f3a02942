// DeterministicCluster: task actors on CAF's test coordinator, run in a seeded order on a
// virtual clock.
#include "troupe/actors/sim/deterministic_cluster.hpp"

#include <atomic>

#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/message_types.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/random_id.hpp"
#include "troupe/actors/task_actor.hpp"
#include "troupe/devices/cpu_pool.hpp"
#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {
namespace {

constexpr auto kStartTimeout = std::chrono::milliseconds(10000);

// What a message is, for the trace: its atom ("runpart", "regpart", ...), "answer" or "error"
// for a response, "exit" or "down" for those system messages, "timeout" for a request's
// timeout, "other" for anything else.
std::string describe(caf::mailbox_element& element) {
  const caf::type_erased_tuple& content = element.content();
  if (content.empty()) return element.mid.is_response() ? "answer" : "other";
  if (content.match_element<caf::exit_msg>(0)) return "exit";
  if (content.match_element<caf::down_msg>(0)) return "down";
  if (element.mid.is_response()) {
    if (!content.match_element<caf::error>(0)) return "answer";
    return content.get_as<caf::error>(0) == caf::sec::request_timeout ? "timeout" : "error";
  }
  if (content.match_element<caf::atom_value>(0))
    return caf::to_string(content.get_as<caf::atom_value>(0));
  return "other";
}

// Takes `element`, the next message of `actor`, out of its mailbox; null when it cannot be
// told apart there (a message CAF holds in a cache, of an actor that skipped it), and it stays.
caf::mailbox_element_ptr take_out(caf::abstract_actor& actor, caf::mailbox_element* element) {
  auto* scheduled = dynamic_cast<caf::scheduled_actor*>(&actor);
  if (scheduled == nullptr) return nullptr;
  auto& queues = scheduled->mailbox().queue().queues();
  auto from = [&](auto& queue) -> caf::mailbox_element_ptr {
    if (queue.peek() != element || !queue.cache().empty()) return nullptr;
    return queue.take_front();
  };
  if (auto taken = from(std::get<caf::scheduled_actor::urgent_queue_index>(queues))) return taken;
  return from(std::get<caf::scheduled_actor::normal_queue_index>(queues));
}

// describe() as a number: the atom's value, or a code for the others.
uint64_t what_of(caf::mailbox_element& element) {
  const caf::type_erased_tuple& content = element.content();
  if (!content.empty() && !element.mid.is_response() && content.match_element<caf::atom_value>(0)) {
    return static_cast<uint64_t>(content.get_as<caf::atom_value>(0));
  }
  std::string text = describe(element);
  return text.size() + (static_cast<uint64_t>(static_cast<unsigned char>(text[0])) << 8) +
         (static_cast<uint64_t>(static_cast<unsigned char>(text[1])) << 16);
}

}  // namespace

caf::actor_system_config& DeterministicCluster::configure(caf::actor_system_config& config) {
  config.set("scheduler.policy", caf::atom("testing"));
  config.set("logger.file-verbosity", caf::atom("quiet"));
  config.set("logger.console-verbosity", caf::atom("quiet"));
  add_troupe_types(config);
  return config;
}

DeterministicCluster::DeterministicCluster(DeterministicOptions options)
    : options_(std::move(options)),
      system_(configure(config_)),
      scheduler_(dynamic_cast<caf::scheduler::test_coordinator&>(system_.scheduler())),
      order_(options_.seed),
      started_(system_.clock().now()) {}

caf::detail::test_actor_clock& DeterministicCluster::clock() const {
  return scheduler_.clock();
}

StatusOr<std::unique_ptr<DeterministicCluster>> DeterministicCluster::start(
    const ClusterSpec& cluster, DeterministicOptions options) {
  if (cluster.empty()) return errors::InvalidArgument("the cluster has no jobs");
  std::map<std::pair<std::string, int>, int> faults;
  for (size_t i = 0; i < options.faults.size(); ++i) {
    const Fault& fault = options.faults[i];
    TROUPE_RETURN_IF_ERROR(fault.validate(cluster));
    if (!faults.emplace(std::make_pair(fault.job, fault.task), static_cast<int>(i)).second) {
      return errors::InvalidArgument("more than one fault for {}",
                                     DeviceName::task_name(fault.job, fault.task));
    }
  }
  // Every actor runs on this thread: the ids it draws follow from the seed (a stream apart
  // from the order's).
  seed_random_ids(options.seed * 0x9e3779b97f4a7c15ull + 1);
  std::unique_ptr<DeterministicCluster> sim(new DeterministicCluster(std::move(options)));
  sim->cluster_ = cluster;
  static std::atomic<uint64_t> next_group{1};
  sim->group_ = fmt::format("deterministic cluster {}", next_group++);
  // One compute thread, which the device actor running a kernel waits for.
  sim->cpu_pool_ = std::make_shared<const CpuPool>(1);
  // The actors the system runs before the first task (its client): not leaks.
  sim->baseline_actors_ = sim->system_.registry().running();
  for (const std::string& job : cluster.jobs()) {
    for (int index : cluster.task_indices(job).value())
      TROUPE_RETURN_IF_ERROR(sim->start_task(job, index));
  }
  return sim;
}

Status DeterministicCluster::start_task(const std::string& job, int index) {
  SessionConfig session_config;
  session_config.intra_op_threads = 1;
  TROUPE_ASSIGN_OR_RETURN(ServerDef def,
                          ServerDef::create(cluster_, job, index, "troupe", session_config));
  TaskActorConfig config{std::move(def), {}, nullptr, nullptr, cpu_pool_, group_};
  config.simulated = true;  // no GPUs, whatever the machine has; loops slice by count
  for (const Fault& fault : options_.faults) {
    if (fault.job == job && fault.task == index) {
      // Called from a device actor's turn: the exit is only sent, the freeze only noted.
      config.faults = std::make_shared<FaultInjector>(
          fault, [this, job, index] { (void)kill(job, index); },
          [this, job, index](FaultKind kind, std::chrono::milliseconds duration) {
            if (kind == FaultKind::kFreeze) (void)freeze(job, index, duration);
            if (kind == FaultKind::kPartition) (void)partition(job, index, duration);
          });
    }
  }
  caf::actor task = spawn_task_actor(system_, std::move(config));
  const std::string name = DeviceName::task_name(job, index);
  adopt(task, name + " task", job, index);
  tasks_[{job, index}] = task;
  if (!register_in_process_task(in_process_task_name(group_, job, index),
                                LocalTask{nullptr, task})) {
    return errors::Internal("{} is registered already", name);
  }
  TROUPE_ASSIGN_OR_RETURN(
      auto devices, ask<std::vector<DeviceInfo>>(task, kStartTimeout, get_devices_atom::value));
  for (const DeviceInfo& device : devices)
    adopt(device.actor, device.name, job, index);
  TROUPE_ASSIGN_OR_RETURN(auto directory,
                          ask<caf::actor>(task, kStartTimeout, get_directory_atom::value));
  adopt(directory, name + " directory", job, index);
  TROUPE_ASSIGN_OR_RETURN(auto master,
                          ask<caf::actor>(task, kStartTimeout, get_master_atom::value));
  adopt(master, name + " master", job, index);
  return Status::OK();
}

DeterministicCluster::~DeterministicCluster() {
  stop();
  unseed_random_ids();
  // Lets the system go without waiting for actors nothing will schedule any more.
  system_.await_actors_before_shutdown(false);
}

StatusOr<caf::actor> DeterministicCluster::task(const std::string& job, int index) const {
  auto it = tasks_.find({job, index});
  if (it == tasks_.end()) {
    return errors::InvalidArgument("the simulated cluster has no task {}; it has {}",
                                   DeviceName::task_name(job, index), cluster_.to_string());
  }
  if (it->second == nullptr) {
    return errors::Unavailable("task {} was killed", DeviceName::task_name(job, index));
  }
  return it->second;
}

void DeterministicCluster::label(const caf::actor& actor, std::string name) {
  if (actor != nullptr) labels_[actor->id()] = std::move(name);
}

void DeterministicCluster::adopt(const caf::actor& actor, std::string name, const std::string& job,
                                 int index) {
  if (actor == nullptr) return;
  label(actor, std::move(name));
  members_[actor->id()] = {job, index};
}

bool DeterministicCluster::frozen(caf::resumable* job) const {
  if (frozen_until_.empty()) return false;
  auto* actor = dynamic_cast<caf::abstract_actor*>(job);
  if (actor == nullptr) return false;
  auto member = members_.find(actor->id());
  if (member == members_.end()) return false;
  auto until = frozen_until_.find(member->second);
  return until != frozen_until_.end() && until->second > clock().now();
}

Status DeterministicCluster::freeze(const std::string& job, int index,
                                    std::chrono::milliseconds duration) {
  TROUPE_RETURN_IF_ERROR(this->task(job, index).status());
  auto& until = frozen_until_[{job, index}];
  until = std::max(until, clock().now() + duration);
  freezes_.push_back({{job, index}, now(), until - started_});
  record(fmt::format("t={} freeze {} for {} ms", now_us(), DeviceName::task_name(job, index),
                     duration.count()));
  return Status::OK();
}

Status DeterministicCluster::partition(const std::string& job, int index,
                                       std::chrono::milliseconds duration) {
  TROUPE_RETURN_IF_ERROR(this->task(job, index).status());
  auto& until = cut_until_[{job, index}];
  until = std::max(until, clock().now() + duration);
  record(fmt::format("t={} cut {} off for {} ms", now_us(), DeviceName::task_name(job, index),
                     duration.count()));
  return Status::OK();
}

bool DeterministicCluster::crosses_cut(const caf::mailbox_element& element,
                                       const caf::abstract_actor& receiver) const {
  if (cut_until_.empty() || !element.sender) return false;
  auto from = members_.find(element.sender->id());
  auto to = members_.find(receiver.id());
  if (from == members_.end() || to == members_.end() || from->second == to->second) return false;
  for (const TaskKey& side : {from->second, to->second}) {
    auto cut = cut_until_.find(side);
    if (cut != cut_until_.end() && cut->second > clock().now()) return true;
  }
  return false;
}

void DeterministicCluster::time_moved() {
  const auto now = clock().now();
  std::erase_if(frozen_until_, [&](const auto& entry) { return entry.second <= now; });
  std::erase_if(cut_until_, [&](const auto& entry) { return entry.second <= now; });
  // Held messages whose link healed go on, in the order they were held (so each sender's
  // messages to each receiver stay in order).
  std::vector<Held> still_held;
  for (Held& held : held_) {
    auto* receiver = caf::actor_cast<caf::abstract_actor*>(held.receiver);
    if (crosses_cut(*held.element, *receiver)) {
      still_held.push_back(std::move(held));
    } else {
      receiver->enqueue(std::move(held.element), nullptr);
    }
  }
  held_ = std::move(still_held);
}

bool DeterministicCluster::was_frozen(const std::string& job, int index,
                                      std::chrono::nanoseconds from,
                                      std::chrono::nanoseconds to) const {
  for (const Freeze& freeze : freezes_) {
    if (freeze.task == TaskKey{job, index} && freeze.from <= to && from <= freeze.until)
      return true;
  }
  return false;
}

StatusOr<caf::actor> DeterministicCluster::create_session(const std::string& job, int index,
                                                          std::optional<SessionConfig> config,
                                                          std::chrono::milliseconds timeout) {
  TROUPE_ASSIGN_OR_RETURN(caf::actor task, this->task(job, index));
  TROUPE_ASSIGN_OR_RETURN(caf::actor service,
                          ask<caf::actor>(task, timeout, get_master_atom::value));
  TROUPE_ASSIGN_OR_RETURN(
      caf::actor session,
      ask<caf::actor>(service, timeout, create_session_atom::value, config.has_value(),
                      config.value_or(SessionConfig{}), caf::actor()));
  adopt(session, fmt::format("{} session {}", DeviceName::task_name(job, index), session.id()), job,
        index);
  return session;
}

Status DeterministicCluster::extend(const caf::actor& session, const GraphDef& graph,
                                    std::chrono::milliseconds timeout) {
  return ask<caf::unit_t>(session, timeout, extend_graph_atom::value, graph).status();
}

StatusOr<std::vector<Tensor>> DeterministicCluster::run(
    const caf::actor& session, const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, std::chrono::milliseconds timeout) {
  RunStepRequest request;
  for (const auto& [name, value] : feeds) {
    request.signature.feeds.push_back(name);
    request.feeds.push_back(value);
  }
  request.signature.fetches = fetches;
  request.signature.targets = targets;
  request.options = options;
  TROUPE_ASSIGN_OR_RETURN(RunStepResponse response,
                          ask<RunStepResponse>(session, timeout, run_step_atom::value, request));
  return std::move(response.fetches);
}

std::string DeterministicCluster::name_of(caf::actor_id id) const {
  auto it = labels_.find(id);
  return it != labels_.end() ? it->second : "actor#" + std::to_string(id);
}

std::chrono::nanoseconds DeterministicCluster::now() const {
  return clock().now() - started_;
}

int64_t DeterministicCluster::now_us() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(now()).count();
}

void DeterministicCluster::hash_bytes(const void* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    hash_ ^= static_cast<const unsigned char*>(data)[i];
    hash_ *= 1099511628211ull;  // FNV-1a's prime
  }
}

void DeterministicCluster::hash_value(uint64_t value) {
  hash_bytes(&value, sizeof value);
}

void DeterministicCluster::record(const std::string& text) {
  ++messages_;
  hash_bytes(text.data(), text.size());
  if (options_.keep_trace) trace_.push_back(text);
}

void DeterministicCluster::record_hop(caf::abstract_actor& receiver,
                                      caf::mailbox_element& element) {
  ++messages_;
  hash_value(static_cast<uint64_t>(now().count()));
  hash_value(element.sender ? element.sender->id() : 0);
  hash_value(receiver.id());
  hash_value(what_of(element));
  if (options_.keep_trace) {
    trace_.push_back(fmt::format("t={} {} -> {}: {}", now_us(),
                                 element.sender ? name_of(element.sender->id()) : "anonymous",
                                 name_of(receiver.id()), describe(element)));
  }
}

std::optional<caf::actor_clock::time_point> DeterministicCluster::next_event() const {
  std::optional<caf::actor_clock::time_point> next;
  if (clock().has_pending_timeout()) next = clock().schedule().begin()->first;
  for (const auto* ends : {&frozen_until_, &cut_until_}) {
    for (const auto& [task, until] : *ends) {
      if (until > clock().now() && (!next || until < *next)) next = until;
    }
  }
  return next;
}

bool DeterministicCluster::step() {
  return advance(caf::actor_clock::time_point::max());
}

size_t DeterministicCluster::pick_runnable() {
  auto& jobs = scheduler_.jobs;
  if (jobs.empty()) return jobs.size();
  // A few draws among all waiting jobs, as most are not frozen; then one among the runnable.
  for (int draw = 0; draw < 8; ++draw) {
    size_t pick = static_cast<size_t>(order_() % jobs.size());
    if (!frozen(jobs[pick])) return pick;
  }
  std::vector<size_t> runnable;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!frozen(jobs[i])) runnable.push_back(i);
  }
  if (runnable.empty()) return jobs.size();
  return runnable[static_cast<size_t>(order_() % runnable.size())];
}

bool DeterministicCluster::advance(caf::actor_clock::time_point until, bool jump) {
  auto& jobs = scheduler_.jobs;
  auto& clock = this->clock();
  if (clock.now() > until) return false;
  // A timer that is due fires before the next message.
  if (clock.has_pending_timeout() && clock.schedule().begin()->first <= clock.now()) {
    clock.trigger_timeout();
    record(fmt::format("t={} timer", now_us()));
    time_moved();
    return true;
  }
  size_t pick = pick_runnable();
  if (pick == jobs.size()) {
    // Time passes: to the next timer, or to the end of a freeze or cut if that comes first.
    auto next = next_event();
    if (!jump || !next || *next > until) return false;
    if (!clock.has_pending_timeout() || *next < clock.schedule().begin()->first) {
      clock.current_time = *next;
      record(fmt::format("t={} a freeze or a cut ends", now_us()));
    } else {
      clock.trigger_timeout();
      record(fmt::format("t={} timer", now_us()));
    }
    time_moved();
    return true;
  }
  // The test coordinator runs the job in front: the one picked goes there (swapped, so that
  // picking costs the same with a million jobs waiting).
  std::swap(jobs[0], jobs[pick]);
  auto* actor = dynamic_cast<caf::abstract_actor*>(jobs.front());
  caf::mailbox_element* next = actor != nullptr ? actor->peek_at_next_mailbox_element() : nullptr;
  if (next != nullptr && crosses_cut(*next, *actor)) {
    if (caf::mailbox_element_ptr held = take_out(*actor, next)) {
      ++held_count_;
      record(fmt::format("t={} held: {} -> {}: {}", now_us(), name_of(next->sender->id()),
                         name_of(actor->id()), describe(*next)));
      held_.push_back({caf::strong_actor_ptr{actor->ctrl()}, std::move(held)});
      return true;
    }
  }
  if (next != nullptr) {
    record_hop(*actor, *next);
  } else {
    record("other job");
  }
  bool ran = scheduler_.try_run_once();
  clock.current_time += options_.message_time;
  if (!frozen_until_.empty() || !cut_until_.empty()) time_moved();
  return ran;
}

bool DeterministicCluster::run_until(const std::function<bool()>& done,
                                     std::chrono::nanoseconds limit) {
  const auto until = clock().now() + limit;
  while (!done()) {
    if (!advance(until)) return false;
  }
  return true;
}

void DeterministicCluster::run_ready() {
  while (advance(caf::actor_clock::time_point::max(), /*jump=*/false)) {
  }
}

Status DeterministicCluster::kill(const std::string& job, int index) {
  TROUPE_ASSIGN_OR_RETURN(caf::actor task, this->task(job, index));
  unregister_local_task(task);
  frozen_until_.erase({job, index});  // a frozen process dies at once too
  caf::anon_send_exit(task, caf::exit_reason::kill);
  tasks_[{job, index}] = caf::actor();
  return Status::OK();
}

size_t DeterministicCluster::stop() {
  if (!stopped_) {
    stopped_ = true;
    // A frozen or cut-off task must take its exit too.
    frozen_until_.clear();
    cut_until_.clear();
    time_moved();
    for (auto& [key, task] : tasks_) {
      if (task == nullptr) continue;
      unregister_local_task(task);
      caf::anon_send_exit(task, caf::exit_reason::user_shutdown);
      task = caf::actor();
    }
    for (const caf::actor& actor : owned_)
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    owned_.clear();
  }
  run_ready();
  return system_.registry().running() - baseline_actors_;
}

}  // namespace troupe
