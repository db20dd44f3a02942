// kubernetes_manifests: the objects as JSON values, checked inputs first.
#include "troupe/apps/deploy/kubernetes_manifests.hpp"

#include <fmt/core.h>
#include <openssl/evp.h>

#include <regex>

namespace troupe::deploy {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxTasks = 1000;
constexpr int kTensorBoardPort = 6006;

std::string base64(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Status check(const KubernetesJob& job) {
  static const std::regex label("[a-z]([-a-z0-9]*[a-z0-9])?");
  static const std::regex subdomain("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  static const std::regex quantity("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");
  if (!std::regex_match(job.name, label) || job.name.size() > 40) {
    return errors::InvalidArgument(
        "--name='{}' (expected a DNS label of at most 40 characters: lower-case letters, digits "
        "and '-', starting with a letter, e.g. 'fashion')",
        job.name);
  }
  if (!job.namespace_.empty() &&
      (!std::regex_match(job.namespace_, label) || job.namespace_.size() > 63)) {
    return errors::InvalidArgument("--namespace='{}' (expected a DNS label, e.g. 'training')",
                                   job.namespace_);
  }
  if (job.ps < 0 || job.workers < 1 || job.ps + job.workers > kMaxTasks) {
    return errors::InvalidArgument(
        "--ps={} --workers={} (expected ps >= 0, workers >= 1 and at most {} tasks)", job.ps,
        job.workers, kMaxTasks);
  }
  for (const auto& [flag, image] :
       {std::pair{"image", &job.image}, std::pair{"tensorboard_image", &job.tensorboard_image}}) {
    if (image->empty() || image->find_first_of(" \t\n") != std::string::npos) {
      return errors::InvalidArgument(
          "--{}='{}' (expected an image reference, e.g. registry.example.com/troupe:0.1)", flag,
          *image);
    }
  }
  if (job.port < 1 || job.port > 65535) {
    return errors::InvalidArgument("--port={} (expected 1..65535)", job.port);
  }
  if (job.health_port < 0 || job.health_port > 65535 || job.health_port == job.port) {
    return errors::InvalidArgument(
        "--health_port={} (expected 1..65535 other than --port, or 0 for no probes)",
        job.health_port);
  }
  if (job.program.empty()) {
    return errors::InvalidArgument(
        "no program after '--' (expected the command every task runs, e.g. -- troupe train "
        "--checkpoint_dir=/train_logs)");
  }
  if (!std::regex_match(job.storage, quantity)) {
    return errors::InvalidArgument("--storage='{}' (expected a size such as 10Gi or 500Mi)",
                                   job.storage);
  }
  if (!job.storage_class.empty() &&
      (!std::regex_match(job.storage_class, subdomain) || job.storage_class.size() > 253)) {
    return errors::InvalidArgument("--storage_class='{}' (expected a storage class's name)",
                                   job.storage_class);
  }
  return Status::OK();
}

Json metadata(const KubernetesJob& job, const std::string& name, Json labels) {
  Json meta = {{"name", name}};
  if (!job.namespace_.empty()) meta["namespace"] = job.namespace_;
  meta["labels"] = std::move(labels);
  return meta;
}

Json job_labels(const KubernetesJob& job, const std::string& task_type) {
  return {{"app.kubernetes.io/name", "troupe"},
          {"app.kubernetes.io/instance", job.name},
          {"troupe/task-type", task_type}};
}

// {"ps": ["NAME-ps-0.NAME-ps:2222", ...], "worker": [...]}: the stable names of the pods.
Json cluster_of(const KubernetesJob& job) {
  Json cluster = Json::object();
  for (const auto& [type, count] : {std::pair{"ps", job.ps}, std::pair{"worker", job.workers}}) {
    if (count == 0) continue;
    Json tasks = Json::array();
    for (int i = 0; i < count; ++i)
      tasks.push_back(fmt::format("{0}-{1}-{2}.{0}-{1}:{3}", job.name, type, i, job.port));
    cluster[type] = std::move(tasks);
  }
  return cluster;
}

Json headless_service(const KubernetesJob& job, const std::string& type) {
  const std::string name = job.name + "-" + type;
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", metadata(job, name, job_labels(job, type))},
          {"spec",
           {{"clusterIP", "None"},
            // Tasks find each other while they start, before any is ready.
            {"publishNotReadyAddresses", true},
            {"selector", job_labels(job, type)},
            {"ports", Json::array({{{"name", "troupe"}, {"port", job.port}}})}}}};
}

Json task_environment(const KubernetesJob& job, const std::string& type) {
  Json tf_config = {{"cluster", cluster_of(job)}, {"task", {{"type", type}, {"index", 0}}}};
  // Kubernetes puts the pod's ordinal in for $(POD_INDEX), defined before TF_CONFIG.
  std::string text = tf_config.dump();
  const std::string index = "\"index\":0";
  text.replace(text.rfind(index), index.size(), "\"index\":$(POD_INDEX)");
  Json env = Json::array(
      {{{"name", "POD_INDEX"},
        {"valueFrom",
         {{"fieldRef", {{"fieldPath", "metadata.labels['apps.kubernetes.io/pod-index']"}}}}}},
       {{"name", "TF_CONFIG"}, {"value", text}}});
  if (job.health_port != 0) {
    env.push_back({{"name", "TROUPE_HEALTH_PORT"}, {"value", std::to_string(job.health_port)}});
  }
  if (job.insecure) {
    env.push_back({{"name", "TROUPE_INSECURE"}, {"value", "1"}});
  } else {
    for (const auto& [variable, file] :
         {std::pair{"TROUPE_TLS_CERT", "cert.pem"}, std::pair{"TROUPE_TLS_KEY", "key.pem"},
          std::pair{"TROUPE_TLS_CA", "ca.pem"}}) {
      env.push_back({{"name", variable}, {"value", fmt::format("{}/{}", kTlsPath, file)}});
    }
  }
  return env;
}

Json stateful_set(const KubernetesJob& job, const std::string& type, int replicas) {
  const std::string name = job.name + "-" + type;
  Json mounts = Json::array({{{"name", "train-logs"}, {"mountPath", kTrainLogsPath}}});
  Json volumes =
      Json::array({{{"name", "train-logs"},
                    {"persistentVolumeClaim", {{"claimName", job.name + "-train-logs"}}}}});
  if (!job.insecure) {
    mounts.push_back({{"name", "tls"}, {"mountPath", kTlsPath}, {"readOnly", true}});
    // 0400: troupe refuses a private key that group or others can read.
    volumes.push_back(
        {{"name", "tls"}, {"secret", {{"secretName", job.name + "-tls"}, {"defaultMode", 0400}}}});
  }
  Json ports = Json::array({{{"name", "troupe"}, {"containerPort", job.port}}});
  if (job.health_port != 0) {
    ports.push_back({{"name", "health"}, {"containerPort", job.health_port}});
  }
  Json container = {{"name", "task"},
                    {"image", job.image},
                    {"command", job.program},
                    {"ports", std::move(ports)},
                    {"env", task_environment(job, type)},
                    {"volumeMounts", std::move(mounts)}};
  if (job.health_port != 0) {
    // A task whose actors stop answering is restarted; one that is stopping is not ready. A
    // worker loads its data before it serves: the first probes wait for that.
    container["livenessProbe"] = {{"httpGet", {{"path", "/healthz"}, {"port", "health"}}},
                                  {"initialDelaySeconds", 15},
                                  {"periodSeconds", 10},
                                  {"timeoutSeconds", 3},
                                  {"failureThreshold", 3}};
    container["readinessProbe"] = {{"httpGet", {{"path", "/readyz"}, {"port", "health"}}},
                                   {"periodSeconds", 5},
                                   {"timeoutSeconds", 3}};
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata", metadata(job, name, job_labels(job, type))},
          {"spec",
           {{"serviceName", name},
            {"replicas", replicas},
            // Every task starts at once: a worker waits for the ps by itself.
            {"podManagementPolicy", "Parallel"},
            {"selector", {{"matchLabels", job_labels(job, type)}}},
            {"template",
             {{"metadata", {{"labels", job_labels(job, type)}}},
              {"spec",
               {// A task that exits is started again at the same name; the job recovers (a ps from
                // the chief's last checkpoint), as under troupe launch --max_restarts.
                {"restartPolicy", "Always"},
                {"containers", Json::array({std::move(container)})},
                {"volumes", std::move(volumes)}}}}}}}};
}

Json train_logs_claim(const KubernetesJob& job) {
  Json spec = {{"accessModes", Json::array({"ReadWriteMany"})},
               {"resources", {{"requests", {{"storage", job.storage}}}}}};
  if (!job.storage_class.empty()) spec["storageClassName"] = job.storage_class;
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", metadata(job, job.name + "-train-logs", job_labels(job, "storage"))},
          {"spec", std::move(spec)}};
}

Json tls_secret(const KubernetesJob& job, const TlsPem& pem) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", metadata(job, job.name + "-tls", job_labels(job, "credentials"))},
          {"type", "Opaque"},
          {"data",
           {{"ca.pem", base64(pem.ca)},
            {"cert.pem", base64(pem.certificate)},
            {"key.pem", base64(pem.key)}}}};
}

