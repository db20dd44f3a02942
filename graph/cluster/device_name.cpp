// DeviceName: parsing, printing, compatibility and merging of device names.
#include "troupe/graph/cluster/device_name.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/ranges.h>

namespace troupe {
namespace {

constexpr std::string_view kExample = "\"/job:worker/replica:0/task:1/device:CPU:0\"";

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return is_lower(c) || (c >= 'A' && c <= 'Z');
}

std::string to_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (is_lower(c)) c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// A device type: a letter, then letters, digits and '_'.
bool is_valid_device_type(std::string_view type) {
  return !type.empty() && is_alpha(type.front()) &&
         std::all_of(type.begin(), type.end(),
                     [](char c) { return is_alpha(c) || is_digit(c) || c == '_'; });
}

// "*" leaves `out` unset; a decimal number fitting an int sets it. False for anything else.
bool parse_number_or_star(std::string_view text, std::optional<int>& out) {
  if (text == "*") {
    out.reset();
    return true;
  }
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit)) return false;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

// Parses component after component, remembering which ones were seen (even as "*").
class Parser {
 public:
  explicit Parser(std::string_view name) : name_(name) {}

  StatusOr<DeviceName> parse() {
    if (name_.empty() || name_ == "/") return DeviceName{};
    if (name_.front() != '/') {
      return errors::InvalidArgument(
          "invalid device name '{}': expected it to start with '/' (as in {})", name_, kExample);
    }
    std::string_view rest = name_.substr(1);
    while (true) {
      size_t slash = rest.find('/');
      TROUPE_RETURN_IF_ERROR(parse_component(rest.substr(0, slash)));
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
    return result_;
  }

 private:
  Status bad(std::string_view part, std::string_view expected) const {
    return errors::InvalidArgument("invalid device name '{}': bad component '{}': expected {}",
                                   name_, part, expected);
  }

  Status mark_seen(bool& seen, std::string_view part, std::string_view field) {
    if (seen) {
      return errors::InvalidArgument(
          "invalid device name '{}': component '{}' gives the {} a second time (expected each of "
          "job, replica, task and device at most once)",
          name_, part, field);
    }
    seen = true;
    return Status::OK();
  }

  Status parse_component(std::string_view part) {
    if (part.empty()) {
      return errors::InvalidArgument(
          "invalid device name '{}': empty component between '/'s (expected a name such as {})",
          name_, kExample);
    }
    size_t colon = part.find(':');
    std::string_view key = part.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : part.substr(colon + 1);
    bool has_value = colon != std::string_view::npos;
    if (key == "job") {
      TROUPE_RETURN_IF_ERROR(mark_seen(seen_job_, part, "job"));
      if (!has_value || (value != "*" && !is_valid_job_name(value))) {
        return bad(part, "\"job:<name>\" with a name matching [A-Za-z][A-Za-z0-9_]*, or \"job:*\"");
      }
      if (value != "*") result_.job = std::string(value);
      return Status::OK();
    }
    if (key == "replica" || key == "task") {
      bool is_task = key == "task";
      TROUPE_RETURN_IF_ERROR(mark_seen(is_task ? seen_task_ : seen_replica_, part, key));
      std::optional<int>& field = is_task ? result_.task : result_.replica;
      if (!has_value || !parse_number_or_star(value, field)) {
        return bad(part, is_task
                             ? "\"task:<n>\" with a non-negative integer n, or \"task:*\""
                             : "\"replica:<n>\" with a non-negative integer n, or \"replica:*\"");
      }
      return Status::OK();
    }
    if (key == "device") {
      TROUPE_RETURN_IF_ERROR(mark_seen(seen_device_, part, "device"));
      constexpr std::string_view kExpected =
          "\"device:<TYPE>:<n>\" with a type such as CPU or GPU (a letter, then letters, digits "
          "or '_') and a non-negative integer n, \"device:<TYPE>\", or '*' for either";
      if (!has_value) return bad(part, kExpected);
      size_t id_colon = value.find(':');
      std::string_view type = value.substr(0, id_colon);
      if (type != "*" && !is_valid_device_type(type)) return bad(part, kExpected);
      if (id_colon != std::string_view::npos) {
        if (!parse_number_or_star(value.substr(id_colon + 1), result_.id)) {
          return bad(part, kExpected);
        }
      }
      if (type != "*") result_.type = to_upper(type);
      return Status::OK();
    }
    std::string legacy_type = to_upper(key);
    if (legacy_type == "CPU" || legacy_type == "GPU") {
      TROUPE_RETURN_IF_ERROR(mark_seen(seen_device_, part, "device"));
      if (!has_value || !parse_number_or_star(value, result_.id)) {
        return bad(part,
                   fmt::format("the legacy form \"{}:<n>\" with a non-negative integer n", key));
      }
      result_.type = std::move(legacy_type);
      return Status::OK();
    }
    return bad(part,
               "one of \"job:<name>\", \"replica:<n>\", \"task:<n>\", \"device:<TYPE>:<n>\", or "
               "the legacy \"cpu:<n>\" or \"gpu:<n>\"");
  }

  std::string_view name_;
  DeviceName result_;
  bool seen_job_ = false;
  bool seen_replica_ = false;
  bool seen_task_ = false;
  bool seen_device_ = false;
};

template <class T>
void override_field(std::optional<T>& target, const std::optional<T>& source) {
  if (source) target = source;
}

template <class T>
bool fields_compatible(const std::optional<T>& a, const std::optional<T>& b) {
  return !a || !b || *a == *b;
}

template <class T>
bool field_matches(const std::optional<T>& pattern, const std::optional<T>& concrete) {
  return !pattern || pattern == concrete;
}

}  // namespace

