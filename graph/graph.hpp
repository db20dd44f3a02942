// Graph: a checked, indexed dataflow graph.
//
// Every node in a Graph has a registered op, completed attributes, inputs that exist and have
// the dtypes its op expects, and inferred output shapes. Nodes are kept in topological order
// (a node's id is larger than the ids of all its inputs), so a Graph has no cycles.
// A Graph only grows: node ids and Node pointers stay valid for the Graph's lifetime.
// Not thread-safe: one writer, or any number of readers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "troupe/graph/graph_def.hpp"
#include "troupe/graph/node_signature.hpp"
#include "troupe/graph/op_registry.hpp"

namespace troupe {

// A variable of the model: its Variable node, the node that assigns its initial value,
// whether optimizers train it (TensorFlow's TRAINABLE_VARIABLES), and whether it is local to
// each task (LOCAL_VARIABLES: not saved, not initialised by global_variables_initializer;
// otherwise GLOBAL_VARIABLES).
// Where one shard of a partitioned variable sits in the whole (TensorFlow's SaveSliceInfo):
// checkpoints hold the whole variable under full_name, so it can be restored into any number
// of shards.
struct VariableSlice {
  std::string full_name;
  std::vector<int64_t> full_shape;
  std::vector<int64_t> offset;  // the shard's first element, one entry per dimension
};

struct VariableRecord {
  std::string variable;
  std::string initializer;
  bool trainable = true;
  bool local = false;
  std::optional<VariableSlice> slice;  // set for a shard of a partitioned variable
};

// A data input: output `index` of node `node` (an id in the same graph).
struct Edge {
  int node = -1;
  int index = 0;
  bool operator==(const Edge& other) const = default;
};

class Graph;

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name; }
  const std::string& op_name() const { return def_.op; }
  const OpDef& op_def() const { return *op_; }
  const NodeDef& def() const { return def_; }
  const std::string& requested_device() const { return def_.device; }
  // The graph this node belongs to.
  const Graph& graph() const { return *graph_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<Edge>& inputs() const { return inputs_; }
  const std::vector<int>& control_inputs() const { return control_inputs_; }
  DataType input_type(int i) const { return signature_.input_types[i]; }
  bool input_is_ref(int i) const { return signature_.input_is_ref[i]; }

  int num_outputs() const { return static_cast<int>(signature_.output_types.size()); }
  DataType output_type(int i) const { return signature_.output_types[i]; }
  bool output_is_ref(int i) const { return signature_.output_is_ref[i]; }
  const PartialShape& output_shape(int i) const { return output_shapes_[i]; }
  // Output 0's value when it is known before anything runs: a Const's, or a Pack's of known
  // integer scalars (a shape written as a list, [batch, 2] with batch a constant), as
  // TensorFlow's shape inference evaluates them. nullptr otherwise.
  const Tensor* known_value() const;

 private:
  friend class Graph;
  const Graph* graph_ = nullptr;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_ = nullptr;
  NodeSignature signature_;
  std::vector<Edge> inputs_;
  std::vector<int> control_inputs_;
  std::vector<PartialShape> output_shapes_;
  std::optional<Tensor> packed_value_;  // a Pack's known value
};

class Graph {
 public:
  explicit Graph(const OpRegistry& registry = OpRegistry::global());
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Checks and indexes `def`, whose nodes may come in any order. InvalidArgument naming the
  // node for: an empty or duplicate name, an unknown op, an input naming a node or output that
  // does not exist, a control input before a data input, wrong attributes, an input of the
  // wrong dtype or count, a shape the op rejects, or a cycle.
  static StatusOr<Graph> create(const GraphDef& def,
                                const OpRegistry& registry = OpRegistry::global());

  // Checks and appends one node; its inputs must already be in the graph.
  StatusOr<const Node*> add_node(NodeDef def);

  // Checks and appends the nodes of `delta`, in any order; their inputs may be nodes of the
  // graph or of `delta`. All or nothing: on error the graph is unchanged.
  Status extend(const GraphDef& delta);

  // Narrows what is known of output `index` of node `node` to its merge with `shape`
  // (TensorFlow's Tensor.set_shape): nodes added later infer their shapes from it. NotFound
  // for no such output, InvalidArgument naming both shapes if they conflict. Only this graph
  // knows it: it is not part of the node's definition.
  Status refine_output_shape(std::string_view node, int index, const PartialShape& shape);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return *nodes_[id]; }
  const Node* find(std::string_view name) const;
  const OpRegistry& registry() const { return *registry_; }

  // All nodes, or those with id >= `first_id` (what was added since a point in time).
  GraphDef to_graph_def(int first_id = 0) const;

  // The model's variables, in creation order (see graph/variables.hpp).
  void add_variable_record(VariableRecord record) { variables_.push_back(std::move(record)); }
  const std::vector<VariableRecord>& variable_records() const { return variables_; }
  // The record of Variable node `variable`, or nullptr.
  const VariableRecord* variable_record(std::string_view variable) const;
  // Marks the variable `variable` as a shard of a partitioned one. NotFound if it has no
  // record; InvalidArgument for a slice whose full_shape and offset differ in rank.
  Status set_variable_slice(std::string_view variable, VariableSlice slice);
  // Makes node `initializer` the initializer of variable `variable` (what
  // global_variables_initializer runs for it). NotFound naming what is missing.
  Status set_variable_initializer(std::string_view variable, std::string_view initializer);

 private:
  Status extend_unchecked(const GraphDef& delta);

  const OpRegistry* registry_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, int> ids_by_name_;
  std::vector<VariableRecord> variables_;
};

// True if `name` is a valid node name: [A-Za-z0-9.][A-Za-z0-9_./-]*. Graph also accepts such a
// name after a leading '_', which marks nodes the runtime adds (clients may not use it).
bool is_valid_node_name(std::string_view name);

}  // namespace troupe
