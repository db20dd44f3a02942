// Deterministic tests of the directory: its own task without asking anyone, unknown tasks and
// devices refused by name, device listing that asks only the tasks a filter could match, and a
// lost task reported to the watchers and found again when it is restarted.
#include <boost/test/unit_test.hpp>

#include "actors/deterministic_system.hpp"
#include "actors/task_in_system.hpp"
#include "status_checks.hpp"
#include "troupe/actors/atoms.hpp"
#include "troupe/actors/local_registry.hpp"
#include "troupe/actors/messages.hpp"
#include "troupe/graph/cluster/device_name.hpp"

namespace troupe {
namespace {
using testing::check_error;
using testing::DeterministicSystem;

const std::string kPs0Address = "ps-0.test:2222";
const std::string kPs1Address = "ps-1.test:2222";

std::string cpu_of(const std::string& job, int index) {
  return DeviceName::full(job, 0, index, "CPU", 0);
}

// The worker's real task and directory; the ps tasks are stand-ins that only list a device.
class DirectoryCluster {
 public:
  DirectoryCluster() {
    auto cluster = ClusterSpec::create(
                       {{"ps", {kPs0Address, kPs1Address}}, {"worker", {"worker-0.test:2222"}}})
                       .value();
    testing::TaskActors worker = testing::start_task(sys_, cluster, "worker");
    worker_task_ = worker.task;
    directory_ = worker.directory;
    sys_.label(directory_, "directory");
    ps_[0] = start_ps(0);
    ps_[1] = start_ps(1);
    sys_.clear_trace();
  }

  ~DirectoryCluster() {
    for (const caf::actor& ps : ps_)
      unregister_local_task(ps);
  }

  DeterministicSystem& sys() { return sys_; }
  const caf::actor& directory() const { return directory_; }
  const caf::actor& worker_task() const { return worker_task_; }
  const caf::actor& ps(int index) const { return ps_[index]; }

  // A stand-in ps task at its address, in place of one that was lost.
  caf::actor start_ps(int index) {
    if (ps_[index]) unregister_local_task(ps_[index]);
    std::vector<DeviceInfo> devices{DeviceInfo{cpu_of("ps", index), "CPU", caf::actor()}};
    ps_[index] = sys_.system().spawn([devices](caf::event_based_actor*) -> caf::behavior {
      return {[devices](get_devices_atom) { return devices; }};
    });
    std::string name = "ps" + std::to_string(index) + " task";
    sys_.own(ps_[index], name);
    BOOST_TEST_REQUIRE(register_local_address(index == 0 ? kPs0Address : kPs1Address,
                                              LocalTask{nullptr, ps_[index]}));
    sys_.run();
    return ps_[index];
  }

  StatusOr<caf::actor> resolve_task(const std::string& job, int index) {
    return sys_.ask<caf::actor>(directory_, resolve_task_atom::value, job, int32_t{index});
  }

  // The next task_lost the client (a watcher) got: "job:index: reason".
  std::string next_task_lost() {
    if (sys_.client()->mailbox().empty()) return "nothing";
    std::string got = "something else";
    sys_.client()->receive(
        [&](task_lost_atom, const std::string& job, int32_t index, const caf::error& reason) {
          got = job + ":" + std::to_string(index) + ": " + from_caf_error(reason).to_string();
        },
        caf::after(std::chrono::seconds(0)) >> [] {});
    return got;
  }

