// The atoms that name troupe's actor messages (at most 10 characters each, see CAF).
// Protocols: actors/device_actor.hpp, actors/master_session.hpp, actors/master_service.hpp,
// actors/task_actor.hpp.
#pragma once

#include <caf/atom.hpp>

namespace troupe {

// Task actor (the server).
using get_devices_atom = caf::atom_constant<caf::atom("devices")>;
using get_master_atom = caf::atom_constant<caf::atom("master")>;
using get_directory_atom = caf::atom_constant<caf::atom("directory")>;
using get_role_atom = caf::atom_constant<caf::atom("role")>;
// Directory.
using resolve_task_atom = caf::atom_constant<caf::atom("resolvetsk")>;
using resolve_device_atom = caf::atom_constant<caf::atom("resolvedev")>;
using list_devices_atom = caf::atom_constant<caf::atom("listdevs")>;
using resolve_role_atom = caf::atom_constant<caf::atom("resolverol")>;
using retry_connect_atom = caf::atom_constant<caf::atom("retryconn")>;
using watch_tasks_atom = caf::atom_constant<caf::atom("watchtasks")>;
using task_lost_atom = caf::atom_constant<caf::atom("tasklost")>;
using heartbeat_tick_atom = caf::atom_constant<caf::atom("hbtick")>;
// Answered (with an empty reply) by task actors, master services and master sessions: the
// liveness probe of peers and remote clients.
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
// Master service.
using create_session_atom = caf::atom_constant<caf::atom("newsession")>;
// Master session.
using extend_graph_atom = caf::atom_constant<caf::atom("extend")>;
using run_step_atom = caf::atom_constant<caf::atom("runstep")>;
using close_session_atom = caf::atom_constant<caf::atom("closesess")>;
using cancel_step_atom = caf::atom_constant<caf::atom("cancelstep")>;
// Device actor.
using register_partition_atom = caf::atom_constant<caf::atom("regpart")>;
using run_partition_atom = caf::atom_constant<caf::atom("runpart")>;
using deregister_partition_atom = caf::atom_constant<caf::atom("deregpart")>;
using clear_container_atom = caf::atom_constant<caf::atom("clearcont")>;
using recv_tensor_atom = caf::atom_constant<caf::atom("recvtensor")>;
using channel_endpoint_atom = caf::atom_constant<caf::atom("tchannel")>;
using abort_step_atom = caf::atom_constant<caf::atom("abortstep")>;
// A step's deadline has come (a master session to itself).
using step_deadline_atom = caf::atom_constant<caf::atom("stepdeadl")>;
// The tasks a directory is still trying to reach.
using pending_lookups_atom = caf::atom_constant<caf::atom("lookingup")>;
// Scheduled work of an actor (sent to itself).
using run_work_atom = caf::atom_constant<caf::atom("runwork")>;
// A device actor's small tensors for other processes, held back while it ran its work, go out.
using flush_sends_atom = caf::atom_constant<caf::atom("flushsend")>;
// A partition run held back by a simulated delay may start (a device actor to itself).
using delayed_run_atom = caf::atom_constant<caf::atom("delayrun")>;

}  // namespace troupe
