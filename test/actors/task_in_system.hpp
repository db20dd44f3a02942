// Test helper: a real task actor (with its directory and one CPU device actor) started in a
// DeterministicSystem, its actors labelled for the trace.
#pragma once

#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "actors/deterministic_system.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/actors/task_actor.hpp"

namespace troupe::testing {

struct TaskActors {
  caf::actor task;    // labelled "<job> task", owned by the system
  caf::actor device;  // "<job> device"
  std::string device_name;
  caf::actor directory;  // "<job> directory"
};

// Starts task `job`:0 of `cluster` (one intra-op thread per kernel).
inline TaskActors start_task(DeterministicSystem& sys, const ClusterSpec& cluster,
                             const std::string& job) {
  SessionConfig session_config;
  session_config.intra_op_threads = 1;
  auto def = ServerDef::create(cluster, job, 0, "troupe", session_config);
  BOOST_TEST_REQUIRE(def.ok(), def.status().to_string());
  TaskActors actors;
  actors.task = spawn_task_actor(sys.system(), TaskActorConfig{*def, {}, nullptr, nullptr});
  sys.own(actors.task, job + " task");
  auto devices = sys.ask<std::vector<DeviceInfo>>(actors.task, get_devices_atom::value);
  BOOST_TEST_REQUIRE(devices.ok(), devices.status().to_string());
  BOOST_TEST_REQUIRE(devices->size() == 1u);
  actors.device = devices->front().actor;
  actors.device_name = devices->front().name;
  sys.label(actors.device, job + " device");
  auto directory = sys.ask<caf::actor>(actors.task, get_directory_atom::value);
  BOOST_TEST_REQUIRE(directory.ok(), directory.status().to_string());
  actors.directory = *directory;
  sys.label(actors.directory, job + " directory");
  return actors;
}

}  // namespace troupe::testing
