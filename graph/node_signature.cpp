// Attribute checking and input/output dtype resolution for a node.
#include "troupe/graph/node_signature.hpp"

namespace troupe {
namespace {

void append_arg(const ArgDef& arg, const NodeDef& node, std::vector<DataType>& types,
                std::vector<bool>& refs) {
  if (!arg.type_list_attr.empty()) {
    for (DataType t : node.find_attr(arg.type_list_attr)->get<std::vector<DataType>>()) {
      types.push_back(t);
      refs.push_back(arg.is_ref);
    }
    return;
  }
  DataType type = arg.fixed_type;
  if (!arg.type_attr.empty()) type = node.find_attr(arg.type_attr)->get<DataType>();
  int64_t count = 1;
  if (!arg.number_attr.empty()) count = node.find_attr(arg.number_attr)->get<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    types.push_back(type);
    refs.push_back(arg.is_ref);
  }
}

}  // namespace

Status complete_and_check_attrs(const OpDef& op, NodeDef& node) {
  for (const auto& [name, value] : node.attrs) {
    if (!name.empty() && name[0] == '_') continue;
    if (op.find_attr(name) == nullptr) {
      return errors::InvalidArgument(
          "node '{}' ({}): has attribute '{}', which {} does not declare", node.name, node.op, name,
          op.name);
    }
  }
  for (const AttrDef& def : op.attrs) {
    auto it = node.attrs.find(def.name);
    if (it == node.attrs.end()) {
      if (!def.default_value) {
        return errors::InvalidArgument("node '{}' ({}): missing attribute '{}' of kind {}",
                                       node.name, node.op, def.name, attr_type_name(def.type));
      }
      it = node.attrs.emplace(def.name, *def.default_value).first;
    }
    const AttrValue& value = it->second;
    // An empty list written without a kind reads back as list(int); accept it for any list.
    bool empty_list = value.holds<std::vector<int64_t>>() &&
                      value.get<std::vector<int64_t>>().empty() && def.type >= AttrType::kListInt;
    if (value.type() != def.type && !empty_list) {
      return errors::InvalidArgument("node '{}' ({}): attribute '{}' is {}, expected {}", node.name,
                                     node.op, def.name, attr_type_name(value.type()),
                                     attr_type_name(def.type));
    }
    if (empty_list && def.type != AttrType::kListInt) {
      // Store the empty list with the declared kind so later readers find what they expect.
      switch (def.type) {
        case AttrType::kListFloat:
          it->second = std::vector<float>{};
          break;
        case AttrType::kListBool:
          it->second = std::vector<bool>{};
          break;
        case AttrType::kListString:
          it->second = std::vector<std::string>{};
          break;
        case AttrType::kListType:
          it->second = std::vector<DataType>{};
          break;
        case AttrType::kListShape:
          it->second = std::vector<PartialShape>{};
          break;
        default:
          break;
      }
    }
    if (def.type == AttrType::kType) {
      DataType t = value.get<DataType>();
      if (t == DataType::kInvalid) {
        return errors::InvalidArgument("node '{}' ({}): attribute '{}' is not a valid dtype",
                                       node.name, node.op, def.name);
      }
      if (!def.allowed_types.empty() &&
          std::find(def.allowed_types.begin(), def.allowed_types.end(), t) ==
              def.allowed_types.end()) {
        std::string allowed;
        for (DataType a : def.allowed_types) {
          if (!allowed.empty()) allowed += ", ";
          allowed += dtype_name(a);
        }
        return errors::InvalidArgument(
            "node '{}' ({}): attribute '{}' is {}, which {} does not support (allowed: {})",
            node.name, node.op, def.name, dtype_name(t), op.name, allowed);
      }
    }
    if (def.minimum && value.get<int64_t>() < *def.minimum) {
      return errors::InvalidArgument("node '{}' ({}): attribute '{}' is {}, must be >= {}",
                                     node.name, node.op, def.name, value.get<int64_t>(),
                                     *def.minimum);
    }
  }
  return Status::OK();
}

NodeSignature node_signature(const OpDef& op, const NodeDef& node) {
  NodeSignature sig;
  for (const auto& arg : op.inputs)
    append_arg(arg, node, sig.input_types, sig.input_is_ref);
  for (const auto& arg : op.outputs)
    append_arg(arg, node, sig.output_types, sig.output_is_ref);
  return sig;
}

}  // namespace troupe
