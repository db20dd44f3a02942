// Tests for TfConfig: TF_CONFIG as TensorFlow's documentation writes it, and each error.
#include <boost/test/unit_test.hpp>

#include <cstdlib>

#include "troupe/graph/cluster/tf_config.hpp"

namespace troupe {
namespace {

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

// Sets TF_CONFIG for one test and restores what was there before.
class ScopedTfConfig {
 public:
  explicit ScopedTfConfig(const char* value) {
    if (const char* old = std::getenv("TF_CONFIG")) old_ = old;
    if (value == nullptr) {
      unsetenv("TF_CONFIG");
    } else {
      setenv("TF_CONFIG", value, 1);
    }
  }
  ~ScopedTfConfig() {
    if (old_) {
      setenv("TF_CONFIG", old_->c_str(), 1);
    } else {
      unsetenv("TF_CONFIG");
    }
  }

 private:
  std::optional<std::string> old_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(tf_config)

// The parameter-server example of tf.distribute.experimental.ParameterServerStrategy.
BOOST_AUTO_TEST_CASE(parameter_server_example) {
  auto config = TfConfig::parse(R"({
    "cluster": {
      "worker": ["host1:2222", "host2:2222", "host3:2222"],
      "ps": ["host4:2222", "host5:2222"],
      "chief": ["host6:2222"]
    },
    "task": {"type": "worker", "index": 1}
  })");
  BOOST_REQUIRE(config.ok());
  BOOST_TEST(config->task_type == "worker");
  BOOST_TEST(config->task_index == 1);
  BOOST_TEST(config->cluster.jobs() == (std::vector<std::string>{"chief", "ps", "worker"}),
             boost::test_tools::per_element());
  BOOST_TEST(config->cluster.task_address("worker", 1).value() == "host2:2222");
  BOOST_TEST(config->cluster.task_address("ps", 1).value() == "host5:2222");
  BOOST_TEST(config->cluster.num_tasks("chief").value() == 1);
}

// The MultiWorkerMirroredStrategy tutorial's two local workers.
BOOST_AUTO_TEST_CASE(multi_worker_example) {
  auto config = TfConfig::parse(
      R"({"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
          "task": {"type": "worker", "index": 0}})");
  BOOST_REQUIRE(config.ok());
  BOOST_TEST(config->task_type == "worker");
  BOOST_TEST(config->task_index == 0);
  BOOST_TEST((config->cluster ==
              ClusterSpec::create({{"worker", {"localhost:12345", "localhost:23456"}}}).value()));
}

// Estimator's chief / worker / ps / evaluator layout, "environment" included.
BOOST_AUTO_TEST_CASE(chief_worker_evaluator_example) {
  auto config = TfConfig::parse(R"({
    "cluster": {
      "chief": ["host0:2222"],
      "worker": ["host1:2222", "host2:2222", "host3:2222"],
      "ps": ["host4:2222", "host5:2222"],
      "evaluator": ["host7:2222"]
    },
    "task": {"type": "evaluator", "index": 0},
    "environment": "cloud",
    "rpc_layer": "grpc"
  })");
  BOOST_REQUIRE(config.ok());
  BOOST_TEST(config->task_type == "evaluator");
  BOOST_TEST(config->task_index == 0);
  BOOST_TEST(
      config->cluster.jobs() == (std::vector<std::string>{"chief", "evaluator", "ps", "worker"}),
      boost::test_tools::per_element());
  BOOST_TEST(config->cluster.task_address("chief", 0).value() == "host0:2222");

  auto chief = TfConfig::parse(R"({"cluster": {"chief": ["host0:2222"], "worker": ["h:1"]},
                                   "task": {"type": "chief", "index": 0}})");
  BOOST_REQUIRE(chief.ok());
  BOOST_TEST(chief->task_type == "chief");
}

