// FlagSet: parsing and validation of command-line flags.
#include "troupe/apps/cli/flags.hpp"

#include <charconv>
#include <iostream>

#include <fmt/format.h>

namespace troupe::cli {

void FlagSet::add_string(std::string name, std::string default_value, std::string help) {
  flags_[std::move(name)] = Flag{Kind::kString, default_value, std::move(help), default_value};
}

void FlagSet::add_int(std::string name, int64_t default_value, std::string help) {
  flags_[std::move(name)] = Flag{Kind::kInt, std::to_string(default_value), std::move(help),
                                 std::to_string(default_value)};
}

void FlagSet::add_bool(std::string name, bool default_value, std::string help) {
  const char* text = default_value ? "true" : "false";
  flags_[std::move(name)] = Flag{Kind::kBool, text, std::move(help), text};
}

Status FlagSet::assign(const std::string& name, Flag& flag, const std::string& value) {
  if (flag.kind == Kind::kInt) {
    int64_t parsed = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return errors::InvalidArgument("flag --{}: '{}' is not an integer", name, value);
    }
  } else if (flag.kind == Kind::kBool && value != "true" && value != "false") {
    return errors::InvalidArgument("flag --{}: '{}' is not true or false", name, value);
  }
  flag.value = value;
  flag.set = true;
  return Status::OK();
}

Status FlagSet::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional_.insert(positional_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      positional_.push_back(arg);
      continue;
    }
    std::string body = arg.substr(2);
    auto eq = body.find('=');
    std::string name = body.substr(0, eq);
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      std::string known;
      for (const auto& [n, f] : flags_)
        known += (known.empty() ? "--" : ", --") + n;
      return errors::InvalidArgument("unknown flag --{} (known flags: {})", name, known);
    }
    Flag& flag = it->second;
    if (eq != std::string::npos) {
      TROUPE_RETURN_IF_ERROR(assign(name, flag, body.substr(eq + 1)));
    } else if (flag.kind == Kind::kBool) {
      TROUPE_RETURN_IF_ERROR(assign(name, flag, "true"));
    } else if (i + 1 < args.size()) {
      TROUPE_RETURN_IF_ERROR(assign(name, flag, args[++i]));
    } else {
      return errors::InvalidArgument("flag --{} needs a value", name);
    }
  }
  return Status::OK();
}

std::string FlagSet::get_string(const std::string& name) const {
  return flags_.at(name).value;
}

int64_t FlagSet::get_int(const std::string& name) const {
  return std::stoll(flags_.at(name).value);
}

bool FlagSet::get_bool(const std::string& name) const {
  return flags_.at(name).value == "true";
}

bool FlagSet::was_set(const std::string& name) const {
  return flags_.at(name).set;
}

std::optional<int> FlagSet::parse_command_line(const std::string& command,
                                               const std::vector<std::string>& args) {
  if (flags_.count("help") == 0) add_bool("help", false, "show this help");
  Status parsed = parse(args);
  if (parsed.ok() && !positional_.empty()) {
    parsed = errors::InvalidArgument("unexpected argument '{}'", positional_[0]);
  }
  if (!parsed.ok()) {
    std::cerr << "troupe " << command << ": " << parsed.message() << "\n";
    return 2;
  }
  if (get_bool("help")) {
    std::cout << "usage: troupe " << command << " [flags]\n\n" << usage();
    return 0;
  }
  return std::nullopt;
}

std::string FlagSet::usage() const {
  std::string out;
  for (const auto& [name, flag] : flags_) {
    std::string head =
        fmt::format("  --{}={}", name, flag.default_value.empty() ? "\"\"" : flag.default_value);
    out += fmt::format("{:<34} {}\n", head, flag.help);
  }
  return out;
}

}  // namespace troupe::cli
