// A training job run in a DeterministicCluster under seeded faults, with the invariants every
// run must keep: what `troupe sim --deterministic` runs and the property test checks over
// thousands of seeds. Part of the simulation library (actors/sim/).
//
// The job: linear regression (y = 3x + 2) by asynchronous SGD, between-graph replicated as TF 1.x
// programs do it. Its variables w, b and global_step live on the ps tasks; each worker has a
// client (an actor of the simulation, so its timing is simulated as well) with a session on its
// own task, which extends the graph, then runs `steps` steps, each reading w and b from the ps,
// computing the gradient on the worker, and applying it and global_step += 1 on the ps, under a
// RunOptions timeout of `step_timeout` (virtual time). The chief (worker 0) initializes the
// variables first. A step that fails is counted and the client goes on with the next one; a
// client whose own task dies stops, as its process would.
//
// Invariants (report.violations lists each one broken, naming the worker and step):
// - every step ends within its deadline (the client's own timer, step_timeout plus a grace,
//   never fires, unless the worker's process itself was frozen when it came due: then the
//   step failed with DeadlineExceeded on the client's side, as a TF client's call would) with
//   OK or a typed error (Cancelled, DeadlineExceeded, FailedPrecondition, Aborted or
//   Unavailable); a step in flight when its worker dies counts as failed (Unavailable);
// - no step is applied twice: the global steps OK steps read after their increment are
//   distinct, and increase along each worker's steps (global step monotone);
// - no OK step is lost: with the ps alive at the end, OK steps <= global_step <= OK + failed
//   steps (a failed step may have been applied before it failed);
// - every client finishes, and stopping the cluster leaves no actor running;
// - without faults, the model converges (|w - 3| and |b - 2| < 0.05).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "troupe/actors/sim/fault_injector.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

struct SimulatedTrainingOptions {
  int num_ps = 1;       // >= 1
  int num_workers = 4;  // >= 1
  int steps = 100;      // per worker, >= 1
  uint64_t seed = 1;    // the order of messages, the random ids and the faults
  int faults = 0;  // tasks a fault drawn from the seed hits (any kind), 0..num_ps + num_workers
  std::chrono::milliseconds step_timeout{1000};  // of virtual time, > 0
  bool keep_trace = false;                       // report.trace gets every hop

  // InvalidArgument naming the field out of range.
  Status validate() const;
  // The `troupe sim --deterministic` command line that runs these options again.
  std::string replay_command() const;
};

struct SimulatedStep {
  int worker = 0;
  int index = 0;                         // of the worker's steps
  int64_t started_us = 0, ended_us = 0;  // virtual time
  Status status;
  int64_t global_step = -1;  // read after its increment, for an OK step
  float loss = 0;
};

struct SimulatedTrainingReport {
  std::vector<Fault> faults;
  std::vector<SimulatedStep> steps;  // in the order they ended
  int64_t ok_steps = 0, failed_steps = 0;
  std::optional<int64_t> global_step;  // at the end; none when a ps task holding it is gone
  std::optional<float> w, b;
  uint64_t messages = 0;
  uint64_t trace_hash = 0;
  std::chrono::nanoseconds virtual_time{0};
  size_t leaked_actors = 0;
  std::vector<std::string> violations;
  std::vector<std::string> trace;  // with keep_trace

  bool ok() const { return violations.empty(); }
  // A few lines: faults, steps by outcome, global step, model, time, messages, trace hash.
  std::string summary() const;
};

// Counts report.steps by outcome (ok_steps, failed_steps) and adds to report.violations every
// invariant on the steps, the global step and the model that they break (the clients'
// finishing and the leaks are run_simulated_training's to check).
void check_invariants(const SimulatedTrainingOptions& options, SimulatedTrainingReport& report);

// Runs the job; errors only for invalid options or a cluster that cannot start (each an
// InvalidArgument or the start's error). A broken invariant is a violation in the report.
StatusOr<SimulatedTrainingReport> run_simulated_training(const SimulatedTrainingOptions& options);

}  // namespace troupe
