// The master session actor: one per client session. It holds the client's graph and, for each
// distinct run signature (feeds, fetches, targets), prepares the run once — prune, place,
// partition, register each partition with its device actor — then drives every step by
// sending run_partition to the device actors involved and gathering the fetches.
//
// Protocol:
//   (extend_graph_atom, GraphDef delta) -> caf::unit      adds nodes (all or nothing)
//   (run_step_atom, RunStepRequest)     -> RunStepResponse
//   (cancel_step_atom, int64_t tag)     -> int32_t        cancels the steps run with
//                                                           RunOptions::step_tag == tag; how many
//   (close_session_atom)                -> caf::unit      cancels running steps, frees state
//   (heartbeat_atom)                    -> caf::unit      liveness probe of remote clients
// Errors are troupe errors: InvalidArgument for a bad graph, feed or device; NotFound for an
// unknown feed or fetch; DeadlineExceeded when a step outlives its timeout; Cancelled when the
// session closes under a step; Unavailable when a device actor is gone or its task is lost
// (the directory's failure detection: the step fails at once, naming the task).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>

#include "troupe/actors/messages.hpp"
#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/cluster/server_def.hpp"

namespace troupe {

class DataPlane;

struct MasterSessionConfig {
  int64_t session_id = 0;
  SessionConfig config;
  caf::actor directory;       // lists the devices the session may place nodes on
  DeviceName default_device;  // where nodes without a device request go
  // The client's session actor (actors/session.cpp), monitored: when it is gone — closed, or
  // its process died — the session closes and its steps are cancelled. None when null.
  caf::actor client;
  // The process's data plane, if any: a step's run_partition requests to devices of other
  // processes go to the runner it gives for each (actors/transport/data_plane.hpp).
  std::shared_ptr<DataPlane> plane;
};

// Spawns a master session linked to `parent` (it stops when the parent does).
caf::actor spawn_master_session(caf::local_actor* parent, MasterSessionConfig config);

}  // namespace troupe
