// Tests of `troupe k8s`: the YAML writer, the objects kubernetes_manifests makes (names,
// TF_CONFIG from the pod's ordinal, TLS or not, storage), its refusals, and the command as a
// user runs it. Schema validation of the output is test/deploy/k8s/check_manifests.sh.
#include <boost/test/unit_test.hpp>

#include <openssl/evp.h>
#include <unistd.h>

#include <filesystem>

#include "apps/child_process.hpp"
#include "troupe/apps/deploy/kubernetes_manifests.hpp"
#include "troupe/apps/deploy/yaml.hpp"
#include "troupe/graph/cluster/tf_config.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe::deploy {
namespace {

using Json = nlohmann::ordered_json;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

KubernetesJob fashion() {
  KubernetesJob job;
  job.name = "fashion";
  job.image = "registry.example.com/troupe:0.1";
  job.program = {"troupe", "train", "--checkpoint_dir=/train_logs"};
  return job;
}

const Json* find(const std::vector<Json>& objects, const std::string& kind,
                 const std::string& name) {
  for (const Json& object : objects) {
    if (object["kind"] == kind && object["metadata"]["name"] == name) return &object;
  }
  return nullptr;
}

std::string env_value(const Json& stateful_set, const std::string& variable) {
  for (const Json& env : stateful_set["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (env["name"] == variable) {
      return env.contains("value") ? env["value"].get<std::string>() : env.dump();
    }
  }
  return "";
}

std::string unbase64(const std::string& text) {
  std::string out(text.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n) - std::count(text.begin(), text.end(), '='));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(yaml)

BOOST_AUTO_TEST_CASE(mappings_and_sequences_in_block_style) {
  Json value = {{"kind", "Service"},
                {"ports", Json::array({{{"name", "troupe"}, {"port", 2222}}})},
                {"args", Json::array({"train", Json::array({1, 2})})},
                {"empty", Json::object()},
                {"none", Json::array()}};
  BOOST_TEST(to_yaml(value) ==
             "kind: Service\n"
             "ports:\n"
             "  - name: troupe\n"
             "    port: 2222\n"
             "args:\n"
             "  - train\n"
             "  -\n"
             "    - 1\n"
             "    - 2\n"
             "empty: {}\n"
             "none: []\n");
}

BOOST_AUTO_TEST_CASE(strings_that_could_be_misread_are_quoted) {
  Json value = {{"plain", "apps.kubernetes.io/pod-index"},
                {"no", "no"},
                {"size", "10Gi"},
                {"flag", "--epochs=1"},
                {"colon", "a: b"},
                {"empty", ""},
                {"true", true},
                {"number", 1.5},
                {"multi", "a\nb"},
                {"key with space", "On"}};
  BOOST_TEST(to_yaml(value) ==
             "plain: apps.kubernetes.io/pod-index\n"
             "\"no\": \"no\"\n"
             "size: \"10Gi\"\n"
             "flag: \"--epochs=1\"\n"
             "colon: \"a: b\"\n"
             "empty: \"\"\n"
             "\"true\": true\n"
             "number: 1.5\n"
             "multi: \"a\\nb\"\n"
             "\"key with space\": \"On\"\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(kubernetes_manifests_objects)

BOOST_AUTO_TEST_CASE(a_service_and_stateful_set_per_job_storage_and_tensorboard) {
  auto objects = value_or_throw(kubernetes_manifests(fashion()));
  std::vector<std::string> kinds;
  for (const Json& object : objects)
    kinds.push_back(object["kind"].get<std::string>() + " " +
                    object["metadata"]["name"].get<std::string>());
  BOOST_TEST(
      kinds == (std::vector<std::string>{
                   "PersistentVolumeClaim fashion-train-logs", "Service fashion-ps",
                   "StatefulSet fashion-ps", "Service fashion-worker", "StatefulSet fashion-worker",
                   "Deployment fashion-tensorboard", "Service fashion-tensorboard"}),
      boost::test_tools::per_element());
  const Json& workers = *find(objects, "StatefulSet", "fashion-worker");
  BOOST_TEST(workers["spec"]["replicas"] == 2);
  BOOST_TEST(workers["spec"]["serviceName"] == "fashion-worker");
  const Json& service = *find(objects, "Service", "fashion-worker");
  BOOST_TEST(service["spec"]["clusterIP"] == "None");
  BOOST_TEST(service["spec"]["publishNotReadyAddresses"] == true);
  BOOST_TEST(service["spec"]["selector"] == workers["spec"]["template"]["metadata"]["labels"]);
  const Json& claim = *find(objects, "PersistentVolumeClaim", "fashion-train-logs");
  BOOST_TEST(claim["spec"]["accessModes"][0] == "ReadWriteMany");
  BOOST_TEST(!claim["spec"].contains("storageClassName"));
  const Json& container = workers["spec"]["template"]["spec"]["containers"][0];
  BOOST_TEST(container["command"] ==
             Json::array({"troupe", "train", "--checkpoint_dir=/train_logs"}));
  BOOST_TEST(container["volumeMounts"][0]["mountPath"] == kTrainLogsPath);
}

// Kubernetes substitutes the pod's ordinal for $(POD_INDEX); TF_CONFIG is then what
// TensorFlow's own parser (and troupe's) reads, naming the pods' stable DNS names.
BOOST_AUTO_TEST_CASE(tf_config_comes_from_the_pods_ordinal) {
  auto objects = value_or_throw(kubernetes_manifests(fashion()));
  const Json& ps = *find(objects, "StatefulSet", "fashion-ps");
  BOOST_TEST(
      contains(env_value(ps, "POD_INDEX"), "metadata.labels['apps.kubernetes.io/pod-index']"));
  std::string tf_config = env_value(ps, "TF_CONFIG");
  BOOST_REQUIRE(contains(tf_config, "\"index\":$(POD_INDEX)"));
  tf_config.replace(tf_config.find("$(POD_INDEX)"), 12, "0");
  auto parsed = value_or_throw(TfConfig::parse(tf_config));
  BOOST_TEST(parsed.task_type == "ps");
  BOOST_TEST(parsed.task_index == 0);
  BOOST_TEST(value_or_throw(parsed.cluster.task_address("worker", 1)) ==
             "fashion-worker-1.fashion-worker:2222");
  BOOST_TEST(value_or_throw(parsed.cluster.task_address("ps", 0)) ==
             "fashion-ps-0.fashion-ps:2222");
}

BOOST_AUTO_TEST_CASE(tls_from_a_secret_the_key_readable_by_its_owner_only) {
  KubernetesJob job = fashion();
  job.credentials = TlsPem{"CA PEM", "CERT PEM", "KEY PEM"};
  auto objects = value_or_throw(kubernetes_manifests(job));
  const Json& secret = *find(objects, "Secret", "fashion-tls");
  BOOST_TEST(unbase64(secret["data"]["key.pem"]) == "KEY PEM");
  BOOST_TEST(unbase64(secret["data"]["ca.pem"]) == "CA PEM");
  const Json& ps = *find(objects, "StatefulSet", "fashion-ps");
  BOOST_TEST(env_value(ps, "TROUPE_TLS_KEY") == std::string(kTlsPath) + "/key.pem");
  const Json& volume = ps["spec"]["template"]["spec"]["volumes"][1];
  BOOST_TEST(volume["secret"]["secretName"] == "fashion-tls");
  BOOST_TEST(volume["secret"]["defaultMode"] == 0400);
  BOOST_TEST(env_value(ps, "TROUPE_INSECURE").empty());
}

BOOST_AUTO_TEST_CASE(insecure_without_ps_in_a_namespace_on_a_storage_class) {
  KubernetesJob job = fashion();
  job.insecure = true;
  job.ps = 0;
  job.namespace_ = "training";
  job.storage_class = "nfs-client";
  auto objects = value_or_throw(kubernetes_manifests(job));
  BOOST_TEST(find(objects, "StatefulSet", "fashion-ps") == nullptr);
  const Json& workers = *find(objects, "StatefulSet", "fashion-worker");
  BOOST_TEST(env_value(workers, "TROUPE_INSECURE") == "1");
  BOOST_TEST(!contains(env_value(workers, "TF_CONFIG"), "\"ps\""));
  BOOST_TEST(workers["spec"]["template"]["spec"]["volumes"].size() == 1u);
  for (const Json& object : objects)
    BOOST_TEST(object["metadata"]["namespace"] == "training");
  BOOST_TEST(find(objects, "PersistentVolumeClaim", "fashion-train-logs")
                 ->at("spec")["storageClassName"] == "nfs-client");
}

BOOST_AUTO_TEST_CASE(bad_input_names_the_flag_and_what_it_expects) {
  const std::vector<std::pair<std::function<void(KubernetesJob&)>, std::string>> cases = {
      {[](KubernetesJob& j) { j.name = "Fashion"; }, "--name='Fashion' (expected a DNS label"},
      {[](KubernetesJob& j) { j.name = std::string(41, 'a'); }, "at most 40 characters"},
      {[](KubernetesJob& j) { j.namespace_ = "a_b"; }, "--namespace='a_b'"},
      {[](KubernetesJob& j) { j.workers = 0; },
       "--ps=1 --workers=0 (expected ps >= 0, workers >= 1"},
      {[](KubernetesJob& j) { j.image = ""; }, "--image='' (expected an image reference"},
      {[](KubernetesJob& j) { j.tensorboard_image = "a b"; }, "--tensorboard_image='a b'"},
      {[](KubernetesJob& j) { j.port = 70000; }, "--port=70000 (expected 1..65535)"},
      {[](KubernetesJob& j) { j.health_port = 2222; },
       "--health_port=2222 (expected 1..65535 "
       "other than --port"},
      {[](KubernetesJob& j) { j.program.clear(); }, "no program after '--'"},
      {[](KubernetesJob& j) { j.storage = "ten"; }, "--storage='ten' (expected a size"},
      {[](KubernetesJob& j) { j.storage_class = "NFS!"; }, "--storage_class='NFS!'"},
  };
  for (const auto& [change, message] : cases) {
    KubernetesJob job = fashion();
    change(job);
    auto objects = kubernetes_manifests(job);
    BOOST_TEST(objects.status().code() == Code::kInvalidArgument, message);
    BOOST_TEST(contains(objects.status().message(), message), objects.status().message());
  }
}

BOOST_AUTO_TEST_CASE(the_command_prints_a_yaml_stream_and_refuses_bad_flags) {
  auto result = testing::run_process(
      {TROUPE_CLI, "k8s", "--name=fashion", "--image=troupe:0.1", "--make_credentials", "--",
       "troupe", "train", "--checkpoint_dir=/train_logs"},
      30000);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(contains(result.out, "---\napiVersion: v1\nkind: Secret\n"), result.out);
  BOOST_TEST(contains(result.out, "kind: StatefulSet"), result.out);
  BOOST_TEST(contains(result.out, "    - \"--checkpoint_dir=/train_logs\"\n"), result.out);
  auto missing = testing::run_process({TROUPE_CLI, "k8s", "--image=troupe:0.1", "--", "x"}, 30000);
  BOOST_TEST(missing.exit_code == 2);
  BOOST_TEST(contains(missing.out, "troupe k8s: --name is required"), missing.out);
  // Without --make_credentials the Secret must exist: stderr says so, stdout is the manifests.
  auto reminder =
      testing::run_process({TROUPE_CLI, "k8s", "--name=a", "--image=i", "--", "x"}, 30000);
  BOOST_TEST(reminder.exit_code == 0, reminder.out);
  BOOST_TEST(contains(reminder.out, "the tasks mount the Secret 'a-tls'"), reminder.out);
  auto both = testing::run_process(
      {TROUPE_CLI, "k8s", "--name=a", "--image=i", "--insecure", "--make_credentials", "--", "x"},
      30000);
  BOOST_TEST(both.exit_code == 2);
  BOOST_TEST(contains(both.out, "--insecure and --make_credentials: choose one"), both.out);
  // The output holds a private key: a file it is redirected to is the owner's only.
  const std::string file =
      std::filesystem::temp_directory_path() / ("k8s_test_" + std::to_string(::getpid()) + ".yaml");
  auto to_file = testing::run_process(
      {"/bin/sh", "-c",
       std::string(TROUPE_CLI) + " k8s --name=a --image=i --make_credentials -- x > " + file},
      30000);
  BOOST_TEST(to_file.exit_code == 0, to_file.out);
  const auto mode = std::filesystem::status(file).permissions() & std::filesystem::perms::all;
  BOOST_TEST(static_cast<int>(mode) == 0600);
  std::filesystem::remove(file);
  auto help = testing::run_process({TROUPE_CLI, "k8s", "--help"}, 30000);
  BOOST_TEST(help.exit_code == 0);
  BOOST_TEST(contains(help.out, "print the Kubernetes manifests of a troupe job"), help.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe::deploy
