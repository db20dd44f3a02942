// word_count_node: `troupe node` with the counter role — the binary every machine of the
// cluster runs. It takes the same flags and TF_CONFIG as `troupe node`, e.g.
//
//   word_count_node --cluster_file=cluster.json --job_name=counter --task_index=0
#include <iostream>

#include <troupe/apps/cli/commands.hpp>

#include "word_count_role.hpp"

int main(int argc, char** argv) {
  if (troupe::Status status = word_count::register_word_count_role("counter"); !status.ok()) {
    std::cerr << "word_count_node: " << status.to_string() << "\n";
    return 1;
  }
  return troupe::cli::node_command({argv + 1, argv + argc});
}
