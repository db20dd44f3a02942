// Tests for ClusterSpec: construction, validation, accessors, printing, wire and JSON forms.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

// {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}
ClusterSpec dense_cluster() {
  return value_or_throw(ClusterSpec::create(
      {{"ps", {"ps0:2222", "ps1:2222"}}, {"worker", {"w0:2222", "w1:2222", "w2:2222"}}}));
}

// {"ps": ["ps0:2222"], "worker": {1: "w1:2222", 3: "w3:2222"}}
ClusterSpec sparse_cluster() {
  return value_or_throw(ClusterSpec::create_sparse(
      {{"ps", {{0, "ps0:2222"}}}, {"worker", {{1, "w1:2222"}, {3, "w3:2222"}}}}));
}

// Through a serialized message and back.
StatusOr<ClusterSpec> through_wire(const ClusterSpec& spec) {
  capnp::MallocMessageBuilder message;
  spec.to_wire(message.initRoot<wire::ClusterDef>());
  kj::Array<capnp::word> flat = capnp::messageToFlatArray(message);
  capnp::FlatArrayMessageReader reader(flat.asPtr());
  return ClusterSpec::from_wire(reader.getRoot<wire::ClusterDef>());
}

using Optionals = std::vector<std::optional<std::string>>;

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_spec)

