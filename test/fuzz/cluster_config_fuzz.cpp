// Fuzz target: the JSON a node reads at start-up — a cluster file (ClusterSpec::from_json) and
// TF_CONFIG (TfConfig::parse). Anything may be rejected; nothing may crash, and an accepted
// cluster must survive its own JSON.
#include <string_view>

#include "troupe/graph/cluster/cluster_spec.hpp"
#include "troupe/graph/cluster/tf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto cluster = troupe::ClusterSpec::from_json(json);
  if (cluster.ok()) {
    auto again = troupe::ClusterSpec::from_json(cluster->to_json());
    if (!again.ok() || !(*again == *cluster)) __builtin_trap();
  }
  (void)troupe::TfConfig::parse(json);
  return 0;
}
