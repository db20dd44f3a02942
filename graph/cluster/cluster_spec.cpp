// ClusterSpec: validation, lookup, printing, and the wire and JSON forms.
#include "troupe/graph/cluster/cluster_spec.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/ranges.h>
#include <kj/exception.h>

#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/cluster/host_port.hpp"
#include "troupe/graph/cluster/json_parse.hpp"

namespace troupe {
namespace {

Status validate_job_name(std::string_view name) {
  if (is_valid_job_name(name)) return Status::OK();
  return errors::InvalidArgument(
      "invalid job name '{}': expected a non-empty name matching [A-Za-z][A-Za-z0-9_]*", name);
}

Status validate_task(std::string_view job, int index, std::string_view address) {
  if (index < 0) {
    return errors::InvalidArgument("job '{}': task index {} is negative (expected an index >= 0)",
                                   job, index);
  }
  auto host_port = parse_host_port(address);
  if (!host_port.ok())
    return host_port.status().with_context(fmt::format("job '{}' task {}", job, index));
  return Status::OK();
}

// Indices 0..n-1 exactly, so the job prints as a list.
bool is_dense(const ClusterSpec::Tasks& tasks) {
  return tasks.empty() ||
         (tasks.begin()->first == 0 && tasks.rbegin()->first == static_cast<int>(tasks.size()) - 1);
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& name : names)
    quoted.push_back(fmt::format("'{}'", name));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string text_of(capnp::Text::Reader text) {
  return std::string(text.begin(), text.end());
}

// A sparse-job key of from_json: a decimal number fitting an int.
std::optional<int> parse_index_key(std::string_view key) {
  if (key.empty() ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int value = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), value);
  if (ec != std::errc() || end != key.data() + key.size()) return std::nullopt;
  return value;
}

constexpr std::string_view kExpectedJob =
    "expected an array of \"host:port\" strings or an object mapping decimal task indices to "
    "\"host:port\" strings";

StatusOr<ClusterSpec::Tasks> tasks_from_json(const std::string& job, const nlohmann::json& value) {
  ClusterSpec::Tasks tasks;
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const auto& address = value[i];
      if (!address.is_string()) {
        return errors::InvalidArgument("job '{}' task {}: expected a \"host:port\" string, got {}",
                                       job, i, json_type_name(address));
      }
      tasks.emplace(static_cast<int>(i), address.get<std::string>());
    }
    return tasks;
  }
  if (!value.is_object()) {
    return errors::InvalidArgument("job '{}': {}, got {}", job, kExpectedJob,
                                   json_type_name(value));
  }
  std::map<int, std::string> key_of;  // index -> the key that named it
  for (const auto& [key, address] : value.items()) {
    auto index = parse_index_key(key);
    if (!index) {
      return errors::InvalidArgument(
          "job '{}': task index key '{}' is not a non-negative decimal integer (expected keys "
          "such as \"0\", \"3\")",
          job, key);
    }
    if (!address.is_string()) {
      return errors::InvalidArgument(
          "job '{}' task {} (key '{}'): expected a \"host:port\" string, got {}", job, *index, key,
          json_type_name(address));
    }
    if (auto [it, inserted] = key_of.emplace(*index, key); !inserted) {
      return errors::InvalidArgument(
          "job '{}': task index keys '{}' and '{}' both name task {} (expected each index once)",
          job, it->second, key, *index);
    }
    tasks.emplace(*index, address.get<std::string>());
  }
  return tasks;
}

}  // namespace

StatusOr<ClusterSpec> ClusterSpec::create(
    const std::map<std::string, std::vector<std::string>>& jobs) {
  ClusterSpec spec;
  for (const auto& [name, addresses] : jobs)
    TROUPE_RETURN_IF_ERROR(spec.add_job(name, addresses));
  return spec;
}

