// OpDefBuilder: parsing of argument and attribute specs.
#include "troupe/graph/op_def.hpp"

#include <cctype>
#include <charconv>

namespace troupe {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

Status bad_spec(std::string_view op, std::string_view spec, std::string_view why) {
  return errors::InvalidArgument("op '{}': bad spec '{}': {}", op, spec, why);
}

// Appends what a spec parsed to, or keeps its error in `first_error` unless one is there.
template <class T>
void append_or_keep_error(StatusOr<T> parsed, std::vector<T>& items, Status& first_error) {
  if (parsed.ok()) {
    items.push_back(std::move(parsed).value());
  } else if (first_error.ok()) {
    first_error = parsed.status();
  }
}

// Splits "name: rest" into its two parts.
StatusOr<std::pair<std::string_view, std::string_view>> split_name(std::string_view op,
                                                                   std::string_view spec) {
  auto colon = spec.find(':');
  if (colon == std::string_view::npos) return bad_spec(op, spec, "expected 'name: ...'");
  auto name = trim(spec.substr(0, colon));
  if (!is_identifier(name)) return bad_spec(op, spec, "the name is not an identifier");
  return std::pair{name, trim(spec.substr(colon + 1))};
}

StatusOr<ArgDef> parse_arg(std::string_view op, std::string_view spec) {
  TROUPE_ASSIGN_OR_RETURN(auto split, split_name(op, spec));
  auto [name, rest] = split;
  ArgDef arg;
  arg.name = std::string(name);
  if (rest.starts_with("Ref(") && rest.ends_with(")")) {
    arg.is_ref = true;
    rest = trim(rest.substr(4, rest.size() - 5));
  }
  if (auto star = rest.find('*'); star != std::string_view::npos) {
    arg.number_attr = std::string(trim(rest.substr(0, star)));
    rest = trim(rest.substr(star + 1));
    if (!is_identifier(arg.number_attr)) return bad_spec(op, spec, "bad list length attribute");
  }
  if (auto dtype = parse_dtype(rest); dtype.ok()) {
    arg.fixed_type = *dtype;
  } else if (is_identifier(rest)) {
    arg.type_attr = std::string(rest);
  } else {
    return bad_spec(op, spec, "expected a dtype or a type attribute");
  }
  return arg;
}

std::vector<std::string_view> split_list(std::string_view s) {
  std::vector<std::string_view> items;
  while (!s.empty()) {
    auto comma = s.find(',');
    items.push_back(trim(s.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  if (items.size() == 1 && items[0].empty()) items.clear();
  return items;
}

std::optional<AttrType> parse_attr_type(std::string_view s) {
  static const std::pair<std::string_view, AttrType> kTypes[] = {
      {"int", AttrType::kInt},
      {"float", AttrType::kFloat},
      {"bool", AttrType::kBool},
      {"string", AttrType::kString},
      {"type", AttrType::kType},
      {"shape", AttrType::kShape},
      {"tensor", AttrType::kTensor},
      {"list(int)", AttrType::kListInt},
      {"list(float)", AttrType::kListFloat},
      {"list(bool)", AttrType::kListBool},
      {"list(string)", AttrType::kListString},
      {"list(type)", AttrType::kListType},
      {"list(shape)", AttrType::kListShape},
  };
  for (const auto& [name, type] : kTypes) {
    if (s == name) return type;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<AttrValue> parse_default(AttrType type, std::string_view s) {
  switch (type) {
    case AttrType::kInt:
      if (auto v = parse_int(s)) return AttrValue(*v);
      return std::nullopt;
    case AttrType::kFloat:
      try {
        return AttrValue(std::stof(std::string(s)));
      } catch (...) {
        return std::nullopt;
      }
    case AttrType::kBool:
      if (s == "true") return AttrValue(true);
      if (s == "false") return AttrValue(false);
      return std::nullopt;
    case AttrType::kString:
      if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
        return AttrValue(std::string(s.substr(1, s.size() - 2)));
      }
      return std::nullopt;
    case AttrType::kType:
      if (auto t = parse_dtype(s); t.ok()) return AttrValue(*t);
      return std::nullopt;
    case AttrType::kShape:
      if (s == "<unknown>") return AttrValue(PartialShape::unknown());
      [[fallthrough]];
    case AttrType::kListInt: {
      if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
      std::vector<int64_t> values;
      for (auto item : split_list(s.substr(1, s.size() - 2))) {
        auto v = parse_int(item);
        if (!v) return std::nullopt;
        values.push_back(*v);
      }
      if (type == AttrType::kShape) return AttrValue(PartialShape(values));
      return AttrValue(values);
    }
    case AttrType::kListType:
      if (s == "[]") return AttrValue(std::vector<DataType>{});
      return std::nullopt;
    case AttrType::kListShape:
      if (s == "[]") return AttrValue(std::vector<PartialShape>{});
      return std::nullopt;
    case AttrType::kListFloat:
      if (s == "[]") return AttrValue(std::vector<float>{});
      return std::nullopt;
    case AttrType::kListString:
      if (s == "[]") return AttrValue(std::vector<std::string>{});
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

const AttrDef* OpDef::find_attr(std::string_view attr_name) const {
  for (const auto& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) {
  def_.name = std::move(name);
}

OpDefBuilder& OpDefBuilder::input(std::string_view spec) {
  append_or_keep_error(parse_arg(def_.name, spec), def_.inputs, status_);
  return *this;
}

OpDefBuilder& OpDefBuilder::output(std::string_view spec) {
  append_or_keep_error(parse_arg(def_.name, spec), def_.outputs, status_);
  return *this;
}

OpDefBuilder& OpDefBuilder::attr(std::string_view spec) {
  append_or_keep_error(parse_attr(spec), def_.attrs, status_);
  return *this;
}

StatusOr<AttrDef> OpDefBuilder::parse_attr(std::string_view spec) const {
  TROUPE_ASSIGN_OR_RETURN(auto split, split_name(def_.name, spec));
  auto [name, rest] = split;
  AttrDef attr;
  attr.name = std::string(name);
  std::string_view default_text;
  size_t eq = rest.find('=');
  while (eq != std::string_view::npos && eq > 0 && rest[eq - 1] == '>')
    eq = rest.find('=', eq + 1);
  if (eq != std::string_view::npos) {
    default_text = trim(rest.substr(eq + 1));
    rest = trim(rest.substr(0, eq));
  }
  if (rest.starts_with("{") && rest.ends_with("}")) {
    attr.type = AttrType::kType;
    for (auto item : split_list(rest.substr(1, rest.size() - 2))) {
      auto t = parse_dtype(item);
      if (!t.ok()) return bad_spec(def_.name, spec, "unknown dtype in the allowed set");
      attr.allowed_types.push_back(*t);
    }
  } else if (rest.starts_with("int") && rest.find(">=") != std::string_view::npos) {
    attr.type = AttrType::kInt;
    auto bound = parse_int(trim(rest.substr(rest.find(">=") + 2)));
    if (!bound || trim(rest.substr(0, rest.find(">="))) != "int") {
      return bad_spec(def_.name, spec, "expected 'int >= n'");
    }
    attr.minimum = *bound;
  } else if (auto type = parse_attr_type(rest)) {
    attr.type = *type;
  } else {
    return bad_spec(def_.name, spec, "unknown attribute kind");
  }
  if (!default_text.empty()) {
    attr.default_value = parse_default(attr.type, default_text);
    if (!attr.default_value) return bad_spec(def_.name, spec, "cannot parse the default value");
  }
  return attr;
}

OpDefBuilder& OpDefBuilder::stateful() {
  def_.is_stateful = true;
  return *this;
}

OpDefBuilder& OpDefBuilder::shape_fn(ShapeFn fn) {
  def_.shape_fn = std::move(fn);
  return *this;
}

StatusOr<OpDef> OpDefBuilder::build() const {
  TROUPE_RETURN_IF_ERROR(status_);
  OpDef def = def_;
  auto check_args = [&](std::vector<ArgDef>& args) -> Status {
    for (auto& arg : args) {
      if (!arg.type_attr.empty()) {
        const AttrDef* a = def.find_attr(arg.type_attr);
        if (a != nullptr && a->type == AttrType::kListType && arg.number_attr.empty()) {
          arg.type_list_attr = std::move(arg.type_attr);
          arg.type_attr.clear();
        } else if (a == nullptr || a->type != AttrType::kType) {
          return errors::Internal("op '{}': argument '{}' names '{}', which is not a type attr",
                                  def.name, arg.name, arg.type_attr);
        }
      }
      if (!arg.number_attr.empty()) {
        const AttrDef* a = def.find_attr(arg.number_attr);
        if (a == nullptr || a->type != AttrType::kInt) {
          return errors::Internal("op '{}': argument '{}' names '{}', which is not an int attr",
                                  def.name, arg.name, arg.number_attr);
        }
      }
    }
    return Status::OK();
  };
  TROUPE_RETURN_IF_ERROR(check_args(def.inputs));
  TROUPE_RETURN_IF_ERROR(check_args(def.outputs));
  if (!def.shape_fn) return errors::Internal("op '{}' has no shape function", def.name);
  return def;
}

}  // namespace troupe