bool is_valid_job_name(std::string_view name) {
  auto is_letter = [](char c) { return is_lower(c) || (c >= 'A' && c <= 'Z'); };
  return !name.empty() && is_letter(name.front()) &&
         std::all_of(name.begin(), name.end(),
                     [&](char c) { return is_letter(c) || is_digit(c) || c == '_'; });
}

StatusOr<DeviceName> DeviceName::parse(std::string_view name) {
  return Parser(name).parse();
}

std::string DeviceName::full(std::string job, int replica, int task, std::string type, int id) {
  return fmt::format("/job:{}/replica:{}/task:{}/device:{}:{}", job, replica, task, to_upper(type),
                     id);
}

std::string DeviceName::task_name(std::string_view job, int task) {
  return fmt::format("/job:{}/replica:0/task:{}", job, task);
}

std::string DeviceName::task_prefix() const {
  std::string out;
  if (job) out += fmt::format("/job:{}", *job);
  if (replica) out += fmt::format("/replica:{}", *replica);
  if (task) out += fmt::format("/task:{}", *task);
  return out;
}

std::string DeviceName::to_string() const {
  std::string out = task_prefix();
  if (type && id) {
    out += fmt::format("/device:{}:{}", *type, *id);
  } else if (type) {
    out += fmt::format("/device:{}:*", *type);
  } else if (id) {
    out += fmt::format("/device:*:{}", *id);
  }
  return out;
}

bool DeviceName::is_fully_specified() const {
  return job && replica && task && type && id;
}

bool DeviceName::is_compatible_with(const DeviceName& other) const {
  return fields_compatible(job, other.job) && fields_compatible(replica, other.replica) &&
         fields_compatible(task, other.task) && fields_compatible(type, other.type) &&
         fields_compatible(id, other.id);
}

bool DeviceName::matches(const DeviceName& concrete) const {
  return field_matches(job, concrete.job) && field_matches(replica, concrete.replica) &&
         field_matches(task, concrete.task) && field_matches(type, concrete.type) &&
         field_matches(id, concrete.id);
}

StatusOr<DeviceName> DeviceName::merge(const DeviceName& base, const DeviceName& override_) {
  std::vector<std::string> conflicts;
  auto check = [&](const auto& a, const auto& b, std::string_view field) {
    if (!fields_compatible(a, b)) conflicts.push_back(fmt::format("{} {} vs {}", field, *a, *b));
  };
  check(base.job, override_.job, "job");
  check(base.replica, override_.replica, "replica");
  check(base.task, override_.task, "task");
  check(base.type, override_.type, "device type");
  check(base.id, override_.id, "device id");
  if (!conflicts.empty()) {
    return errors::InvalidArgument(
        "cannot merge device names '{}' and '{}': they conflict in {} (expected no field set "
        "differently in both)",
        base.to_string(), override_.to_string(), fmt::join(conflicts, ", "));
  }
  return merge_overriding(base, override_);
}

DeviceName DeviceName::merge_overriding(const DeviceName& base, const DeviceName& override_) {
  DeviceName out = base;
  override_field(out.job, override_.job);
  override_field(out.replica, override_.replica);
  override_field(out.task, override_.task);
  override_field(out.type, override_.type);
  override_field(out.id, override_.id);
  return out;
}

DeviceName DeviceName::with_defaults(const DeviceName& defaults) const {
  return merge_overriding(defaults, *this);
}

std::ostream& operator<<(std::ostream& os, const DeviceName& name) {
  return os << "DeviceName('" << name.to_string() << "')";
}

}  // namespace troupe
