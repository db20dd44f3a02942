// Graph: node checking (op, attrs, input dtypes, shapes), indexing and topological ordering.
#include "troupe/graph/graph.hpp"

#include <algorithm>
#include <deque>

#include <fmt/ranges.h>

#include "troupe/graph/shape_inference.hpp"

namespace troupe {

Status Graph::set_variable_slice(std::string_view variable, VariableSlice slice) {
  if (slice.full_name.empty() || slice.full_shape.size() != slice.offset.size()) {
    return errors::InvalidArgument(
        "variable '{}': a slice needs the whole variable's name, and an offset of the rank of its "
        "shape {} (got {} entries)",
        variable, fmt::join(slice.full_shape, ","), slice.offset.size());
  }
  auto it = std::ranges::find(variables_, variable, &VariableRecord::variable);
  if (it == variables_.end()) {
    return errors::NotFound("'{}' is not a variable of the graph", variable);
  }
  it->slice = std::move(slice);
  return Status::OK();
}

Status Graph::set_variable_initializer(std::string_view variable, std::string_view initializer) {
  auto it = std::ranges::find(variables_, variable, &VariableRecord::variable);
  if (it == variables_.end()) {
    return errors::NotFound("'{}' is not a variable of the graph", variable);
  }
  if (find(initializer) == nullptr) {
    return errors::NotFound("variable '{}': its new initializer '{}' is not a node of the graph",
                            variable, initializer);
  }
  it->initializer = std::string(initializer);
  return Status::OK();
}

const VariableRecord* Graph::variable_record(std::string_view variable) const {
  auto it = std::ranges::find(variables_, variable, &VariableRecord::variable);
  return it == variables_.end() ? nullptr : &*it;
}

bool is_valid_node_name(std::string_view name) {
  if (name.empty()) return false;
  auto ok_first = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.'; };
  auto ok_rest = [&](char c) { return ok_first(c) || c == '_' || c == '/' || c == '-'; };
  if (!ok_first(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(), ok_rest);
}

Graph::Graph(const OpRegistry& registry) : registry_(&registry) {}

Graph::Graph(Graph&& other) noexcept {
  *this = std::move(other);
}

Graph& Graph::operator=(Graph&& other) noexcept {
  registry_ = other.registry_;
  nodes_ = std::move(other.nodes_);
  ids_by_name_ = std::move(other.ids_by_name_);
  variables_ = std::move(other.variables_);
  for (auto& node : nodes_)
    node->graph_ = this;
  return *this;
}

const Node* Graph::find(std::string_view name) const {
  auto it = ids_by_name_.find(std::string(name));
  return it == ids_by_name_.end() ? nullptr : nodes_[it->second].get();
}

StatusOr<const Node*> Graph::add_node(NodeDef def) {
  // Names starting with '_' belong to nodes the runtime adds (_Arg, _Send, ...); the master
  // refuses them from clients.
  std::string_view checked_name = def.name;
  if (checked_name.starts_with('_')) checked_name.remove_prefix(1);
  if (!is_valid_node_name(checked_name)) {
    return errors::InvalidArgument(
        "node name '{}' is not valid: expected [A-Za-z0-9.][A-Za-z0-9_./-]*", def.name);
  }
  if (ids_by_name_.count(def.name) > 0) {
    return errors::InvalidArgument("node '{}': a node of that name already exists", def.name);
  }
  const OpDef* op = registry_->find(def.op);
  if (op == nullptr) {
    return errors::InvalidArgument("node '{}': unknown op '{}'", def.name, def.op);
  }

  auto node = std::make_unique<Node>();
  bool seen_control = false;
  for (const std::string& input : def.inputs) {
    auto id = parse_tensor_id(input);
    if (!id.ok()) return id.status().with_context(fmt::format("node '{}' ({})", def.name, def.op));
    const Node* src = find(id->node);
    if (src == nullptr) {
      return errors::InvalidArgument("node '{}' ({}): input '{}' names a node that does not exist",
                                     def.name, def.op, input);
    }
    if (id->is_control()) {
      seen_control = true;
      node->control_inputs_.push_back(src->id());
      continue;
    }
    if (seen_control) {
      return errors::InvalidArgument("node '{}' ({}): data input '{}' comes after a control input",
                                     def.name, def.op, input);
    }
    if (id->index >= src->num_outputs()) {
      return errors::InvalidArgument(
          "node '{}' ({}): input '{}' asks for output {} of '{}', which has {}", def.name, def.op,
          input, id->index, src->name(), src->num_outputs());
    }
    node->inputs_.push_back(Edge{src->id(), id->index});
  }

  TROUPE_RETURN_IF_ERROR(complete_and_check_attrs(*op, def));
  node->signature_ = node_signature(*op, def);
  const NodeSignature& sig = node->signature_;
  if (sig.input_types.size() != node->inputs_.size()) {
    return errors::InvalidArgument("node '{}' ({}): has {} data inputs, {} expects {}", def.name,
                                   def.op, node->inputs_.size(), op->name, sig.input_types.size());
  }

  std::vector<DataType> input_dtypes;
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_values;
  for (size_t i = 0; i < node->inputs_.size(); ++i) {
    const Node& src = *nodes_[node->inputs_[i].node];
    int index = node->inputs_[i].index;
    DataType actual = src.output_type(index);
    if (actual != sig.input_types[i]) {
      return errors::InvalidArgument("node '{}' ({}): input {} ('{}') is {}, expected {}", def.name,
                                     def.op, i, def.inputs[i], dtype_name(actual),
                                     dtype_name(sig.input_types[i]));
    }
    if (sig.input_is_ref[i] && !src.output_is_ref(index)) {
      return errors::InvalidArgument(
          "node '{}' ({}): input {} ('{}') must be a reference to a variable", def.name, def.op, i,
          def.inputs[i]);
    }
    input_dtypes.push_back(actual);
    input_shapes.push_back(src.output_shape(index));
    input_values.push_back(src.known_value());
  }
  // A Pack of known integer scalars has a known value too (at most 64 of them: a shape).
  if (def.op == "Pack" && !input_values.empty() && input_values.size() <= 64) {
    bool known = true;
    for (const Tensor* value : input_values) {
      known = known && value != nullptr && value->rank() == 0 &&
              (value->dtype() == DataType::kInt32 || value->dtype() == DataType::kInt64);
    }
    if (known) {
      Tensor packed(input_values[0]->dtype(),
                    TensorShape({static_cast<int64_t>(input_values.size())}));
      for (size_t i = 0; i < input_values.size(); ++i) {
        if (packed.dtype() == DataType::kInt32) {
          packed.data<int32_t>()[i] = input_values[i]->scalar<int32_t>();
        } else {
          packed.data<int64_t>()[i] = input_values[i]->scalar<int64_t>();
        }
      }
      node->packed_value_ = std::move(packed);
    }
  }

  InferenceContext context(def, std::move(input_dtypes), std::move(input_shapes),
                           std::move(input_values), static_cast<int>(sig.output_types.size()));
  TROUPE_RETURN_IF_ERROR(op->shape_fn(context));
  node->output_shapes_ = context.take_outputs();

  node->graph_ = this;
  node->id_ = static_cast<int>(nodes_.size());
  node->op_ = op;
  node->def_ = std::move(def);
  ids_by_name_.emplace(node->def_.name, node->id_);
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

const Tensor* Node::known_value() const {
  if (packed_value_) return &*packed_value_;
  const AttrValue* value = op_name() == "Const" ? def_.find_attr("value") : nullptr;
  return value != nullptr ? &value->get<Tensor>() : nullptr;
}

StatusOr<Graph> Graph::create(const GraphDef& def, const OpRegistry& registry) {
  Graph graph(registry);
  TROUPE_RETURN_IF_ERROR(graph.extend(def));
  return graph;
}

Status Graph::refine_output_shape(std::string_view node, int index, const PartialShape& shape) {
  auto it = ids_by_name_.find(std::string(node));
  if (it == ids_by_name_.end()) return errors::NotFound("no node '{}' in the graph", node);
  Node& n = *nodes_[it->second];
  if (index < 0 || index >= n.num_outputs()) {
    return errors::NotFound("node '{}' has no output {}", node, index);
  }
  auto merged = n.output_shapes_[index].merge(shape);
  if (!merged.ok()) {
    return errors::InvalidArgument("Shapes {} and {} are incompatible",
                                   n.output_shapes_[index].to_string(), shape.to_string());
  }
  n.output_shapes_[index] = std::move(merged).value();
  return Status::OK();
}

Status Graph::extend(const GraphDef& def) {
  const int old_size = num_nodes();
  Status status = extend_unchecked(def);
  if (!status.ok()) {
    // All or nothing: drop what this call added.
    while (num_nodes() > old_size) {
      ids_by_name_.erase(nodes_.back()->name());
      nodes_.pop_back();
    }
  }
  return status;
}

Status Graph::extend_unchecked(const GraphDef& def) {
  // Order the new nodes so each comes after its inputs (Kahn's algorithm); inputs already in
  // the graph are satisfied.
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < def.nodes.size(); ++i) {
    if (!index.emplace(def.nodes[i].name, i).second || find(def.nodes[i].name) != nullptr) {
      return errors::InvalidArgument("node '{}': a node of that name already exists",
                                     def.nodes[i].name);
    }
  }
  std::vector<int> pending(def.nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(def.nodes.size());
  for (size_t i = 0; i < def.nodes.size(); ++i) {
    for (const std::string& input : def.nodes[i].inputs) {
      auto id = parse_tensor_id(input);
      if (!id.ok()) {
        return id.status().with_context(
            fmt::format("node '{}' ({})", def.nodes[i].name, def.nodes[i].op));
      }
      auto it = index.find(id->node);
      if (it == index.end()) {
        if (find(id->node) != nullptr) continue;
        return errors::InvalidArgument(
            "node '{}' ({}): input '{}' names a node that does not exist", def.nodes[i].name,
            def.nodes[i].op, input);
      }
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::deque<size_t> ready;
  for (size_t i = 0; i < def.nodes.size(); ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  size_t added = 0;
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop_front();
    auto node = add_node(def.nodes[i]);
    if (!node.ok()) return node.status();
    ++added;
    for (size_t consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  if (added != def.nodes.size()) {
    // Walk from an unplaced node through unplaced inputs; the first node seen twice is on a cycle.
    size_t at =
        std::find_if(pending.begin(), pending.end(), [](int p) { return p > 0; }) - pending.begin();
    std::vector<bool> seen(def.nodes.size(), false);
    while (!seen[at]) {
      seen[at] = true;
      for (const std::string& input : def.nodes[at].inputs) {
        auto src = index.find(parse_tensor_id(input)->node);
        if (src != index.end() && pending[src->second] > 0) {
          at = src->second;
          break;
        }
      }
    }
    return errors::InvalidArgument("node '{}' ({}) is part of a cycle: the graph must be acyclic",
                                   def.nodes[at].name, def.nodes[at].op);
  }
  return Status::OK();
}

GraphDef Graph::to_graph_def(int first_id) const {
  GraphDef def;
  for (int i = first_id; i < num_nodes(); ++i)
    def.nodes.push_back(nodes_[i]->def_);
  return def;
}

}  // namespace troupe
