// Cluster and role from flags, a cluster file, or TF_CONFIG.
#include "troupe/apps/cli/cluster_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/ranges.h>

#include "troupe/graph/cluster/tf_config.hpp"

namespace troupe::cli {
namespace {

constexpr const char* kHostFlags[][2] = {
    {"ps_hosts", "ps"},
    {"worker_hosts", "worker"},
    {"chief_hosts", "chief"},
    {"evaluator_hosts", "evaluator"},
};

std::vector<std::string> split_hosts(const std::string& list) {
  std::vector<std::string> hosts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    hosts.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return hosts;
}

StatusOr<std::string> read_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    return errors::InvalidArgument(
        "--cluster_file: '{}' is a directory (expected a JSON file holding the cluster, as "
        "TF_CONFIG's \"cluster\")",
        path);
  }
  std::ifstream in(path);
  if (!in) {
    return errors::InvalidArgument("--cluster_file: cannot read '{}': {}", path,
                                   std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

void add_cluster_flags(FlagSet& flags) {
  for (const auto& [flag, job] : kHostFlags) {
    flags.add_string(flag, "", fmt::format("comma-separated host:port list of job '{}'", job));
  }
  flags.add_string("cluster_file", "", "a JSON file holding the cluster (TF_CONFIG's shape)");
  flags.add_string("job_name", "", "this task's job, e.g. ps or worker");
  flags.add_int("task_index", 0, "this task's index within its job");
}

StatusOr<std::optional<ServerDef>> server_def_from_flags(const FlagSet& flags) {
  ClusterSpec cluster;
  bool from_hosts = false;
  for (const auto& [flag, job] : kHostFlags) {
    if (!flags.was_set(flag)) continue;
    from_hosts = true;
    Status added = cluster.add_job(job, split_hosts(flags.get_string(flag)));
    if (!added.ok()) return added.with_context(fmt::format("--{}", flag));
  }
  bool from_file = flags.was_set("cluster_file");
  if (from_hosts && from_file) {
    return errors::InvalidArgument(
        "give the cluster either as --*_hosts flags or as --cluster_file, "
        "not both");
  }
  if (from_file) {
    TROUPE_ASSIGN_OR_RETURN(std::string text, read_file(flags.get_string("cluster_file")));
    auto parsed = ClusterSpec::from_json(text);
    if (!parsed.ok()) {
      return parsed.status().with_context(
          fmt::format("--cluster_file '{}'", flags.get_string("cluster_file")));
    }
    cluster = std::move(parsed).value();
  }
  if (flags.get_int("task_index") < 0 || flags.get_int("task_index") > INT32_MAX) {
    return errors::InvalidArgument("--task_index={} must be an index >= 0",
                                   flags.get_int("task_index"));
  }
  int index = static_cast<int>(flags.get_int("task_index"));
  if (from_hosts || from_file) {
    if (!flags.was_set("job_name")) {
      return errors::InvalidArgument("--job_name is required with a cluster (one of: {})",
                                     fmt::join(cluster.jobs(), ", "));
    }
    auto def = ServerDef::create(cluster, flags.get_string("job_name"), index);
    if (!def.ok()) return def.status().with_context("--job_name/--task_index");
    return std::optional<ServerDef>(std::move(def).value());
  }
  const char* env = std::getenv("TF_CONFIG");
  bool from_env = env != nullptr && !std::string(env).empty();
  for (const char* flag : {"job_name", "task_index"}) {
    if (!flags.was_set(flag)) continue;
    if (from_env) {
      return errors::InvalidArgument(
          "--{} given with TF_CONFIG, whose \"task\" names this task: drop the flag, or give "
          "the cluster as flags instead of TF_CONFIG",
          flag);
    }
    return errors::InvalidArgument(
        "--{} given without a cluster: add --ps_hosts/--worker_hosts, --cluster_file, or set "
        "TF_CONFIG",
        flag);
  }
  if (!from_env) return std::optional<ServerDef>();
  TROUPE_ASSIGN_OR_RETURN(TfConfig config, TfConfig::parse(env));
  TROUPE_ASSIGN_OR_RETURN(ServerDef def,
                          ServerDef::create(config.cluster, config.task_type, config.task_index));
  return std::optional<ServerDef>(std::move(def));
}

}  // namespace troupe::cli
