// Where a node learns its cluster and its role, in TensorFlow's ways:
//   1. the seed's flags: --ps_hosts=h:p,h:p --worker_hosts=h:p,h:p --job_name=ps --task_index=0
//      (also --chief_hosts and --evaluator_hosts);
//   2. --cluster_file=cluster.json (a ClusterSpec as JSON, TF_CONFIG's "cluster" shape) with
//      --job_name and --task_index;
//   3. the TF_CONFIG environment variable, exactly as TensorFlow defines it.
// Flags win over TF_CONFIG. With none of them the node is a one-task cluster of its own.
#pragma once

#include "troupe/apps/cli/flags.hpp"
#include "troupe/graph/cluster/server_def.hpp"

namespace troupe::cli {

// Declares the flags above on `flags`.
void add_cluster_flags(FlagSet& flags);

// The ServerDef the flags or TF_CONFIG describe; nullopt if they describe none (no cluster
// flags, no TF_CONFIG). InvalidArgument naming the flag, file or TF_CONFIG field at fault.
StatusOr<std::optional<ServerDef>> server_def_from_flags(const FlagSet& flags);

}  // namespace troupe::cli
