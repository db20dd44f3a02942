// own_metrics_node: a user's node binary whose own role is named "metrics", the job name of the
// example role the `troupe` tool serves. It must serve its own role (which answers a string
// with "own metrics role of <task>: <string>") and never clash with troupe's. Arguments as
// `troupe node`.
#include <iostream>
#include <string>

#include <caf/all.hpp>

#include "troupe/actors/role_registry.hpp"
#include "troupe/apps/cli/commands.hpp"

namespace {

caf::behavior own_role(caf::event_based_actor*, std::string task) {
  return {[task](const std::string& question) {
    return "own metrics role of " + task + ": " + question;
  }};
}

}  // namespace

int main(int argc, char** argv) {
  troupe::Status status = troupe::RoleRegistry::global().register_role(
      "metrics", [](const troupe::RoleContext& context) {
        return context.parent->spawn<caf::linked>(own_role, context.server_def.task_name());
      });
  if (!status.ok()) {
    std::cerr << "own_metrics_node: " << status.to_string() << "\n";
    return 1;
  }
  return troupe::cli::node_command({argv + 1, argv + argc});
}
