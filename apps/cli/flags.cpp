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

bool FlagSet::asks_for_help(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help" || arg == "--help=true") return true;
  }
  return false;
}

std::optional<int> FlagSet::parse_command_line(const std::vector<std::string>& args) {
  if (asks_for_help(args)) {
    std::cout << help();
    return 0;
  }
  // Declared so that --help=false parses; not listed.
  if (flags_.count("help") == 0) add_bool("help", false, "show this help");
  Status parsed = parse(args);
  if (parsed.ok() && !positional_.empty()) {
    parsed = errors::InvalidArgument("unexpected argument '{}'", positional_[0]);
  }
  if (!parsed.ok()) {
    std::cerr << "troupe " << help_.command << ": " << parsed.message() << "\n";
    return 2;
  }
  return std::nullopt;
}

std::string FlagSet::usage() const {
  // Help text starts in this column and wraps at kWidth; a longer flag puts it on the next line.
  constexpr size_t kHelpColumn = 35;
  constexpr size_t kWidth = 100;
  std::string out;
  auto line = [&](const std::string& head, const std::string& text) {
    out += head.size() < kHelpColumn ? head + std::string(kHelpColumn - head.size(), ' ')
                                     : head + "\n" + std::string(kHelpColumn, ' ');
    size_t column = kHelpColumn;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find(' ', start);
      if (end == std::string::npos) end = text.size();
      size_t length = end - start;
      if (column > kHelpColumn && column + 1 + length > kWidth) {
        out += "\n" + std::string(kHelpColumn, ' ');
        column = kHelpColumn;
      } else if (column > kHelpColumn) {
        out += ' ';
        ++column;
      }
      out.append(text, start, length);
      column += length;
      start = end + 1;
    }
    out += "\n";
  };
  for (const auto& [name, flag] : flags_) {
    if (name == "help") continue;
    line(fmt::format("  --{}={}", name, flag.default_value.empty() ? "\"\"" : flag.default_value),
         flag.help);
  }
  line("  -h, --help", "show this help");
  return out;
}

std::string FlagSet::help() const {
  std::string out;
  if (!help_.summary.empty()) out += "troupe " + help_.command + ": " + help_.summary + "\n\n";
  out += "usage: " + (help_.usage.empty() ? "troupe " + help_.command + " [flags]" : help_.usage);
  out += "\n\nflags:\n" + usage();
  if (!help_.examples.empty()) {
    out += help_.examples.size() == 1 ? "\nexample:\n" : "\nexamples:\n";
    for (const std::string& example : help_.examples)
      out += "  " + example + "\n";
  }
  return out;
}

}  // namespace troupe::cli
