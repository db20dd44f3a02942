// The subcommands of the `troupe` command-line tool. Each takes the arguments after its name
// and returns the process exit code (0 success, 1 failure, 2 bad usage); none throws. `node`
// and `sim` serve the roles registered in the process (actors/role_registry.hpp): the `troupe`
// tool registers the example "metrics" role; a program of your own registers its roles and
// calls node_command() from its main (docs/roles.md).
#pragma once

#include <string>
#include <vector>

namespace troupe::cli {

using Args = std::vector<std::string>;

// `troupe data`: a data set written as TFRecord files of tf.train.Example records.
int data_command(const Args& args);

// `troupe hello`: the seed's first example through a local server's actors.
int hello_command(const Args& args);

// `troupe k8s`: the Kubernetes manifests of a troupe job, as YAML on stdout.
int k8s_command(const Args& args);

// `troupe launch`: a local ps/worker cluster as processes, one per task, running a program.
int launch_command(const Args& args);

// `troupe node`: one task of a cluster, serving until SIGTERM/SIGINT. After a clean stop it ends
// the process with exit code 0 (std::_Exit after flushing output) instead of returning.
int node_command(const Args& args);

// `troupe sim`: a whole ps/worker cluster in this process.
int sim_command(const Args& args);

// `troupe train`: the Fashion-MNIST trainer (a ps or worker task, or all in one process).
int train_command(const Args& args);

}  // namespace troupe::cli
