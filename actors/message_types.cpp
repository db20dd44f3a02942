// Registration of troupe's message types and error category.
#include "troupe/actors/message_types.hpp"

#include <caf/actor_system_config.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/messages.hpp"

namespace troupe {

void add_troupe_types(caf::actor_system_config& config) {
  config.add_message_type<Tensor>("troupe.Tensor");
  config.add_message_type<GraphDef>("troupe.GraphDef");
  config.add_message_type<SessionConfig>("troupe.SessionConfig");
  config.add_message_type<RunStepRequest>("troupe.RunStepRequest");
  config.add_message_type<RunStepResponse>("troupe.RunStepResponse");
  config.add_message_type<PartitionSpec>("troupe.PartitionSpec");
  config.add_message_type<RunPartitionRequest>("troupe.RunPartitionRequest");
  config.add_message_type<RunPartitionResponse>("troupe.RunPartitionResponse");
  config.add_message_type<DeviceInfo>("troupe.DeviceInfo");
  register_error_category(config);
}

}  // namespace troupe
