// The inline execution unit: one actor turn on the calling thread, everything else scheduled.
#include "troupe/actors/transport/inline_unit.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include <caf/scheduler/abstract_coordinator.hpp>

namespace troupe {
namespace {

thread_local int open_scopes = 0;
thread_local int nested_allowed = 0;  // open NestedScopes
thread_local int running = 0;         // actors running inline on this thread, nested

}  // namespace

InlineUnit::Scope::Scope() {
  ++open_scopes;
}

InlineUnit::Scope::~Scope() {
  --open_scopes;
}

InlineUnit::NestedScope::NestedScope() {
  ++nested_allowed;
}

InlineUnit::NestedScope::~NestedScope() {
  --nested_allowed;
}

InlineUnit* InlineUnit::of(caf::actor_system& system) {
  // Never freed: actors may hold a unit as their context for as long as they live. A system
  // made later at the same address reuses the unit, which is then its own.
  static std::mutex mutex;
  static auto* units = new std::map<caf::actor_system*, std::unique_ptr<InlineUnit>>();
  std::lock_guard lock(mutex);
  auto& unit = (*units)[&system];
  if (unit == nullptr) unit.reset(new InlineUnit(system));
  return unit.get();
}

void InlineUnit::exec_later(caf::resumable* job) {
  // The reference the enqueue took for the job is the scheduler's, or released here.
  if (open_scopes == 0 || running > std::min(nested_allowed, 1)) {
    system().scheduler().enqueue(job);
    return;
  }
  ++running;
  caf::resumable::resume_result result = job->resume(this, kThroughput);
  --running;
  if (result == caf::resumable::resume_later) {
    system().scheduler().enqueue(job);
  } else {
    caf::intrusive_ptr_release(job);
  }
}

}  // namespace troupe
