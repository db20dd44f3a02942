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
      client_(system_, /*hide=*/true),
      order_(options_.seed),
      started_(system_.clock().now()) {
  label(caf::actor_cast<caf::actor>(client_), "client");
}

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
  // Every actor runs on this thread: the ids it draws follow from the seed.
  seed_random_ids(options.seed);
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
  for (const Fault& fault : options_.faults) {
    if (fault.job == job && fault.task == index) {
      // Called from a device actor's turn: the exit is only sent, the freeze only noted.
      config.faults = std::make_shared<FaultInjector>(
          fault, [this, job, index] { (void)kill(job, index); },
          [this, job, index](std::chrono::milliseconds duration) {
            (void)freeze(job, index, duration);
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
  record(fmt::format("t={} freeze {} for {} ms",
                     std::chrono::duration_cast<std::chrono::microseconds>(now()).count(),
                     DeviceName::task_name(job, index), duration.count()));
  return Status::OK();
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

void DeterministicCluster::hash_bytes(const void* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    hash_ ^= static_cast<const unsigned char*>(data)[i];
    hash_ *= 1099511628211ull;  // FNV-1a's prime
  }
}

void DeterministicCluster::hash_value(uint64_t value) {
  hash_bytes(&value, sizeof value);
}

void DeterministicCluster::record(const std::string& hop) {
  ++messages_;
  hash_bytes(hop.data(), hop.size());
  if (options_.keep_trace) trace_.push_back(hop);
}

std::optional<caf::actor_clock::time_point> DeterministicCluster::next_event() const {
  std::optional<caf::actor_clock::time_point> next;
  if (clock().has_pending_timeout()) next = clock().schedule().begin()->first;
  for (const auto& [task, until] : frozen_until_) {
    if (until > clock().now() && (!next || until < *next)) next = until;
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

bool DeterministicCluster::advance(caf::actor_clock::time_point until) {
  auto& jobs = scheduler_.jobs;
  size_t pick = pick_runnable();
  if (pick == jobs.size()) {
    // Time passes: to the next timer, or to the end of a freeze if that comes first.
    auto next = next_event();
    if (!next || *next > until) return false;
    auto& clock = this->clock();
    if (!clock.has_pending_timeout() || *next < clock.schedule().begin()->first) {
      clock.current_time = *next;
      std::erase_if(frozen_until_, [&](const auto& entry) { return entry.second <= *next; });
      record(fmt::format("t={} thaw",
                         std::chrono::duration_cast<std::chrono::microseconds>(now()).count()));
      return true;
    }
    clock.trigger_timeout();
    record(fmt::format("t={} timer",
                       std::chrono::duration_cast<std::chrono::microseconds>(now()).count()));
    return true;
  }
  // The test coordinator runs the job in front: the one picked goes there (swapped, so that
  // picking costs the same with a million jobs waiting).
  std::swap(jobs[0], jobs[pick]);
  auto* actor = dynamic_cast<caf::abstract_actor*>(jobs.front());
  caf::mailbox_element* next = actor != nullptr ? actor->peek_at_next_mailbox_element() : nullptr;
  if (next == nullptr) {
    record("other job");
  } else if (options_.keep_trace) {
    record(fmt::format("t={} {} -> {}: {}",
                       std::chrono::duration_cast<std::chrono::microseconds>(now()).count(),
                       next->sender ? name_of(next->sender->id()) : "anonymous",
                       name_of(actor->id()), describe(*next)));
  } else {
    // The same hop, hashed without being written out (a simulation of 100,000 tasks takes
    // millions): the time, the actors' ids (given in spawn order, so the same in every run of
    // a seed), and what the message is.
    ++messages_;
    hash_value(static_cast<uint64_t>(now().count()));
    hash_value(next->sender ? next->sender->id() : 0);
    hash_value(actor->id());
    hash_value(what_of(*next));
  }
  return scheduler_.try_run_once();
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
  run_until([] { return false; }, std::chrono::nanoseconds(0));
}

Status DeterministicCluster::kill(const std::string& job, int index) {
  TROUPE_ASSIGN_OR_RETURN(caf::actor task, this->task(job, index));
  unregister_local_task(task);
  caf::anon_send_exit(task, caf::exit_reason::kill);
  tasks_[{job, index}] = caf::actor();
  return Status::OK();
}

size_t DeterministicCluster::stop() {
  if (!stopped_) {
    stopped_ = true;
    frozen_until_.clear();  // a frozen task must take its exit too
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
