// The metrics role: the aggregator actor, its registration, and the client helper.
#include "troupe/apps/cli/metrics_role.hpp"

#include <algorithm>
#include <map>

#include <caf/all.hpp>

#include "troupe/actors/blocking_request.hpp"
#include "troupe/actors/role_registry.hpp"
#include "troupe/actors/runtime.hpp"
#include "troupe/actors/server.hpp"

namespace troupe {
namespace {

struct AggregatorState {
  std::string task;  // the task it runs on
  std::map<std::string, MetricSummary> metrics;
  static inline const char* name = "troupe.metrics";
};

caf::behavior aggregator(caf::stateful_actor<AggregatorState>* self, const std::string& task) {
  self->state.task = task;
  return {
      [=](report_metric_atom, const MetricReport& report) {
        MetricSummary& s = self->state.metrics[report.name];
        if (s.count == 0) {
          s.name = report.name;
          s.min = s.max = report.value;
        }
        s.count += 1;
        s.mean += (report.value - s.mean) / static_cast<double>(s.count);
        s.min = std::min(s.min, report.value);
        s.max = std::max(s.max, report.value);
        if (report.step >= s.last_step) {
          s.last = report.value;
          s.last_step = report.step;
        }
      },
      [=](get_summaries_atom) {
        std::vector<MetricSummary> out;
        for (const auto& [name, summary] : self->state.metrics)
          out.push_back(summary);
        return out;
      },
  };
}

}  // namespace

Status register_metrics_role(const std::string& job_name) {
  TROUPE_RETURN_IF_ERROR(Runtime::add_message_types([](caf::actor_system_config& config) {
    config.add_message_type<MetricReport>("troupe.MetricReport");
    config.add_message_type<MetricSummary>("troupe.MetricSummary");
  }));
  return RoleRegistry::global().register_role(job_name, [](const RoleContext& context) {
    return context.parent->spawn<caf::linked>(aggregator, context.server_def.task_name());
  });
}

StatusOr<MetricsClient> MetricsClient::connect(const Server& server, const std::string& job,
                                               int index) {
  TROUPE_ASSIGN_OR_RETURN(caf::actor role, server.find_role(job, index));
  return MetricsClient(server, std::move(role));
}

void MetricsClient::report(const std::string& name, int64_t step, double value) const {
  caf::anon_send(role_, report_metric_atom::value, MetricReport{name, step, value});
}

StatusOr<std::vector<MetricSummary>> MetricsClient::summaries() const {
  return blocking_request<std::vector<MetricSummary>>(
      server_->system(), role_, caf::duration(std::chrono::seconds(30)),
      "reading the metrics summaries", get_summaries_atom::value);
}

}  // namespace troupe