Json tensorboard_deployment(const KubernetesJob& job) {
  Json labels = job_labels(job, "tensorboard");
  Json container = {
      {"name", "tensorboard"},
      {"image", job.tensorboard_image},
      {"command", Json::array({"tensorboard", fmt::format("--logdir={}", kTrainLogsPath),
                               "--bind_all", fmt::format("--port={}", kTensorBoardPort)})},
      {"ports", Json::array({{{"name", "http"}, {"containerPort", kTensorBoardPort}}})},
      {"volumeMounts",
       Json::array({{{"name", "train-logs"}, {"mountPath", kTrainLogsPath}, {"readOnly", true}}})}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", metadata(job, job.name + "-tensorboard", labels)},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", labels}}},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"containers", Json::array({std::move(container)})},
                {"volumes", Json::array({{{"name", "train-logs"},
                                          {"persistentVolumeClaim",
                                           {{"claimName", job.name + "-train-logs"},
                                            {"readOnly", true}}}}})}}}}}}}};
}

Json tensorboard_service(const KubernetesJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", metadata(job, job.name + "-tensorboard", job_labels(job, "tensorboard"))},
          {"spec",
           {{"selector", job_labels(job, "tensorboard")},
            {"ports", Json::array({{{"name", "http"},
                                    {"port", kTensorBoardPort},
                                    {"targetPort", kTensorBoardPort}}})}}}};
}

}  // namespace

StatusOr<std::vector<Json>> kubernetes_manifests(const KubernetesJob& job) {
  TROUPE_RETURN_IF_ERROR(check(job));
  std::vector<Json> objects;
  if (!job.insecure && job.credentials) objects.push_back(tls_secret(job, *job.credentials));
  objects.push_back(train_logs_claim(job));
  for (const auto& [type, count] : {std::pair{"ps", job.ps}, std::pair{"worker", job.workers}}) {
    if (count == 0) continue;
    objects.push_back(headless_service(job, type));
    objects.push_back(stateful_set(job, type, count));
  }
  objects.push_back(tensorboard_deployment(job));
  objects.push_back(tensorboard_service(job));
  return objects;
}

}  // namespace troupe::deploy
