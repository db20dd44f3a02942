// Tests for ServerDef: validation against the cluster, the local server, and the wire form.
#include <boost/test/unit_test.hpp>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "troupe/graph/cluster/server_def.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

// {"ps": ["ps0:2222"], "worker": {1: "w1:2222", 3: "w3:2222"}}
ClusterSpec cluster() {
  return value_or_throw(ClusterSpec::create_sparse(
      {{"ps", {{0, "ps0:2222"}}}, {"worker", {{1, "w1:2222"}, {3, "w3:2222"}}}}));
}

StatusOr<ServerDef> through_wire(const ServerDef& def) {
  capnp::MallocMessageBuilder message;
  def.to_wire(message.initRoot<wire::ServerDef>());
  kj::Array<capnp::word> flat = capnp::messageToFlatArray(message);
  capnp::FlatArrayMessageReader reader(flat.asPtr());
  return ServerDef::from_wire(reader.getRoot<wire::ServerDef>());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(server_def)

BOOST_AUTO_TEST_CASE(create_checks_the_task_exists) {
  auto def = ServerDef::create(cluster(), "worker", 3);
  BOOST_REQUIRE(def.ok());
  BOOST_TEST((def->cluster == cluster()));
  BOOST_TEST(def->job_name == "worker");
  BOOST_TEST(def->task_index == 3);
  BOOST_TEST(def->protocol == "troupe");
  BOOST_TEST((def->default_session_config == SessionConfig{}));
  BOOST_TEST(def->address().value() == "w3:2222");
  BOOST_TEST(def->task_name() == "/job:worker/replica:0/task:3");
}

BOOST_AUTO_TEST_CASE(create_keeps_protocol_and_session_config) {
  SessionConfig config{
      .isolate_session_state = true, .operation_timeout_ms = 1500, .intra_op_threads = 4};
  auto def = ServerDef::create(cluster(), "ps", 0, "grpc", config);
  BOOST_REQUIRE(def.ok());
  BOOST_TEST(def->protocol == "grpc");
  BOOST_TEST(def->default_session_config.isolate_session_state);
  BOOST_TEST(def->default_session_config.operation_timeout_ms == 1500);
  BOOST_TEST(def->default_session_config.intra_op_threads == 4);
  BOOST_TEST(def->address().value() == "ps0:2222");
}

BOOST_AUTO_TEST_CASE(unknown_job_is_named_with_the_jobs_that_exist) {
  auto def = ServerDef::create(cluster(), "chief", 0);
  BOOST_TEST(def.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(def.status(), "ServerDef"), def.status());
  BOOST_TEST(mentions(def.status(), "'chief'"), def.status());
  BOOST_TEST(mentions(def.status(), "['ps', 'worker']"), def.status());
}

BOOST_AUTO_TEST_CASE(undefined_index_is_named_with_the_indices_that_exist) {
  for (int index : {0, 2, 4, -1}) {
    auto def = ServerDef::create(cluster(), "worker", index);
    BOOST_TEST(def.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(def.status(), fmt::format("job 'worker' has no task {}", index)),
               def.status());
    BOOST_TEST(mentions(def.status(), "[1, 3]"), def.status());
  }
}

BOOST_AUTO_TEST_CASE(empty_job_name_means_the_only_job) {
  auto single = ClusterSpec::create({{"worker", {"w0:2222", "w1:2222"}}}).value();
  auto def = ServerDef::create(single, "", 1);
  BOOST_REQUIRE(def.ok());
  BOOST_TEST(def->job_name == "worker");
  BOOST_TEST(def->address().value() == "w1:2222");

  auto ambiguous = ServerDef::create(cluster(), "", 0);
  BOOST_TEST(ambiguous.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(ambiguous.status(), "no job name given"), ambiguous.status());
  BOOST_TEST(mentions(ambiguous.status(), "2 jobs ['ps', 'worker']"), ambiguous.status());

  auto none = ServerDef::create(ClusterSpec(), "", 0);
  BOOST_TEST(none.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(none.status(), "0 jobs []"), none.status());
}

BOOST_AUTO_TEST_CASE(rejects_bad_protocol_and_session_config) {
  auto no_protocol = ServerDef::create(cluster(), "ps", 0, "");
  BOOST_TEST(no_protocol.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(no_protocol.status(), "unknown protocol ''"), no_protocol.status());
  // TensorFlow rejects a protocol it does not speak; so does troupe, naming the ones it does.
  auto pigeon = ServerDef::create(cluster(), "ps", 0, "carrier-pigeon");
  BOOST_TEST(pigeon.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(pigeon.status(),
                      "unknown protocol 'carrier-pigeon' (troupe speaks "
                      "\"troupe\", and accepts \"grpc\""),
             pigeon.status());
  BOOST_TEST(ServerDef::create(cluster(), "ps", 0, "grpc").ok());

  auto timeout = ServerDef::create(cluster(), "ps", 0, "troupe", {.operation_timeout_ms = -5});
  BOOST_TEST(timeout.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(timeout.status(), "operation_timeout_ms is -5"), timeout.status());

  auto threads = ServerDef::create(cluster(), "ps", 0, "troupe", {.intra_op_threads = -1});
  BOOST_TEST(threads.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(threads.status(), "intra_op_threads is -1"), threads.status());
}

BOOST_AUTO_TEST_CASE(local_server) {
  ServerDef def = ServerDef::local();
  BOOST_TEST(def.job_name == "localhost");
  BOOST_TEST(def.task_index == 0);
  BOOST_TEST(def.protocol == "troupe");
  BOOST_TEST(def.cluster.jobs() == (std::vector<std::string>{"localhost"}),
             boost::test_tools::per_element());
  BOOST_TEST(def.cluster.num_tasks("localhost").value() == 1);
  BOOST_TEST(def.address().value() == "localhost:0");
  BOOST_TEST(def.task_name() == "/job:localhost/replica:0/task:0");
  // It is what create would build for the same cluster.
  auto created = ServerDef::create(def.cluster, "localhost", 0);
  BOOST_REQUIRE(created.ok());
  BOOST_TEST((*created == def));
}

BOOST_AUTO_TEST_CASE(intra_op_threads_share_the_hosts_cores_among_its_tasks) {
  // Three tasks on loopback (spelled three ways), one elsewhere.
  auto spec = value_or_throw(ClusterSpec::create(
      {{"ps", {"127.0.0.1:2222"}}, {"worker", {"localhost:2223", "[::1]:2224", "10.0.0.2:2222"}}}));
  auto ps = value_or_throw(ServerDef::create(spec, "ps", 0));
  BOOST_TEST(ps.tasks_on_this_host() == 3);
  BOOST_TEST(ps.intra_op_threads(2) == 1);  // never 0
  BOOST_TEST(ps.intra_op_threads(8) == 2);
  BOOST_TEST(ps.intra_op_threads(9) == 3);
  auto remote = value_or_throw(ServerDef::create(spec, "worker", 2));
  BOOST_TEST(remote.tasks_on_this_host() == 1);
  BOOST_TEST(remote.intra_op_threads(8) == 8);
  // A thread count the user set is kept, whatever the host holds.
  auto set = value_or_throw(ServerDef::create(spec, "ps", 0, "troupe", {.intra_op_threads = 4}));
  BOOST_TEST(set.intra_op_threads(2) == 4);
  BOOST_TEST(ServerDef::local().intra_op_threads(2) == 2);
}

BOOST_AUTO_TEST_CASE(address_of_an_inconsistent_def_is_an_error) {
  ServerDef def;
  def.cluster = cluster();
  def.job_name = "worker";
  def.task_index = 2;
  auto address = def.address();
  BOOST_TEST(address.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(address.status(), "job 'worker' has no task 2"), address.status());
}

BOOST_AUTO_TEST_CASE(equality) {
  ServerDef a = ServerDef::create(cluster(), "worker", 1).value();
  BOOST_TEST((a == ServerDef::create(cluster(), "worker", 1).value()));
  BOOST_TEST(!(a == ServerDef::create(cluster(), "worker", 3).value()));
  BOOST_TEST(!(a == ServerDef::create(cluster(), "ps", 0).value()));
  BOOST_TEST(!(a == ServerDef::create(cluster(), "worker", 1, "grpc").value()));
  BOOST_TEST(
      !(a == ServerDef::create(cluster(), "worker", 1, "troupe", {.intra_op_threads = 2}).value()));
  auto other_cluster = ClusterSpec::create({{"worker", {"x:1", "w1:2222"}}}).value();
  BOOST_TEST(!(a == ServerDef::create(other_cluster, "worker", 1).value()));
}

BOOST_AUTO_TEST_CASE(wire_round_trip) {
  SessionConfig config{
      .isolate_session_state = true, .operation_timeout_ms = 60000, .intra_op_threads = 3};
  for (const ServerDef& def : {ServerDef::create(cluster(), "worker", 3, "grpc", config).value(),
                               ServerDef::create(cluster(), "ps", 0).value(), ServerDef::local()}) {
    auto back = through_wire(def);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == def), def.task_name());
    BOOST_TEST(back->protocol == def.protocol);
    BOOST_TEST(back->default_session_config.operation_timeout_ms ==
               def.default_session_config.operation_timeout_ms);
  }
}

