// NodeBuilder: attribute inference from inputs, literal materialisation, the scope's colocation
// attribute and device, graph insertion.
#include "troupe/graph/node_builder.hpp"

#include <algorithm>

namespace troupe {
namespace {

// Adds the scope's colocation groups to the node's _class attribute (kept sorted and unique,
// as TensorFlow writes it). A _class the caller set that is not list(string) is replaced.
void add_colocation_groups(const Scope& scope, NodeDef& def) {
  const std::vector<std::string>& groups = scope.colocation_groups();
  if (groups.empty()) return;
  std::vector<std::string> merged = groups;
  auto it = def.attrs.find(std::string(kColocationAttr));
  if (it != def.attrs.end() && it->second.holds<std::vector<std::string>>()) {
    const auto& existing = it->second.get<std::vector<std::string>>();
    merged.insert(merged.end(), existing.begin(), existing.end());
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  }
  def.attrs[std::string(kColocationAttr)] = std::move(merged);
}

}  // namespace

Output make_const(const Scope& scope, const Tensor& value) {
  return Output(
      NodeBuilder(scope, "Const").attr("dtype", value.dtype()).attr("value", value).finalize(), 0);
}

NodeBuilder::NodeBuilder(const Scope& scope, std::string op, std::string_view default_name)
    : scope_(scope),
      op_(std::move(op)),
      default_name_(default_name.empty() ? op_ : std::string(default_name)) {}

NodeBuilder& NodeBuilder::input(const Input& in) {
  args_.push_back(Arg{{in}, false});
  return *this;
}

NodeBuilder& NodeBuilder::input_list(const std::vector<Input>& ins) {
  args_.push_back(Arg{ins, true});
  return *this;
}

NodeBuilder& NodeBuilder::attr(std::string name, AttrValue value) {
  attrs_[std::move(name)] = std::move(value);
  return *this;
}

NodeBuilder& NodeBuilder::control_input(Operation op) {
  control_inputs_.push_back(op);
  return *this;
}

StatusOr<Output> NodeBuilder::materialize(const Input& in, DataType want) {
  if (!in.is_value()) return in.output();
  if (!in.status().ok()) return in.status();
  Tensor value = in.value();
  if (want != DataType::kInvalid && want != value.dtype()) {
    auto cast = value.cast_to(want);
    if (!cast.ok()) return cast.status();
    value = std::move(cast).value();
  }
  Output out = make_const(scope_.with_op_name("Const"), value);
  if (!out.valid()) return scope_.status();
  return out;
}

Status NodeBuilder::build(NodeDef& def) {
  const OpDef* op = scope_.graph().registry().find(op_);
  if (op == nullptr) return errors::InvalidArgument("node '{}': unknown op '{}'", def.name, op_);
  if (args_.size() != op->inputs.size()) {
    return errors::InvalidArgument("node '{}' ({}): given {} arguments, {} expects {}", def.name,
                                   op_, args_.size(), op_, op->inputs.size());
  }
  // Pass 1: type and list-length attributes from the inputs that are already tensors.
  for (size_t a = 0; a < args_.size(); ++a) {
    const ArgDef& arg = op->inputs[a];
    if (!arg.number_attr.empty() && !attrs_.count(arg.number_attr)) {
      attrs_[arg.number_attr] = static_cast<int64_t>(args_[a].inputs.size());
    }
    if (!arg.type_list_attr.empty() && !attrs_.count(arg.type_list_attr)) {
      std::vector<DataType> types;
      for (const Input& in : args_[a].inputs) {
        types.push_back(in.is_value()         ? in.value().dtype()
                        : in.output().valid() ? in.output().dtype()
                                              : DataType::kInvalid);
      }
      attrs_[arg.type_list_attr] = types;
    }
    if (arg.type_attr.empty() || attrs_.count(arg.type_attr)) continue;
    for (const Input& in : args_[a].inputs) {
      if (!in.is_value() && in.output().valid()) {
        attrs_[arg.type_attr] = in.output().dtype();
        break;
      }
    }
  }
  // Pass 2: literals become Const nodes of the dtype their argument needs.
  for (size_t a = 0; a < args_.size(); ++a) {
    const ArgDef& arg = op->inputs[a];
    DataType want = arg.fixed_type;
    if (!arg.type_attr.empty() && attrs_.count(arg.type_attr)) {
      want = attrs_[arg.type_attr].get<DataType>();
    }
    const std::vector<DataType>* want_list = nullptr;
    if (!arg.type_list_attr.empty() && attrs_[arg.type_list_attr].holds<std::vector<DataType>>()) {
      want_list = &attrs_[arg.type_list_attr].get<std::vector<DataType>>();
    }
    for (size_t k = 0; k < args_[a].inputs.size(); ++k) {
      const Input& in = args_[a].inputs[k];
      if (want_list != nullptr) want = k < want_list->size() ? (*want_list)[k] : DataType::kInvalid;
      if (!in.is_value() && !in.output().valid()) {
        return errors::InvalidArgument("node '{}' ({}): input for '{}' is not a valid output",
                                       def.name, op_, arg.name);
      }
      auto materialized = materialize(in, want);
      if (!materialized.ok()) {
        return materialized.status().with_context(
            fmt::format("node '{}' ({}) input '{}'", def.name, op_, arg.name));
      }
      Output out = *materialized;
      if (scope_.graph().find(out.node()->name()) != out.node()) {
        return errors::InvalidArgument("node '{}' ({}): input '{}' belongs to another graph",
                                       def.name, op_, out.name());
      }
      if (!arg.type_attr.empty() && !attrs_.count(arg.type_attr)) {
        attrs_[arg.type_attr] = out.dtype();
      }
      def.inputs.push_back(out.name());
    }
  }
  for (Operation dep : scope_.control_dependencies())
    def.inputs.push_back("^" + dep.name());
  for (Operation dep : control_inputs_) {
    if (!dep.valid()) {
      return errors::InvalidArgument("node '{}' ({}): a control input is not a valid operation",
                                     def.name, op_);
    }
    def.inputs.push_back("^" + dep.name());
  }
  def.attrs = attrs_;
  return Status::OK();
}

Operation NodeBuilder::finalize() {
  if (!scope_.ok()) return Operation();
  NodeDef def;
  def.name = scope_.make_node_name(default_name_);
  def.op = op_;
  Status status = build(def);
  if (status.ok()) {
    add_colocation_groups(scope_, def);
    status = scope_.assign_device(def);
  }
  if (status.ok()) {
    auto node = scope_.graph().add_node(std::move(def));
    if (node.ok()) return Operation(*node);
    status = node.status();
  }
  scope_.update_status(status);
  return Operation();
}

}  // namespace troupe