BOOST_AUTO_TEST_CASE(sparse_cluster) {
  auto config = TfConfig::parse(R"({"cluster": {"worker": {"1": "w1:2222", "3": "w3:2222"}},
                                    "task": {"type": "worker", "index": 3}})");
  BOOST_REQUIRE(config.ok());
  BOOST_TEST(config->task_index == 3);
  BOOST_TEST(config->cluster.task_indices("worker").value() == (std::vector<int>{1, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(
      (*config ==
       TfConfig{ClusterSpec::create_sparse({{"worker", {{1, "w1:2222"}, {3, "w3:2222"}}}}).value(),
                "worker", 3}));
}

BOOST_AUTO_TEST_CASE(errors_name_the_culprit) {
  struct Case {
    std::string_view json;
    std::vector<std::string_view> says;
  };
  std::vector<Case> cases = {
      {"", {"invalid JSON"}},
      {R"({"cluster": {"worker": ["a:1"]}, )", {"invalid JSON"}},
      {"[]", {"expected a JSON object", "got array"}},
      {R"({"task": {"type": "worker", "index": 0}})", {"missing \"cluster\""}},
      {R"({"cluster": ["a:1"], "task": {"type": "worker", "index": 0}})",
       {"\"cluster\" must be an object", "got array"}},
      {R"({"cluster": "a:1", "task": {"type": "worker", "index": 0}})", {"got string"}},
      {R"({"cluster": {"worker": ["a:1", "b"]}, "task": {"type": "worker", "index": 0}})",
       {"job 'worker' task 1", "port", "'b'"}},
      {R"({"cluster": {"worker": "a:1"}, "task": {"type": "worker", "index": 0}})",
       {"job 'worker'", "expected an array"}},
      {R"({"cluster": {"worker": ["a:1"]}})", {"missing \"task\""}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": "worker"})",
       {"\"task\" must be an object", "got string"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"index": 0}})", {"task.type", "got nothing"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": 1, "index": 0}})",
       {"task.type must be a string", "got number"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker"}})",
       {"task.index must be an integer", "got nothing"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}})",
       {"task.index must be an integer", "got string"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0.5}})",
       {"task.index must be an integer", "got number"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": true}})",
       {"task.index must be an integer", "got boolean"}},
      {R"({"cluster": {"worker": ["a:1"], "ps": ["p:1"]}, "task": {"type": "chief", "index": 0}})",
       {"task.type 'chief' is not a job of the cluster", "['ps', 'worker']"}},
      {R"({"cluster": {}, "task": {"type": "worker", "index": 0}})",
       {"task.type 'worker' is not a job", "[]"}},
      {R"({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 2}})",
       {"task.index 2 is not a task of job 'worker'", "[0, 1]"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": -1}})",
       {"task.index -1 is not a task of job 'worker'", "[0]"}},
      {R"({"cluster": {"worker": {"1": "a:1", "3": "b:1"}}, "task": {"type": "worker", "index": 2}})",
       {"task.index 2", "job 'worker'", "[1, 3]"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 4294967296}})",
       {"task.index 4294967296", "[0]"}},
      {R"({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 0},
           "task": {"type": "worker", "index": 0}})",
       {"key 'task' appears twice"}},
  };
  for (const Case& c : cases) {
    auto config = TfConfig::parse(c.json);
    BOOST_TEST(config.status().code() == Code::kInvalidArgument, c.json);
    BOOST_TEST(config.status().message().starts_with("TF_CONFIG: "), config.status());
    for (std::string_view text : c.says)
      BOOST_TEST(mentions(config.status(), text), c.json << " -> " << config.status());
  }
}

BOOST_AUTO_TEST_CASE(from_environment_reads_tf_config) {
  ScopedTfConfig env(R"({"cluster": {"ps": ["p:1"], "worker": ["w0:1", "w1:1"]},
                         "task": {"type": "ps", "index": 0}})");
  auto config = TfConfig::from_environment();
  BOOST_REQUIRE(config.ok());
  BOOST_TEST(config->task_type == "ps");
  BOOST_TEST(config->task_index == 0);
  BOOST_TEST(config->cluster.num_tasks("worker").value() == 2);
}

BOOST_AUTO_TEST_CASE(from_environment_without_tf_config_is_not_found) {
  {
    ScopedTfConfig env(nullptr);
    auto config = TfConfig::from_environment();
    BOOST_TEST(config.status().code() == Code::kNotFound);
    BOOST_TEST(mentions(config.status(), "TF_CONFIG is not set"), config.status());
  }
  {
    ScopedTfConfig env("");
    auto config = TfConfig::from_environment();
    BOOST_TEST(config.status().code() == Code::kNotFound);
    BOOST_TEST(mentions(config.status(), "TF_CONFIG is empty"), config.status());
  }
  {
    ScopedTfConfig env("{not json");
    auto config = TfConfig::from_environment();
    BOOST_TEST(config.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(config.status(), "TF_CONFIG: invalid JSON"), config.status());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