BOOST_AUTO_TEST_CASE(wire_form_carries_every_field) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<wire::ServerDef>();
  ServerDef::create(cluster(), "worker", 1, "grpc", {true, 250, 8}).value().to_wire(root);
  auto in = root.asReader();
  BOOST_TEST(std::string(in.getJobName().cStr()) == "worker");
  BOOST_TEST(in.getTaskIndex() == 1);
  BOOST_TEST(std::string(in.getProtocol().cStr()) == "grpc");
  BOOST_TEST(in.getDefaultSessionConfig().getIsolateSessionState());
  BOOST_TEST(in.getDefaultSessionConfig().getOperationTimeoutMs() == 250);
  BOOST_TEST(in.getDefaultSessionConfig().getIntraOpThreads() == 8);
  BOOST_TEST(in.getCluster().getJobs().size() == 2u);
}

BOOST_AUTO_TEST_CASE(from_wire_validates) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<wire::ServerDef>();
  ServerDef::create(cluster(), "worker", 1).value().to_wire(root);

  root.setTaskIndex(2);
  auto hole = ServerDef::from_wire(root.asReader());
  BOOST_TEST(hole.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(hole.status(), "job 'worker' has no task 2"), hole.status());

  root.setTaskIndex(1);
  root.setJobName("chief");
  auto job = ServerDef::from_wire(root.asReader());
  BOOST_TEST(job.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(job.status(), "'chief'"), job.status());

  root.setJobName("worker");
  root.getCluster().getJobs()[0].getTasks()[0].setAddress("ps0");
  auto address = ServerDef::from_wire(root.asReader());
  BOOST_TEST(address.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(address.status(), "job 'ps' task 0"), address.status());
  BOOST_TEST(mentions(address.status(), "port"), address.status());
}

BOOST_AUTO_TEST_CASE(from_wire_rejects_malformed_messages) {
  // One segment: a root struct whose first pointer (the cluster) points outside it.
  auto words = kj::heapArray<capnp::word>(2);
  uint64_t root_pointer = uint64_t{1} << 48;  // struct, offset 0, no data, one pointer
  uint64_t cluster_pointer = (uint64_t{1000} << 2) | (uint64_t{1} << 48);  // struct, far away
  auto* bytes = reinterpret_cast<char*>(words.begin());
  std::memcpy(bytes, &root_pointer, sizeof(root_pointer));
  std::memcpy(bytes + sizeof(capnp::word), &cluster_pointer, sizeof(cluster_pointer));
  kj::ArrayPtr<const capnp::word> segments[] = {words.asPtr()};
  capnp::SegmentArrayMessageReader reader(segments);
  auto def = ServerDef::from_wire(reader.getRoot<wire::ServerDef>());
  BOOST_TEST(def.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(def.status(), "malformed"), def.status());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
