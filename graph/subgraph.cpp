// rewrite_for_run: feed/fetch substitution and pruning.
#include "troupe/graph/subgraph.hpp"

#include <map>

namespace troupe {

std::string arg_node_name(size_t i) {
  return "_arg_" + std::to_string(i);
}
std::string retval_node_name(size_t j) {
  return "_retval_" + std::to_string(j);
}

namespace {

StatusOr<TensorId> find_tensor(const Graph& graph, const std::string& name, const char* role) {
  auto id = parse_tensor_id(name);
  if (!id.ok() || id->is_control()) {
    return errors::InvalidArgument("{} '{}' is not a tensor name: expected 'node' or 'node:index'",
                                   role, name);
  }
  const Node* node = graph.find(id->node);
  if (node == nullptr) {
    return errors::NotFound("{} '{}' names node '{}', which is not in the graph", role, name,
                            id->node);
  }
  if (id->index >= node->num_outputs()) {
    return errors::NotFound("{} '{}': node '{}' has {} outputs", role, name, id->node,
                            node->num_outputs());
  }
  return std::move(id).value();
}

}  // namespace

StatusOr<GraphDef> rewrite_for_run(const Graph& graph, const RunSignature& signature) {
  if (signature.fetches.empty() && signature.targets.empty()) {
    return errors::InvalidArgument("a run must fetch a tensor or name a target node");
  }
  std::map<TensorId, size_t> fed;  // tensor -> feed index
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    TROUPE_ASSIGN_OR_RETURN(TensorId id, find_tensor(graph, signature.feeds[i], "feed"));
    const Node* node = graph.find(id.node);
    if (node->output_is_ref(id.index)) {
      return errors::InvalidArgument("feed '{}' is a variable reference, which cannot be fed",
                                     signature.feeds[i]);
    }
    if (!fed.emplace(id, i).second) {
      return errors::InvalidArgument("tensor '{}' is fed twice", signature.feeds[i]);
    }
  }
  // Walk back from fetches and targets; a fed edge does not pull in its producer.
  std::vector<bool> needed(graph.num_nodes(), false);
  std::vector<int> stack;
  auto need = [&](int id) {
    if (!needed[id]) {
      needed[id] = true;
      stack.push_back(id);
    }
  };
  std::vector<TensorId> fetch_ids;
  for (const std::string& fetch : signature.fetches) {
    TROUPE_ASSIGN_OR_RETURN(TensorId id, find_tensor(graph, fetch, "fetch"));
    if (fed.count(id) == 0) need(graph.find(id.node)->id());
    fetch_ids.push_back(std::move(id));
  }
  for (const std::string& target : signature.targets) {
    const Node* node = graph.find(target);
    if (node == nullptr) {
      return errors::NotFound("target '{}' is not a node of the graph", target);
    }
    need(node->id());
  }
  while (!stack.empty()) {
    const Node& node = graph.node(stack.back());
    stack.pop_back();
    for (const Edge& e : node.inputs()) {
      if (fed.count(TensorId{graph.node(e.node).name(), e.index}) == 0) need(e.node);
    }
    for (int c : node.control_inputs())
      need(c);
  }

  GraphDef out;
  std::vector<std::string> arg_names(signature.feeds.size());
  for (const auto& [id, i] : fed) {
    const Node& src = *graph.find(id.node);
    NodeDef arg;
    arg.name = arg_names[i] = arg_node_name(i);
    arg.op = "_Arg";
    arg.device = src.requested_device();
    arg.attrs["T"] = src.output_type(id.index);
    arg.attrs["index"] = static_cast<int64_t>(i);
    arg.attrs["shape"] = src.output_shape(id.index);
    out.nodes.push_back(std::move(arg));
  }
  auto input_name = [&](const TensorId& id) {
    auto it = fed.find(id);
    return it != fed.end() ? arg_names[it->second] : id.to_string();
  };
  for (int n = 0; n < graph.num_nodes(); ++n) {
    if (!needed[n]) continue;
    const Node& node = graph.node(n);
    NodeDef def = node.def();
    def.inputs.clear();
    for (const Edge& e : node.inputs()) {
      def.inputs.push_back(input_name(TensorId{graph.node(e.node).name(), e.index}));
    }
    for (int c : node.control_inputs())
      def.inputs.push_back("^" + graph.node(c).name());
    out.nodes.push_back(std::move(def));
  }
  for (size_t j = 0; j < fetch_ids.size(); ++j) {
    const Node& src = *graph.find(fetch_ids[j].node);
    NodeDef retval;
    retval.name = retval_node_name(j);
    retval.op = "_Retval";
    retval.device = src.requested_device();
    retval.inputs.push_back(input_name(fetch_ids[j]));
    retval.attrs["T"] = src.output_type(fetch_ids[j].index);
    retval.attrs["index"] = static_cast<int64_t>(j);
    out.nodes.push_back(std::move(retval));
  }
  return out;
}

}  // namespace troupe