StatusOr<ClusterSpec> ClusterSpec::create_sparse(const std::map<std::string, Tasks>& jobs) {
  ClusterSpec spec;
  for (const auto& [name, tasks] : jobs)
    TROUPE_RETURN_IF_ERROR(spec.add_sparse_job(name, tasks));
  return spec;
}

Status ClusterSpec::add_job(std::string name, std::vector<std::string> addresses) {
  Tasks tasks;
  for (size_t i = 0; i < addresses.size(); ++i)
    tasks.emplace(static_cast<int>(i), std::move(addresses[i]));
  return add_sparse_job(std::move(name), std::move(tasks));
}

Status ClusterSpec::add_sparse_job(std::string name, Tasks tasks) {
  TROUPE_RETURN_IF_ERROR(validate_job_name(name));
  if (has_job(name)) {
    return errors::InvalidArgument("job '{}' is already in the cluster (expected each job once)",
                                   name);
  }
  for (const auto& [index, address] : tasks)
    TROUPE_RETURN_IF_ERROR(validate_task(name, index, address));
  // Copy on write, always: other ClusterSpecs, on other threads, may share the map (and a
  // use count of 1 seen here would not order their last reads before these writes).
  auto jobs = jobs_ == nullptr ? std::make_shared<std::map<std::string, Tasks>>()
                               : std::make_shared<std::map<std::string, Tasks>>(*jobs_);
  jobs->emplace(std::move(name), std::move(tasks));
  jobs_ = std::move(jobs);
  return Status::OK();
}

const std::map<std::string, ClusterSpec::Tasks>& ClusterSpec::as_map() const {
  static const std::map<std::string, Tasks> kNoJobs;
  return jobs_ == nullptr ? kNoJobs : *jobs_;
}

bool ClusterSpec::operator==(const ClusterSpec& other) const {
  return jobs_ == other.jobs_ || as_map() == other.as_map();
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> names;
  for (const auto& [name, tasks] : as_map())
    names.push_back(name);
  return names;
}

bool ClusterSpec::has_job(std::string_view job) const {
  return as_map().contains(std::string(job));
}

StatusOr<const ClusterSpec::Tasks*> ClusterSpec::find_job(std::string_view job) const {
  auto it = as_map().find(std::string(job));
  if (it == as_map().end()) {
    return errors::InvalidArgument("unknown job '{}': the cluster's jobs are {}", job,
                                   quoted_list(jobs()));
  }
  return &it->second;
}

StatusOr<ClusterSpec::Tasks> ClusterSpec::tasks(std::string_view job) const {
  TROUPE_ASSIGN_OR_RETURN(const Tasks* tasks, find_job(job));
  return *tasks;
}

StatusOr<int> ClusterSpec::num_tasks(std::string_view job) const {
  TROUPE_ASSIGN_OR_RETURN(const Tasks* tasks, find_job(job));
  return static_cast<int>(tasks->size());
}

StatusOr<std::vector<int>> ClusterSpec::task_indices(std::string_view job) const {
  TROUPE_ASSIGN_OR_RETURN(const Tasks* tasks, find_job(job));
  std::vector<int> indices;
  indices.reserve(tasks->size());
  for (const auto& [index, address] : *tasks)
    indices.push_back(index);
  return indices;
}

StatusOr<std::string> ClusterSpec::task_address(std::string_view job, int task_index) const {
  TROUPE_ASSIGN_OR_RETURN(const Tasks* tasks, find_job(job));
  auto it = tasks->find(task_index);
  if (it == tasks->end()) {
    std::vector<int> indices;
    for (const auto& [index, address] : *tasks)
      indices.push_back(index);
    return errors::InvalidArgument("job '{}' has no task {}: its task indices are [{}]", job,
                                   task_index, fmt::join(indices, ", "));
  }
  return it->second;
}

StatusOr<std::vector<std::optional<std::string>>> ClusterSpec::job_tasks(
    std::string_view job) const {
  TROUPE_ASSIGN_OR_RETURN(const Tasks* tasks, find_job(job));
  std::vector<std::optional<std::string>> out;
  if (tasks->empty()) return out;
  out.resize(static_cast<size_t>(tasks->rbegin()->first) + 1);
  for (const auto& [index, address] : *tasks)
    out[index] = address;
  return out;
}

