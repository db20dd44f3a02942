// The `troupe` command-line tool: one binary, one subcommand per job.
//
//   troupe hello      run the hello/matmul example on a local server
//   troupe launch     run a program once per task of a local ps/worker cluster
//   troupe node       run one task of a cluster
//   troupe sim        run a whole cluster in one process
//   troupe train      the Fashion-MNIST trainer
//   troupe version    print the version
//   troupe help       list the subcommands
#include <iostream>
#include <map>
#include <string>

#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/metrics_role.hpp"
#include "troupe/graph/core/status.hpp"

namespace {

struct Command {
  int (*run)(const troupe::cli::Args&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"hello", {troupe::cli::hello_command, "run the hello/matmul example on a local server"}},
      {"launch", {troupe::cli::launch_command, "run a program once per task of a local cluster"}},
      {"node", {troupe::cli::node_command, "run one task of a cluster until SIGTERM/SIGINT"}},
      {"sim", {troupe::cli::sim_command, "run a whole ps/worker cluster in this process"}},
      {"train", {troupe::cli::train_command, "train the Fashion-MNIST classifier (ps or worker)"}},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: troupe <command> [arguments]\n\ncommands:\n";
  for (const auto& [name, command] : commands()) {
    out << "  " << name << std::string(10 - std::min<size_t>(name.size(), 9), ' ')
        << command.summary << "\n";
  }
  out << "  version   print the version\n  help      show this list\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    print_usage(std::cout);
    return 0;
  }
  if (name == "version" || name == "--version") {
    std::cout << "troupe " << TROUPE_VERSION << "\n";
    return 0;
  }
  auto it = commands().find(name);
  if (it == commands().end()) {
    std::cerr << "troupe: unknown command '" << name << "'\n\n";
    print_usage(std::cerr);
    return 2;
  }
  // The example role: tasks of job "metrics" run the metrics aggregator (docs/roles.md).
  if (troupe::Status status = troupe::register_metrics_role("metrics"); !status.ok()) {
    std::cerr << "troupe: " << status.to_string() << "\n";
    return 1;
  }
  return it->second.run(troupe::cli::Args(argv + 2, argv + argc));
}
