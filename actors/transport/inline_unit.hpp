// InlineUnit: lets a plain thread run, on itself, the actor it hands a message to.
//
// Enqueueing to an idle actor from a thread outside CAF's scheduler hands the actor to a
// scheduler worker, which must wake up first; a thread that is about to wait anyway (a channel
// thread going back to its socket, a client about to wait for its reply) can run the actor's
// turn itself and save that wake-up, often the largest cost of a small remote step on a loaded
// machine.
//
// Open a Scope on the thread and pass InlineUnit::of(system) to `enqueue`: if the message woke
// the actor, the actor runs here for up to kThroughput messages. An actor woken while one
// already runs here (unless a NestedScope allows one level more), one with more to do after
// its turn, and every actor woken through the unit on a thread without an open scope go to
// the scheduler as usual. (An actor keeps the unit
// as its context after its turn and may use it from anywhere until its next one: hence one
// unit per actor system that lives as long as the process, and the per-thread scope.)
#pragma once

#include <cstddef>

#include <caf/actor_system.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>

namespace troupe {

class InlineUnit final : public caf::execution_unit {
 public:
  static constexpr size_t kThroughput = 16;

  // While one lives, this thread runs the actors it wakes through the unit.
  class Scope {
   public:
    Scope();
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  // While one lives, an actor that runs inline on this thread may run the actor it wakes here
  // too, one level deeper: for a hand-off that only does bookkeeping, such as a device's answer
  // to the master session waiting for it, which would otherwise cost a scheduler wake-up.
  class NestedScope {
   public:
    NestedScope();
    ~NestedScope();
    NestedScope(const NestedScope&) = delete;
    NestedScope& operator=(const NestedScope&) = delete;
  };

  // The unit of `system`.
  static InlineUnit* of(caf::actor_system& system);

  // A custom caf::execution_unit, so that a thread about to wait anyway runs the actor it woke:
  // with calls, the remote step went from 6.1-6.4x to 2.5x the raw TCP round trip
  // (docs/PERFORMANCE.md). On a CAF upgrade, enqueueing with a null unit (CAF's scheduler)
  // replaces it, at one scheduler wake-up per hand-off.
  void exec_later(caf::resumable* job) override;

 private:
  explicit InlineUnit(caf::actor_system& system) : caf::execution_unit(&system) {}
};

}  // namespace troupe
