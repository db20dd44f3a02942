// The "metrics" role: an example of a custom role. Tasks of the job it is registered for run a
// metrics aggregator beside their server; any task reports scalar metrics to it by task name,
// and anyone asks it for a summary per metric (count, mean, min, max, last value and step).
// docs/roles.md walks through it as a template for roles of your own.
//
// Protocol of the role actor:
//   (report_metric_atom, MetricReport)   (no reply)
//   (get_summaries_atom) -> std::vector<MetricSummary>   sorted by name
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class Server;

using report_metric_atom = caf::atom_constant<caf::atom("reportmet")>;
using get_summaries_atom = caf::atom_constant<caf::atom("summaries")>;

struct MetricReport {
  std::string name;
  int64_t step = 0;
  double value = 0;
};

struct MetricSummary {
  std::string name;
  int64_t count = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  double last = 0;
  int64_t last_step = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, MetricReport& x) {
  return f(caf::meta::type_name("MetricReport"), x.name, x.step, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, MetricSummary& x) {
  return f(caf::meta::type_name("MetricSummary"), x.name, x.count, x.mean, x.min, x.max, x.last,
           x.last_step);
}

// Registers the role for `job_name` and its message types. Call once per process, before any
// server or session starts (every process of the cluster must do it).
Status register_metrics_role(const std::string& job_name = "metrics");

// A task's view of a metrics role: report and read, by task name.
class MetricsClient {
 public:
  // The role of task (job, index) of `server`'s cluster.
  static StatusOr<MetricsClient> connect(const Server& server, const std::string& job = "metrics",
                                         int index = 0);
  // Fire and forget: the aggregator folds it into the metric's summary.
  void report(const std::string& name, int64_t step, double value) const;
  StatusOr<std::vector<MetricSummary>> summaries() const;

 private:
  MetricsClient(const Server& server, caf::actor role) : server_(&server), role_(std::move(role)) {}
  const Server* server_;
  caf::actor role_;
};

}  // namespace troupe