std::string ClusterSpec::to_string() const {
  std::vector<std::string> jobs;
  for (const auto& [name, tasks] : as_map()) {
    std::vector<std::string> entries;
    for (const auto& [index, address] : tasks) {
      entries.push_back(is_dense(tasks) ? fmt::format("'{}'", address)
                                        : fmt::format("{}: '{}'", index, address));
    }
    const char* open = is_dense(tasks) ? "[" : "{";
    const char* close = is_dense(tasks) ? "]" : "}";
    jobs.push_back(fmt::format("'{}': {}{}{}", name, open, fmt::join(entries, ", "), close));
  }
  return fmt::format("ClusterSpec({{{}}})", fmt::join(jobs, ", "));
}

void ClusterSpec::to_wire(wire::ClusterDef::Builder out) const {
  auto jobs = out.initJobs(static_cast<unsigned>(as_map().size()));
  unsigned j = 0;
  for (const auto& [name, tasks] : as_map()) {
    auto job = jobs[j++];
    job.setName(name);
    auto entries = job.initTasks(static_cast<unsigned>(tasks.size()));
    unsigned t = 0;
    for (const auto& [index, address] : tasks) {
      auto entry = entries[t++];
      entry.setIndex(index);
      entry.setAddress(address);
    }
  }
}

StatusOr<ClusterSpec> ClusterSpec::from_wire(wire::ClusterDef::Reader in) {
  try {
    ClusterSpec spec;
    for (auto job : in.getJobs()) {
      std::string name = text_of(job.getName());
      if (spec.has_job(name)) {
        return errors::InvalidArgument(
            "ClusterDef: job '{}' appears twice (expected each job once)", name);
      }
      Tasks tasks;
      for (auto task : job.getTasks()) {
        if (!tasks.emplace(task.getIndex(), text_of(task.getAddress())).second) {
          return errors::InvalidArgument(
              "ClusterDef: job '{}' lists task {} twice (expected each task index once)", name,
              task.getIndex());
        }
      }
      Status added = spec.add_sparse_job(std::move(name), std::move(tasks));
      if (!added.ok()) return added.with_context("ClusterDef");
    }
    return spec;
  } catch (const kj::Exception& e) {
    return errors::InvalidArgument("malformed ClusterDef message: {}", e.getDescription().cStr());
  }
}

StatusOr<ClusterSpec> ClusterSpec::from_json(std::string_view json) {
  auto parsed = parse_json_strict(json);
  if (!parsed.ok()) return parsed.status().with_context("cluster");
  const nlohmann::json& value = *parsed;
  if (!value.is_object()) {
    return errors::InvalidArgument(
        "cluster: expected an object mapping job names to their tasks, got {}",
        json_type_name(value));
  }
  ClusterSpec spec;
  for (const auto& [name, tasks_value] : value.items()) {
    auto tasks = tasks_from_json(name, tasks_value);
    if (!tasks.ok()) return tasks.status().with_context("cluster");
    Status added = spec.add_sparse_job(name, std::move(tasks).value());
    if (!added.ok()) return added.with_context("cluster");
  }
  return spec;
}

std::string ClusterSpec::to_json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, tasks] : as_map()) {
    nlohmann::ordered_json job =
        is_dense(tasks) ? nlohmann::ordered_json::array() : nlohmann::ordered_json::object();
    for (const auto& [index, address] : tasks) {
      if (is_dense(tasks)) {
        job.push_back(address);
      } else {
        job[std::to_string(index)] = address;
      }
    }
    out[name] = std::move(job);
  }
  return out.dump();
}

std::ostream& operator<<(std::ostream& os, const ClusterSpec& cluster) {
  return os << cluster.to_string();
}

}  // namespace troupe
