// The master service actor of a task: the session target clients connect to. It creates one
// master session actor per client session.
//
// Protocol:
//   (create_session_atom, bool has_config, SessionConfig, caf::actor client)
//       -> caf::actor (the master session)
//       Without a config, the session uses the server's default. The session closes when
//       `client` (the client's session actor) is gone.
#pragma once

#include <caf/actor.hpp>

#include "troupe/actors/messages.hpp"
#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {

class DataPlane;

struct MasterServiceConfig {
  caf::actor directory;       // finds the cluster's devices
  DeviceName default_device;  // the task the service belongs to
  SessionConfig default_session_config;
  std::shared_ptr<DataPlane> plane;  // for the sessions' steps (MasterSessionConfig)
};

// Spawns the master service linked to `parent`.
caf::actor spawn_master_service(caf::local_actor* parent, MasterServiceConfig config);

}  // namespace troupe