BOOST_AUTO_TEST_CASE(dense_job_accessors) {
  ClusterSpec spec = dense_cluster();
  BOOST_TEST(spec.jobs() == (std::vector<std::string>{"ps", "worker"}),
             boost::test_tools::per_element());
  BOOST_TEST(spec.has_job("worker"));
  BOOST_TEST(!spec.has_job("chief"));
  BOOST_TEST(!spec.empty());
  BOOST_TEST(spec.num_tasks("worker").value() == 3);
  BOOST_TEST(spec.num_tasks("ps").value() == 2);
  BOOST_TEST(spec.task_indices("worker").value() == (std::vector<int>{0, 1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(spec.task_address("worker", 0).value() == "w0:2222");
  BOOST_TEST(spec.task_address("worker", 2).value() == "w2:2222");
  BOOST_TEST(spec.task_address("ps", 1).value() == "ps1:2222");
  BOOST_TEST((spec.job_tasks("worker").value() == Optionals{"w0:2222", "w1:2222", "w2:2222"}));
  BOOST_TEST((spec.tasks("ps").value() == ClusterSpec::Tasks{{0, "ps0:2222"}, {1, "ps1:2222"}}));
  BOOST_TEST(spec.as_map().size() == 2u);
  BOOST_TEST(spec.as_map().at("worker").at(1) == "w1:2222");
}

BOOST_AUTO_TEST_CASE(sparse_job_accessors_see_holes) {
  ClusterSpec spec = sparse_cluster();
  BOOST_TEST(spec.jobs() == (std::vector<std::string>{"ps", "worker"}),
             boost::test_tools::per_element());
  BOOST_TEST(spec.num_tasks("worker").value() == 2);
  BOOST_TEST(spec.task_indices("worker").value() == (std::vector<int>{1, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(spec.task_address("worker", 1).value() == "w1:2222");
  BOOST_TEST(spec.task_address("worker", 3).value() == "w3:2222");
  BOOST_TEST((spec.job_tasks("worker").value() ==
              Optionals{std::nullopt, "w1:2222", std::nullopt, "w3:2222"}));
  BOOST_TEST((spec.tasks("worker").value() == ClusterSpec::Tasks{{1, "w1:2222"}, {3, "w3:2222"}}));

  auto hole = spec.task_address("worker", 2);
  BOOST_TEST(hole.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(hole.status(), "job 'worker' has no task 2"), hole.status());
  BOOST_TEST(mentions(hole.status(), "[1, 3]"), hole.status());
}

BOOST_AUTO_TEST_CASE(empty_spec) {
  ClusterSpec spec;
  BOOST_TEST(spec.empty());
  BOOST_TEST(spec.jobs().empty());
  BOOST_TEST(!spec.has_job("worker"));
  BOOST_TEST(spec.to_string() == "ClusterSpec({})");
  BOOST_TEST(spec.to_json() == "{}");
  BOOST_TEST((spec == ClusterSpec::create({}).value()));
  BOOST_TEST((spec == ClusterSpec::create_sparse({}).value()));
  BOOST_TEST((spec != dense_cluster()));
  auto missing = spec.num_tasks("worker");
  BOOST_TEST(missing.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(missing.status(), "unknown job 'worker'"), missing.status());
  BOOST_TEST(mentions(missing.status(), "[]"), missing.status());
}

// The tasks of a simulated cluster each hold a copy: copies share one map of jobs, and a job
// added to a copy leaves the others as they were.
BOOST_AUTO_TEST_CASE(copies_share_the_jobs_until_one_changes) {
  ClusterSpec original = dense_cluster();
  ClusterSpec copy = original;
  BOOST_TEST(&copy.as_map() == &original.as_map());
  BOOST_TEST((copy == original));
  BOOST_TEST_REQUIRE(copy.add_job("evaluator", {"e0:2222"}).ok());
  BOOST_TEST(&copy.as_map() != &original.as_map());
  BOOST_TEST(copy.has_job("evaluator"));
  BOOST_TEST(!original.has_job("evaluator"));
  BOOST_TEST((original == dense_cluster()));
  BOOST_TEST((copy != original));
  ClusterSpec moved = std::move(copy);
  BOOST_TEST(moved.has_job("evaluator"));
  BOOST_TEST(moved.task_address("evaluator", 0).value() == "e0:2222");
}

BOOST_AUTO_TEST_CASE(job_without_tasks_is_kept) {
  ClusterSpec spec;
  BOOST_REQUIRE(spec.add_job("worker", {}).ok());
  BOOST_TEST(!spec.empty());
  BOOST_TEST(spec.has_job("worker"));
  BOOST_TEST(spec.num_tasks("worker").value() == 0);
  BOOST_TEST(spec.task_indices("worker").value().empty());
  BOOST_TEST(spec.job_tasks("worker").value().empty());
  BOOST_TEST(spec.to_string() == "ClusterSpec({'worker': []})");
  BOOST_TEST(spec.to_json() == R"({"worker":[]})");
}

BOOST_AUTO_TEST_CASE(unknown_job_names_it_and_lists_jobs) {
  ClusterSpec spec = dense_cluster();
  std::vector<Status> errors = {spec.num_tasks("chief").status(),
                                spec.task_indices("chief").status(),
                                spec.task_address("chief", 0).status(),
                                spec.job_tasks("chief").status(), spec.tasks("chief").status()};
  for (const Status& status : errors) {
    BOOST_TEST(status.code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(status, "'chief'"), status);
    BOOST_TEST(mentions(status, "['ps', 'worker']"), status);
  }
}

BOOST_AUTO_TEST_CASE(unknown_index_names_it_and_lists_indices) {
  ClusterSpec spec = dense_cluster();
  for (int index : {3, -1, 100}) {
    auto address = spec.task_address("worker", index);
    BOOST_TEST(address.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(address.status(), fmt::format("job 'worker' has no task {}", index)),
               address.status());
    BOOST_TEST(mentions(address.status(), "[0, 1, 2]"), address.status());
  }
}

BOOST_AUTO_TEST_CASE(equality_compares_index_to_address_maps) {
  auto ab = ClusterSpec::create({{"w", {"a:1", "b:2"}}}).value();
  auto ba = ClusterSpec::create({{"w", {"b:2", "a:1"}}}).value();
  auto ab_sparse = ClusterSpec::create_sparse({{"w", {{0, "a:1"}, {1, "b:2"}}}}).value();
  auto ab_shifted = ClusterSpec::create_sparse({{"w", {{1, "a:1"}, {2, "b:2"}}}}).value();
  auto ab_other_job = ClusterSpec::create({{"v", {"a:1", "b:2"}}}).value();
  auto ab_plus_job = ClusterSpec::create({{"w", {"a:1", "b:2"}}, {"ps", {"p:3"}}}).value();
  auto ab_other_port = ClusterSpec::create({{"w", {"a:1", "b:3"}}}).value();

  BOOST_TEST((ab == ClusterSpec::create({{"w", {"a:1", "b:2"}}}).value()));
  BOOST_TEST((ab != ba));
  BOOST_TEST((ab == ab_sparse));
  BOOST_TEST((ab_sparse == ab));
  BOOST_TEST((ab != ab_shifted));
  BOOST_TEST((ab != ab_other_job));
  BOOST_TEST((ab != ab_plus_job));
  BOOST_TEST((ab != ab_other_port));
  BOOST_TEST((ab != ClusterSpec()));
}

BOOST_AUTO_TEST_CASE(add_job_builds_a_spec) {
  ClusterSpec spec;
  BOOST_REQUIRE(spec.add_job("worker", {"w0:2222", "w1:2222", "w2:2222"}).ok());
  BOOST_REQUIRE(spec.add_job("ps", {"ps0:2222", "ps1:2222"}).ok());
  BOOST_TEST((spec == dense_cluster()));

  ClusterSpec sparse;
  BOOST_REQUIRE(sparse.add_sparse_job("worker", {{3, "w3:2222"}, {1, "w1:2222"}}).ok());
  BOOST_REQUIRE(sparse.add_job("ps", {"ps0:2222"}).ok());
  BOOST_TEST((sparse == sparse_cluster()));
}

BOOST_AUTO_TEST_CASE(duplicate_job_is_rejected) {
  ClusterSpec spec = dense_cluster();
  Status dense = spec.add_job("worker", {"x:1"});
  BOOST_TEST(dense.code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(dense, "job 'worker' is already in the cluster"), dense);
  Status sparse = spec.add_sparse_job("ps", {{5, "x:1"}});
  BOOST_TEST(sparse.code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(sparse, "job 'ps'"), sparse);
  BOOST_TEST((spec == dense_cluster()));
}

BOOST_AUTO_TEST_CASE(failed_add_leaves_the_spec_unchanged) {
  ClusterSpec spec = dense_cluster();
  BOOST_TEST(!spec.add_job("chief", {"c0:2222", "c1"}).ok());
  BOOST_TEST(!spec.has_job("chief"));
  BOOST_TEST((spec == dense_cluster()));
}

BOOST_AUTO_TEST_CASE(job_names_are_validated) {
  for (std::string_view name : {"worker", "ps", "chief", "evaluator", "worker_2", "w0", "Worker"}) {
    ClusterSpec spec;
    BOOST_TEST(spec.add_job(std::string(name), {"h:1"}).ok(), name);
  }
  for (std::string_view name : {"", "/job", "/job:worker", "1worker", "_w", "w-x", "w x", "w:1"}) {
    auto spec = ClusterSpec::create({{std::string(name), {"h:1"}}});
    BOOST_TEST(spec.status().code() == Code::kInvalidArgument, name);
    BOOST_TEST(mentions(spec.status(), fmt::format("invalid job name '{}'", name)), spec.status());
    BOOST_TEST(mentions(spec.status(), "[A-Za-z][A-Za-z0-9_]*"), spec.status());
  }
}

BOOST_AUTO_TEST_CASE(negative_task_index_is_rejected) {
  auto spec = ClusterSpec::create_sparse({{"worker", {{-1, "w:1"}, {0, "w0:1"}}}});
  BOOST_TEST(spec.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(spec.status(), "job 'worker': task index -1 is negative"), spec.status());
}

BOOST_AUTO_TEST_CASE(address_without_port_names_job_task_and_address) {
  for (std::string_view address : {"localhost", "localhost:"}) {
    auto spec = ClusterSpec::create({{"worker", {"w0:2222", std::string(address)}}});
    const Status& status = spec.status();
    BOOST_TEST(status.code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(status, "port"), status);
    BOOST_TEST(mentions(status, "job 'worker' task 1"), status);
    BOOST_TEST(mentions(status, fmt::format("'{}'", address)), status);
  }
  auto sparse = ClusterSpec::create_sparse({{"ps", {{7, "ps7"}}}});
  BOOST_TEST(mentions(sparse.status(), "job 'ps' task 7"), sparse.status());
  BOOST_TEST(mentions(sparse.status(), "port"), sparse.status());
}

BOOST_AUTO_TEST_CASE(other_bad_addresses_are_rejected) {
  for (std::string_view address : {"", ":2222", "h:70000", "h:x", "::1:2222", "a b:1"}) {
    auto spec = ClusterSpec::create({{"worker", {std::string(address)}}});
    BOOST_TEST(spec.status().code() == Code::kInvalidArgument, address);
    BOOST_TEST(mentions(spec.status(), "job 'worker' task 0"), spec.status());
    BOOST_TEST(mentions(spec.status(), fmt::format("'{}'", address)), spec.status());
  }
}

BOOST_AUTO_TEST_CASE(accepts_ipv6_and_port_zero) {
  auto spec = ClusterSpec::create({{"worker", {"[::1]:2222", "[fe80::1]:1", "localhost:0"}}});
  BOOST_REQUIRE(spec.ok());
  BOOST_TEST(spec->task_address("worker", 0).value() == "[::1]:2222");
  BOOST_TEST(spec->task_address("worker", 2).value() == "localhost:0");
}

BOOST_AUTO_TEST_CASE(prints_like_tensorflow) {
  auto dense = ClusterSpec::create({{"ps", {"ps0:2222"}}, {"worker", {"w0:2222", "w1:2222"}}});
  BOOST_TEST(dense->to_string() ==
             "ClusterSpec({'ps': ['ps0:2222'], 'worker': ['w0:2222', 'w1:2222']})");
  BOOST_TEST(sparse_cluster().to_string() ==
             "ClusterSpec({'ps': ['ps0:2222'], 'worker': {1: 'w1:2222', 3: 'w3:2222'}})");
  // Indices 0..n-1 given sparsely print as a list; a missing 0 prints as a dict.
  auto contiguous = ClusterSpec::create_sparse({{"w", {{1, "b:2"}, {0, "a:1"}}}});
  BOOST_TEST(contiguous->to_string() == "ClusterSpec({'w': ['a:1', 'b:2']})");
  auto from_one = ClusterSpec::create_sparse({{"w", {{1, "b:2"}}}});
  BOOST_TEST(from_one->to_string() == "ClusterSpec({'w': {1: 'b:2'}})");

  std::ostringstream os;
  os << *dense;
  BOOST_TEST(os.str() == dense->to_string());
}

BOOST_AUTO_TEST_CASE(wire_round_trip) {
  ClusterSpec zero_tasks;
  BOOST_REQUIRE(zero_tasks.add_job("idle", {}).ok());
  for (const ClusterSpec& spec : {dense_cluster(), sparse_cluster(), ClusterSpec(), zero_tasks}) {
    auto back = through_wire(spec);
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == spec), spec);
    BOOST_TEST(back->to_string() == spec.to_string());
  }
}

BOOST_AUTO_TEST_CASE(wire_form_lists_jobs_and_tasks_in_order) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<wire::ClusterDef>();
  sparse_cluster().to_wire(root);
  auto jobs = root.asReader().getJobs();
  BOOST_REQUIRE(jobs.size() == 2u);
  BOOST_TEST(std::string(jobs[0].getName().cStr()) == "ps");
  BOOST_TEST(std::string(jobs[1].getName().cStr()) == "worker");
  auto tasks = jobs[1].getTasks();
  BOOST_REQUIRE(tasks.size() == 2u);
  BOOST_TEST(tasks[0].getIndex() == 1);
  BOOST_TEST(std::string(tasks[0].getAddress().cStr()) == "w1:2222");
  BOOST_TEST(tasks[1].getIndex() == 3);
  BOOST_TEST(std::string(tasks[1].getAddress().cStr()) == "w3:2222");
}

BOOST_AUTO_TEST_CASE(from_wire_validates) {
  struct Task {
    int index;
    const char* address;
  };
  struct Job {
    const char* name;
    std::vector<Task> tasks;
  };
  struct Case {
    std::vector<Job> jobs;
    std::vector<std::string_view> says;
  };
  std::vector<Case> cases = {
      {{{"w", {{0, "a:1"}}}, {"w", {{1, "b:1"}}}}, {"job 'w' appears twice"}},
      {{{"w", {{2, "a:1"}, {2, "b:1"}}}}, {"job 'w' lists task 2 twice"}},
      {{{"w", {{-3, "a:1"}}}}, {"task index -3"}},
      {{{"w", {{4, "nohost"}}}}, {"job 'w' task 4", "port", "'nohost'"}},
      {{{"9bad", {{0, "a:1"}}}}, {"invalid job name '9bad'"}},
  };
  for (const Case& c : cases) {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<wire::ClusterDef>();
    auto jobs = root.initJobs(c.jobs.size());
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      jobs[j].setName(c.jobs[j].name);
      auto tasks = jobs[j].initTasks(c.jobs[j].tasks.size());
      for (size_t t = 0; t < c.jobs[j].tasks.size(); ++t) {
        tasks[t].setIndex(c.jobs[j].tasks[t].index);
        tasks[t].setAddress(c.jobs[j].tasks[t].address);
      }
    }
    auto spec = ClusterSpec::from_wire(root.asReader());
    BOOST_TEST(spec.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(spec.status(), "ClusterDef"), spec.status());
    for (std::string_view text : c.says)
      BOOST_TEST(mentions(spec.status(), text), spec.status());
  }
}

BOOST_AUTO_TEST_CASE(from_wire_rejects_malformed_messages) {
  // One segment: a root struct with one pointer (the jobs list), which points far outside it.
  auto words = kj::heapArray<capnp::word>(2);
  uint64_t root_pointer = uint64_t{1} << 48;  // struct, offset 0, no data, one pointer
  uint64_t jobs_pointer = (uint64_t{1000} << 2) | 1 | (uint64_t{7} << 32) | (uint64_t{1} << 35);
  auto* bytes = reinterpret_cast<char*>(words.begin());
  std::memcpy(bytes, &root_pointer, sizeof(root_pointer));
  std::memcpy(bytes + sizeof(capnp::word), &jobs_pointer, sizeof(jobs_pointer));
  kj::ArrayPtr<const capnp::word> segments[] = {words.asPtr()};
  capnp::SegmentArrayMessageReader reader(segments);
  auto spec = ClusterSpec::from_wire(reader.getRoot<wire::ClusterDef>());
  BOOST_TEST(spec.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(spec.status(), "malformed ClusterDef message"), spec.status());
}

BOOST_AUTO_TEST_CASE(json_dense_and_sparse) {
  auto dense = ClusterSpec::from_json(
      R"({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]})");
  BOOST_REQUIRE(dense.ok());
  BOOST_TEST((*dense == dense_cluster()));

  auto sparse =
      ClusterSpec::from_json(R"({"worker": {"3": "w3:2222", "1": "w1:2222"}, "ps": ["ps0:2222"]})");
  BOOST_REQUIRE(sparse.ok());
  BOOST_TEST((*sparse == sparse_cluster()));

  auto empty = ClusterSpec::from_json(" {} ");
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->empty());
}

BOOST_AUTO_TEST_CASE(to_json_prints_dense_as_arrays_and_sparse_as_objects) {
  BOOST_TEST(dense_cluster().to_json() ==
             R"({"ps":["ps0:2222","ps1:2222"],"worker":["w0:2222","w1:2222","w2:2222"]})");
  BOOST_TEST(sparse_cluster().to_json() ==
             R"({"ps":["ps0:2222"],"worker":{"1":"w1:2222","3":"w3:2222"}})");
  // Sparse keys come out in numeric order, not string order.
  auto wide = ClusterSpec::create_sparse({{"w", {{2, "a:1"}, {10, "b:1"}}}});
  BOOST_TEST(wide->to_json() == R"({"w":{"2":"a:1","10":"b:1"}})");
  for (const ClusterSpec& spec : {dense_cluster(), sparse_cluster(), wide.value()}) {
    auto back = ClusterSpec::from_json(spec.to_json());
    BOOST_REQUIRE(back.ok());
    BOOST_TEST((*back == spec), spec);
  }
}

BOOST_AUTO_TEST_CASE(json_errors_name_the_culprit) {
  struct Case {
    std::string_view json;
    std::vector<std::string_view> says;
  };
  std::vector<Case> cases = {
      {"", {"invalid JSON"}},
      {"{", {"invalid JSON"}},
      {R"({"worker": ["a:1",]})", {"invalid JSON"}},
      {R"({"worker": ["a:1"]} trailing)", {"invalid JSON"}},
      {R"(["a:1"])", {"expected an object mapping job names", "got array"}},
      {R"("worker")", {"got string"}},
      {R"({"worker": "w0:2222"})", {"job 'worker'", "expected an array", "got string"}},
      {R"({"worker": 3})", {"job 'worker'", "got number"}},
      {R"({"worker": null})", {"job 'worker'", "got null"}},
      {R"({"worker": ["a:1", 2]})", {"job 'worker' task 1", "\"host:port\" string", "got number"}},
      {R"({"worker": ["a:1", ["b:1"]]})", {"job 'worker' task 1", "got array"}},
      {R"({"worker": {"x": "a:1"}})", {"job 'worker'", "key 'x'", "decimal integer"}},
      {R"({"worker": {"-1": "a:1"}})", {"job 'worker'", "key '-1'", "non-negative"}},
      {R"({"worker": {"1.5": "a:1"}})", {"key '1.5'"}},
      {R"({"worker": {"": "a:1"}})", {"key ''"}},
      {R"({"worker": {"99999999999": "a:1"}})", {"key '99999999999'"}},
      {R"({"worker": {"1": 7}})", {"job 'worker' task 1 (key '1')", "got number"}},
      {R"({"worker": {"01": "a:1", "1": "b:1"}})", {"keys '01' and '1' both name task 1"}},
      {R"({"worker": ["a:1"], "worker": ["b:1"]})", {"key 'worker' appears twice"}},
      {R"({"worker": {"1": "a:1", "1": "b:1"}})", {"key '1' appears twice", "object 'worker'"}},
      {R"({"worker": ["a:1", "nohost"]})", {"job 'worker' task 1", "port", "'nohost'"}},
      {R"({"worker": {"4": "h:"}})", {"job 'worker' task 4", "port", "'h:'"}},
      {R"({"2workers": ["a:1"]})", {"invalid job name '2workers'"}},
      {R"({"": ["a:1"]})", {"invalid job name ''"}},
  };
  for (const Case& c : cases) {
    auto spec = ClusterSpec::from_json(c.json);
    BOOST_TEST(spec.status().code() == Code::kInvalidArgument, c.json);
    for (std::string_view text : c.says)
      BOOST_TEST(mentions(spec.status(), text), c.json << " -> " << spec.status());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
