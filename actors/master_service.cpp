// The master service actor: session creation.
#include "troupe/actors/master_service.hpp"

#include <caf/all.hpp>

#include "troupe/actors/atoms.hpp"
#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/master_session.hpp"
#include "troupe/actors/random_id.hpp"

namespace troupe {
namespace {

struct MasterServiceState {
  MasterServiceConfig config;
  static inline const char* name = "troupe.master_service";
};

caf::behavior master_service_behavior(caf::stateful_actor<MasterServiceState>* self,
                                      MasterServiceConfig config) {
  self->state.config = std::move(config);
  return {
      [=](create_session_atom, bool has_config, const SessionConfig& session_config,
          const caf::actor& client) -> caf::result<caf::actor> {
        auto& st = self->state;
        if (has_config) {
          Status valid = session_config.validate();
          if (!valid.ok()) return to_caf_error(valid.with_context("SessionConfig"));
        }
        MasterSessionConfig session;
        // Random ids keep step ids of concurrent sessions apart across the cluster.
        session.session_id = random_id();
        session.config = has_config ? session_config : st.config.default_session_config;
        session.directory = st.config.directory;
        session.default_device = st.config.default_device;
        session.client = client;
        session.plane = st.config.plane;
        return spawn_master_session(self, std::move(session));
      },
      [=](heartbeat_atom) { return caf::unit; },
  };
}

}  // namespace

caf::actor spawn_master_service(caf::local_actor* parent, MasterServiceConfig config) {
  return parent->spawn<caf::linked>(master_service_behavior, std::move(config));
}

}  // namespace troupe
