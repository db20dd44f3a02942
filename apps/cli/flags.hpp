// FlagSet: TensorFlow-style command-line flags ("--name=value", "--name value", "--flag" for
// booleans), declared up front so a misspelt or malformed flag is a one-line error naming it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe::cli {

class FlagSet {
 public:
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

  // "  --name=<default>   help" lines.
  std::string usage() const;

  // Parses the arguments of `troupe <command>`, which takes flags only (and --help). Returns
  // the exit code when the command should end now — 2 after printing a one-line error, 0
  // after printing the help — or nullopt to go on.
  std::optional<int> parse_command_line(const std::string& command,
                                        const std::vector<std::string>& args);

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

  std::map<std::string, Flag> flags_;
  std::vector<std::string> positional_;
};

}  // namespace troupe::cli
