// TfConfig: reading TF_CONFIG's "cluster" and "task".
#include "troupe/graph/cluster/tf_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include <fmt/ranges.h>

#include "troupe/graph/cluster/json_parse.hpp"

namespace troupe {

StatusOr<TfConfig> TfConfig::parse(std::string_view json) {
  auto parsed = parse_json_strict(json);
  if (!parsed.ok()) return parsed.status().with_context("TF_CONFIG");
  const nlohmann::json& root = *parsed;
  if (!root.is_object()) {
    return errors::InvalidArgument(
        "TF_CONFIG: expected a JSON object with \"cluster\" and \"task\", got {}",
        json_type_name(root));
  }

  auto cluster_it = root.find("cluster");
  if (cluster_it == root.end()) {
    return errors::InvalidArgument(
        "TF_CONFIG: missing \"cluster\" (expected an object mapping job names to tasks)");
  }
  if (!cluster_it->is_object()) {
    return errors::InvalidArgument(
        "TF_CONFIG: \"cluster\" must be an object mapping job names to tasks, got {}",
        json_type_name(*cluster_it));
  }
  TfConfig config;
  auto cluster = ClusterSpec::from_json(cluster_it->dump());
  if (!cluster.ok()) return cluster.status().with_context("TF_CONFIG");
  config.cluster = std::move(cluster).value();

  auto task_it = root.find("task");
  if (task_it == root.end()) {
    return errors::InvalidArgument(
        "TF_CONFIG: missing \"task\" (expected {{\"type\": <job name>, \"index\": <task index>}})");
  }
  if (!task_it->is_object()) {
    return errors::InvalidArgument(
        "TF_CONFIG: \"task\" must be an object {{\"type\": <job name>, \"index\": <task index>}}, "
        "got {}",
        json_type_name(*task_it));
  }
  auto type_it = task_it->find("type");
  if (type_it == task_it->end() || !type_it->is_string()) {
    return errors::InvalidArgument(
        "TF_CONFIG: task.type must be a string naming a job, got {}",
        type_it == task_it->end() ? std::string_view("nothing") : json_type_name(*type_it));
  }
  auto index_it = task_it->find("index");
  if (index_it == task_it->end() || !index_it->is_number_integer()) {
    return errors::InvalidArgument(
        "TF_CONFIG: task.index must be an integer, got {}",
        index_it == task_it->end() ? std::string_view("nothing") : json_type_name(*index_it));
  }
  config.task_type = type_it->get<std::string>();
  if (!config.cluster.has_job(config.task_type)) {
    std::vector<std::string> quoted;
    for (const auto& job : config.cluster.jobs())
      quoted.push_back(fmt::format("'{}'", job));
    return errors::InvalidArgument(
        "TF_CONFIG: task.type '{}' is not a job of the cluster (expected one of [{}])",
        config.task_type, fmt::join(quoted, ", "));
  }
  std::vector<int> indices = config.cluster.task_indices(config.task_type).value();
  bool fits_int = index_it->is_number_unsigned()
                      ? index_it->get<uint64_t>() <= uint64_t{std::numeric_limits<int>::max()}
                      : index_it->get<int64_t>() >= std::numeric_limits<int>::min() &&
                            index_it->get<int64_t>() <= std::numeric_limits<int>::max();
  if (!fits_int || !std::binary_search(indices.begin(), indices.end(), index_it->get<int64_t>())) {
    return errors::InvalidArgument(
        "TF_CONFIG: task.index {} is not a task of job '{}' (expected one of its task indices "
        "[{}])",
        index_it->dump(), config.task_type, fmt::join(indices, ", "));
  }
  config.task_index = index_it->get<int>();
  return config;
}

StatusOr<TfConfig> TfConfig::from_environment() {
  const char* value = std::getenv("TF_CONFIG");
  if (value == nullptr || *value == '\0') {
    return errors::NotFound(
        "TF_CONFIG is {} (expected the environment variable to hold the cluster and task as "
        "JSON)",
        value == nullptr ? "not set" : "empty");
  }
  return parse(value);
}

}  // namespace troupe
