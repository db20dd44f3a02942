// The Kubernetes objects of a troupe job (`troupe k8s`, docs/deploy.md).
//
// For each job of the cluster (ps, worker): a headless Service, so that task i of job J of
// NAME is the stable DNS name NAME-J-i.NAME-J, and a StatefulSet whose pods build TF_CONFIG
// from their ordinal (the pod-index label, Kubernetes 1.28 and later). A PersistentVolumeClaim
// (ReadWriteMany, the seeds' NFS) holds checkpoints and event files at /train_logs in every
// task; a TensorBoard Deployment and Service read it. Each task serves its health checks on
// `health_port` (actors/health_endpoint.hpp), which its liveness and readiness probes ask. With
// TLS (unless `insecure`), every task mounts the Secret NAME-tls (ca.pem, cert.pem, key.pem) at
// /etc/troupe/tls, owner-read-only as troupe requires of a key; the Secret is one of the objects
// when `credentials` are given, else the user creates it (docs/deploy.md).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe::deploy {

struct TlsPem {
  std::string ca, certificate, key;  // PEM text
};

struct KubernetesJob {
  std::string name;        // a DNS label of at most 40 characters: every object's name prefix
  std::string namespace_;  // empty: the namespace the objects are applied in
  int ps = 1, workers = 2;
  std::string image;                 // the troupe image the tasks run
  int port = 2222;                   // every task's port (its address in the cluster)
  int health_port = 8080;            // the probes' port (TROUPE_HEALTH_PORT); 0: no probes
  std::vector<std::string> program;  // the command each task runs, e.g. troupe train ...
  std::string storage = "10Gi";      // the claim's size
  std::string storage_class;         // empty: the cluster's default class
  std::string tensorboard_image = "tensorflow/tensorflow:2.15.0";
  bool insecure = false;
  std::optional<TlsPem> credentials;
};

// Where every task mounts the shared volume, and the TLS Secret.
inline constexpr const char* kTrainLogsPath = "/train_logs";
inline constexpr const char* kTlsPath = "/etc/troupe/tls";

// The objects in the order to apply them. InvalidArgument naming the field and what it expects
// for a bad name, namespace, count, image, port, program, size or storage class.
StatusOr<std::vector<nlohmann::ordered_json>> kubernetes_manifests(const KubernetesJob& job);

}  // namespace troupe::deploy
