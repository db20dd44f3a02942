// TfConfig: the TF_CONFIG environment variable, as TensorFlow defines it.
//
//   TF_CONFIG='{"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"]},
//               "task": {"type": "worker", "index": 1}}'
//
// "cluster" is ClusterSpec::from_json's format (dense lists or sparse index -> address
// objects); "task" names this process's job and index. Other keys ("environment", "rpc_layer")
// are ignored, and "chief", "evaluator" and the like are ordinary jobs.
#pragma once

#include <string>
#include <string_view>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

struct TfConfig {
  ClusterSpec cluster;
  std::string task_type;  // a job of `cluster`
  int task_index = 0;     // a task index that job defines

  // InvalidArgument, with a message starting "TF_CONFIG: ", for invalid JSON, a missing or
  // invalid "cluster", a missing "task", a task.type that is not a string or not a job of the
  // cluster, or a task.index that is not an integer or not defined in that job.
  static StatusOr<TfConfig> parse(std::string_view json);

  // parse(getenv("TF_CONFIG")); NotFound if the variable is unset or empty.
  static StatusOr<TfConfig> from_environment();

  bool operator==(const TfConfig& other) const = default;
};

}  // namespace troupe
