// FlagSet: TensorFlow-style command-line flags ("--name=value", "--name value", "--flag" for
// booleans), declared up front so a misspelt or malformed flag is a one-line error naming it,
// and a command's help (`troupe CMD --help` or `-h`): what it does, its usage, its flags with
// their defaults, and examples.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe::cli {

// What `troupe <command> --help` says besides the flags (apps/cli/command_help.cpp).
struct CommandHelp {
  std::string command;                // "node"
  std::string summary;                // one line: what the command does
  std::string usage;                  // "troupe node [flags]"
  std::vector<std::string> examples;  // command lines, each may end with "  # comment"
};

// The help of `troupe <command>`; nullptr for a command the tool does not have.
const CommandHelp* find_command_help(const std::string& command);
// Every command's help, in the order `troupe help` lists them.
const std::vector<CommandHelp>& all_command_help();

class FlagSet {
 public:
  FlagSet() = default;
  // A command's flags; `help` is what --help prints around them.
  explicit FlagSet(CommandHelp help) : help_(std::move(help)) {}

  // Declares a flag with its default and a help line.
  void add_string(std::string name, std::string default_value, std::string help);
  void add_int(std::string name, int64_t default_value, std::string help);
  void add_bool(std::string name, bool default_value, std::string help);

  // Parses `args`; arguments after "--" and non-flag arguments are left in positional().
  // InvalidArgument for an unknown flag (listing the known ones), a missing value, or a value
  // of the wrong kind (naming the flag and what it expects).
  Status parse(const std::vector<std::string>& args);

  std::string get_string(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  // Whether the flag was given on the command line (not just defaulted).
  bool was_set(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // "  --name=<default>   help" lines (a long one puts its help on the next line).
  std::string usage() const;
  // The whole help: summary, usage, flags, examples.
  std::string help() const;

  // Whether `args` ask for help (-h, --help or --help=true before any "--").
  static bool asks_for_help(const std::vector<std::string>& args);

  // Parses the arguments of a command that takes flags only. Returns the exit code when the
  // command should end now — 0 after printing the help (-h or --help, whatever else is given),
  // 2 after printing a one-line error — or nullopt to go on.
  std::optional<int> parse_command_line(const std::vector<std::string>& args);

 private:
  enum class Kind { kString, kInt, kBool };
  struct Flag {
    Kind kind;
    std::string value;
    std::string help;
    std::string default_value;
    bool set = false;
  };
  Status assign(const std::string& name, Flag& flag, const std::string& value);

  CommandHelp help_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> positional_;
};

}  // namespace troupe::cli
