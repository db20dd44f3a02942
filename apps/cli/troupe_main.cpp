// The `troupe` command-line tool: one binary, one subcommand per job.
//
//   troupe data       write a data set as TFRecord files of Examples
//   troupe hello      run the hello/matmul example on a local server
//   troupe k8s        print a job's Kubernetes manifests
//   troupe launch     run a program once per task of a local ps/worker cluster
//   troupe node       run one task of a cluster
//   troupe sim        run a whole cluster in one process
//   troupe train      the Fashion-MNIST trainer
//   troupe version    print the version
//   troupe help       list the subcommands, or show one's help (troupe help node)
#include <iostream>
#include <map>
#include <string>

#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/cli/metrics_role.hpp"
#include "troupe/graph/core/status.hpp"

namespace {

using Run = int (*)(const troupe::cli::Args&);

Run find_command(const std::string& name) {
  static const std::map<std::string, Run> table = {
      {"data", troupe::cli::data_command},   {"hello", troupe::cli::hello_command},
      {"k8s", troupe::cli::k8s_command},     {"launch", troupe::cli::launch_command},
      {"node", troupe::cli::node_command},   {"sim", troupe::cli::sim_command},
      {"train", troupe::cli::train_command},
  };
  auto it = table.find(name);
  return it != table.end() ? it->second : nullptr;
}

void print_usage(std::ostream& out) {
  out << "usage: troupe <command> [arguments]\n\ncommands:\n";
  for (const troupe::cli::CommandHelp& help : troupe::cli::all_command_help()) {
    out << "  " << help.command << std::string(10 - std::min<size_t>(help.command.size(), 9), ' ')
        << help.summary << "\n";
  }
  out << "  version   print the version\n  help      show this list, or a command's help (troupe "
         "help node)\n\n'troupe <command> --help' shows a command's flags.\n";
}

int unknown_command(const std::string& name) {
  std::cerr << "troupe: unknown command '" << name << "'\n\n";
  print_usage(std::cerr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  std::string name = argv[1];
  troupe::cli::Args args(argv + 2, argv + argc);
  if (name == "help" || name == "--help" || name == "-h") {
    if (args.empty()) {
      print_usage(std::cout);
      return 0;
    }
    // troupe help CMD: CMD's own help.
    name = args[0];
    if (find_command(name) == nullptr && name != "version") return unknown_command(name);
    args = {"--help"};
  }
  if (name == "version" || name == "--version") {
    if (troupe::cli::FlagSet::asks_for_help(args)) {
      std::cout << "troupe version: print the version\n\nusage: troupe version\n\n  -h, --help"
                   "  show this help\n\nexample:\n  troupe version\n";
      return 0;
    }
    if (!args.empty()) {
      std::cerr << "troupe version: unexpected argument '" << args[0] << "'\n";
      return 2;
    }
    std::cout << "troupe " << TROUPE_VERSION << "\n";
    return 0;
  }
  Run run = find_command(name);
  if (run == nullptr) return unknown_command(name);
  // The example role: tasks of job "metrics" run the metrics aggregator (docs/roles.md).
  if (troupe::Status status = troupe::register_metrics_role("metrics"); !status.ok()) {
    std::cerr << "troupe: " << status.to_string() << "\n";
    return 1;
  }
  return run(args);
}
