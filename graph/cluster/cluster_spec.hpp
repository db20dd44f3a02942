// ClusterSpec: the jobs of a cluster and the "host:port" address of each task, with the
// semantics of TensorFlow's tf.train.ClusterSpec.
//
//   auto cluster = ClusterSpec::create({{"ps", {"ps0:2222"}}, {"worker", {"w0:2222", "w1:2222"}}});
//   cluster->task_address("worker", 1);  // "w1:2222"
//
// A job is dense (tasks 0..n-1, from a list of addresses) or sparse (any non-negative indices,
// holes allowed). Jobs and tasks are kept ordered, so printing and the wire form are
// deterministic. Every way in (create, add_job, from_wire, from_json) validates: job names match
// [A-Za-z][A-Za-z0-9_]*, task indices are >= 0, addresses are "host:port"
// (graph/cluster/host_port.hpp). A job with no tasks is allowed, as in TensorFlow.
//
// Copies are cheap: they share one immutable map of jobs (copy on write), so the tasks of a
// large simulated cluster hold one description between them, not one each. add_job replaces
// the map: references from as_map() taken before it may dangle after it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/schema/cluster.capnp.h"

namespace troupe {

class ClusterSpec {
 public:
  using Tasks = std::map<int, std::string>;  // task index -> "host:port"

  // The empty cluster: no jobs.
  ClusterSpec() = default;

  // Dense jobs: job name -> addresses of tasks 0..n-1.
  static StatusOr<ClusterSpec> create(const std::map<std::string, std::vector<std::string>>& jobs);
  // Sparse jobs: job name -> (task index -> address).
  static StatusOr<ClusterSpec> create_sparse(const std::map<std::string, Tasks>& jobs);

  // Adds a job; on error the spec is unchanged. InvalidArgument for a bad or duplicate job name,
  // a negative task index or a bad address.
  Status add_job(std::string name, std::vector<std::string> addresses);
  Status add_sparse_job(std::string name, Tasks tasks);

  // Job names, sorted.
  std::vector<std::string> jobs() const;
  bool has_job(std::string_view job) const;
  // No jobs at all (a cluster with one job of zero tasks is not empty).
  bool empty() const { return jobs_ == nullptr || jobs_->empty(); }

  // The following are InvalidArgument for an unknown job, naming it and listing the jobs.
  // The number of defined tasks (holes of a sparse job do not count).
  StatusOr<int> num_tasks(std::string_view job) const;
  // Defined task indices, sorted.
  StatusOr<std::vector<int>> task_indices(std::string_view job) const;
  // Also InvalidArgument for an index the job does not define, listing the indices it does.
  StatusOr<std::string> task_address(std::string_view job, int task_index) const;
  // Addresses of tasks 0..max_index, with std::nullopt for holes of a sparse job.
  StatusOr<std::vector<std::optional<std::string>>> job_tasks(std::string_view job) const;
  // The tasks of `job` by index.
  StatusOr<Tasks> tasks(std::string_view job) const;
  // Every job's tasks by index (TensorFlow's as_dict).
  const std::map<std::string, Tasks>& as_map() const;

  // Equal iff the same jobs with the same index -> address maps: task order matters, and a
  // dense job equals the sparse job with indices 0..n-1.
  bool operator==(const ClusterSpec& other) const;

  // TensorFlow's repr: "ClusterSpec({'ps': ['ps0:2222'], 'worker': {1: 'w1:2222'}})". A job is
  // printed as a list iff its indices are exactly 0..n-1, else as an index -> address dict.
  std::string to_string() const;

  // The Cap'n Proto ClusterDef (schema/cluster.capnp): jobs by name, tasks by index.
  void to_wire(wire::ClusterDef::Builder out) const;
  // Validates like create_sparse, and rejects a job or task index given twice. Malformed
  // messages are InvalidArgument.
  static StatusOr<ClusterSpec> from_wire(wire::ClusterDef::Reader in);

  // The "cluster" object of TF_CONFIG: job -> ["host:port", ...] (dense) or
  // job -> {"<index>": "host:port", ...} (sparse; keys are decimal strings). InvalidArgument
  // for invalid JSON, a key given twice, or a value of the wrong type, naming the job or key.
  static StatusOr<ClusterSpec> from_json(std::string_view json);
  // Dense jobs as arrays, sparse jobs as objects keyed by index; from_json reads it back.
  std::string to_json() const;

 private:
  // The tasks of `job`, without copying them; InvalidArgument naming it for an unknown job.
  StatusOr<const Tasks*> find_job(std::string_view job) const;

  // Null for the empty cluster. Never changed: add_sparse_job makes a new one.
  std::shared_ptr<const std::map<std::string, Tasks>> jobs_;
};

std::ostream& operator<<(std::ostream& os, const ClusterSpec& cluster);

}  // namespace troupe