 private:
  DeterministicSystem sys_;
  caf::actor worker_task_;
  caf::actor directory_;
  caf::actor ps_[2];
};

}  // namespace

BOOST_AUTO_TEST_SUITE(directory)

BOOST_AUTO_TEST_CASE(its_own_task_is_answered_without_asking_anyone) {
  DirectoryCluster cluster;
  auto task = cluster.resolve_task("worker", 0);
  BOOST_TEST_REQUIRE(task.ok(), task.status().to_string());
  BOOST_TEST((*task == cluster.worker_task()));
  BOOST_TEST(cluster.sys().trace().size() == 1u, cluster.sys().trace_text());
}

BOOST_AUTO_TEST_CASE(unknown_tasks_and_devices_are_invalid_arguments_naming_them) {
  DirectoryCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  check_error(cluster.resolve_task("chief", 0).status(), Code::kInvalidArgument, "chief");
  check_error(cluster.resolve_task("ps", 5).status(), Code::kInvalidArgument,
              "job 'ps' has no task 5");
  check_error(sys.ask<caf::actor>(cluster.directory(), resolve_device_atom::value,
                                  std::string("/device:CPU:0"))
                  .status(),
              Code::kInvalidArgument, "device '/device:CPU:0' does not name a job and task");
  const std::string gpu = "/job:ps/replica:0/task:1/device:GPU:0";
  check_error(sys.ask<caf::actor>(cluster.directory(), resolve_device_atom::value, gpu).status(),
              Code::kInvalidArgument, "device '" + gpu + "' does not exist on its task");
  check_error(sys.ask<std::vector<DeviceInfo>>(cluster.directory(), list_devices_atom::value,
                                               std::vector<std::string>{"/job:ps/bogus:1"})
                  .status(),
              Code::kInvalidArgument, "device_filters");
}

BOOST_AUTO_TEST_CASE(listing_devices_asks_only_the_tasks_a_filter_could_match) {
  DirectoryCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  auto devices = sys.ask<std::vector<DeviceInfo>>(cluster.directory(), list_devices_atom::value,
                                                  std::vector<std::string>{"/job:ps"});
  BOOST_TEST_REQUIRE(devices.ok(), devices.status().to_string());
  BOOST_TEST_REQUIRE(devices->size() == 2u);
  BOOST_TEST((*devices)[0].name == cpu_of("ps", 0));
  BOOST_TEST((*devices)[1].name == cpu_of("ps", 1));
  BOOST_TEST(sys.received_by("ps0 task") == std::vector<std::string>{"directory: devices"},
             sys.trace_text());
  BOOST_TEST(sys.received_by("ps1 task") == std::vector<std::string>{"directory: devices"},
             sys.trace_text());
  BOOST_TEST(sys.received_by("worker task").empty(), sys.trace_text());

  // Without filters, every task; the devices come sorted by name.
  sys.clear_trace();
  devices = sys.ask<std::vector<DeviceInfo>>(cluster.directory(), list_devices_atom::value,
                                             std::vector<std::string>{});
  BOOST_TEST_REQUIRE(devices.ok(), devices.status().to_string());
  std::vector<std::string> names;
  for (const DeviceInfo& d : *devices)
    names.push_back(d.name);
  BOOST_TEST(names ==
             (std::vector<std::string>{cpu_of("ps", 0), cpu_of("ps", 1), cpu_of("worker", 0)}));
  // Connected tasks are asked again, but not looked up again.
  BOOST_TEST(sys.received_by("worker task") == std::vector<std::string>{"directory: devices"},
             sys.trace_text());
}

BOOST_AUTO_TEST_CASE(a_lost_task_is_reported_to_watchers_and_found_again_when_restarted) {
  DirectoryCluster cluster;
  DeterministicSystem& sys = cluster.sys();
  sys.client()->send(cluster.directory(), watch_tasks_atom::value);
  auto first = cluster.resolve_task("ps", 0);
  BOOST_TEST_REQUIRE(first.ok(), first.status().to_string());
  BOOST_TEST((*first == cluster.ps(0)));

  // It dies: the watchers hear of it once, naming the task, its address and why.
  caf::anon_send_exit(cluster.ps(0), caf::exit_reason::kill);
  sys.run();
  std::string lost = cluster.next_task_lost();
  BOOST_TEST(lost.find("ps:0: Unavailable: /job:ps/replica:0/task:0 at " + kPs0Address +
                       " is lost: its connection closed") == 0,
             lost);
  BOOST_TEST(cluster.next_task_lost() == "nothing");

  // Restarted at its address: the next lookup finds the new task.
  caf::actor restarted = cluster.start_ps(0);
  auto again = cluster.resolve_task("ps", 0);
  BOOST_TEST_REQUIRE(again.ok(), again.status().to_string());
  BOOST_TEST((*again == restarted));
  BOOST_TEST((*again != *first));

  // A task that stops cleanly is reported as stopped.
  caf::anon_send_exit(restarted, caf::exit_reason::user_shutdown);
  sys.run();
  lost = cluster.next_task_lost();
  BOOST_TEST(
      lost.find("ps:0: Unavailable: /job:ps/replica:0/task:0 at " + kPs0Address + " stopped") == 0,
      lost);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
