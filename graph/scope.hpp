// Scope: where the builder API puts new nodes — which graph, under which name prefix, on which
// device (a stack of device layers), colocated with what, after which control dependencies —
// and the first error any builder call hit.
//
//   Scope root = Scope::new_root();
//   auto layer = root.sub_scope("layer1").with_device("/job:worker/task:0");
//   Output y = ops::MatMul(layer, x, w);   // named "layer1/MatMul"
//   if (!root.ok()) ...                     // the first error of any op, naming the node
//
// Devices follow TensorFlow's device stack (tf.device). A scope holds device layers, outermost
// first; each is a device string (full or partial; "" constrains nothing) or a DeviceFunction.
// A node's device is computed as TensorFlow's Graph._apply_device_functions does: starting from
// the colocation device (see colocate_with, else ""), the layers are applied innermost first,
//   - a string layer fills in the fields the value so far leaves unset (inner fields win: an
//     outer "/job:worker" and an inner "/task:2" give "/job:worker/task:2");
//   - a function layer replaces the value with fn(node), where node.device holds the value so far
//     (what the layers inside it chose), so an outer device function sees and may keep the
//     devices of inner scopes, as tf.train.replica_device_setter does.
// The result is stored canonically (DeviceName::to_string(): "/cpu:0" becomes "/device:CPU:0").
// A malformed device string, given or returned by a function, is InvalidArgument in status(),
// naming the node.
//
// Scopes derived from one root share its graph, its error and its name counters. Copies are
// cheap. Not thread-safe: build a graph from one thread at a time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "troupe/graph/graph.hpp"
#include "troupe/graph/output.hpp"

namespace troupe {

// Chooses a node's device. `node` is complete (name, op, inputs, attrs) and `node.device` is the
// device the scope's inner layers chose (canonical, possibly partial or ""). Returns a full or
// partial device name; "" leaves the node unconstrained.
using DeviceFunction = std::function<std::string(const NodeDef& node)>;

// The attribute naming a node's colocation groups (list(string) of "loc:@<node name>"), and the
// prefix of its entries, as in TensorFlow.
inline constexpr std::string_view kColocationAttr = "_class";
inline constexpr std::string_view kColocationGroupPrefix = "loc:@";

class Scope {
 public:
  // A new, empty graph using the global op registry.
  static Scope new_root();

  // Names of nodes built in the result start with "<prefix>name/"; `name` is made unique.
  Scope sub_scope(std::string_view name) const;
  // A scope on the same graph with nothing set: no name prefix, devices, colocation or control
  // dependencies (what Scope::new_root() returned for this graph).
  Scope root() const { return Scope(state_); }
  // The next node built in the result is named exactly `name` (made unique if taken).
  Scope with_op_name(std::string_view name) const;
  // The same scope with the name prefix `prefix` ("layer1/" or ""), taken as it is (not made
  // unique): TensorFlow's variable scopes name variables apart from the name scope.
  Scope with_name_prefix(std::string prefix) const;
  // Pushes a device string layer (tf.device("...")): a full or partial device name, "" for no
  // change. It is parsed when a node is built; a malformed one is an error naming that node.
  Scope with_device(std::string_view device) const;
  // Pushes a device function layer (tf.device(fn)); an empty function is no layer.
  Scope with_device_function(DeviceFunction fn) const;
  // Nodes built in the result are colocated with `op` (tf.colocate_with): they carry
  // _class = ["loc:@<root>", ...] where the roots are op's own loc:@ entries if it has any, else
  // op's name; nested calls accumulate roots. As in TensorFlow, the device layers are reset: a
  // node built in the result starts from op's requested device (or, if op has none, that of an
  // enclosing colocate_with), and only device layers pushed on the result apply on top of it.
  // An invalid `op` is InvalidArgument in status().
  Scope colocate_with(Operation op) const;
  // Nodes built in the result start from op's requested device, as under colocate_with (the
  // device layers are reset), but join no colocation group of op's: a node without a kernel
  // on op's device type (a random op beside a GPU variable) may still be placed on another
  // device of op's task. Variable initializers are built so. An invalid `op` is
  // InvalidArgument in status().
  Scope on_device_of(Operation op) const;
  // Nodes built in the result run after `ops` (control dependencies), besides any already set.
  Scope with_control_dependencies(const std::vector<Operation>& ops) const;
  // Nodes built in the result have none of this scope's control dependencies
  // (tf.control_dependencies(None)).
  Scope without_control_dependencies() const;

  Graph& graph() const { return state_->graph; }
  // The prefix of the names of nodes built in this scope ("layer1/", or "").
  const std::string& name_prefix() const { return prefix_; }
  // The device the string layers and the colocation device alone give a node (canonical;
  // device functions and malformed strings are skipped). Informational: nodes get their device
  // from assign_device.
  std::string device() const;
  // The colocation groups ("loc:@<name>", sorted) nodes built in this scope join.
  const std::vector<std::string>& colocation_groups() const { return colocation_groups_; }
  const std::vector<Operation>& control_dependencies() const { return control_deps_; }

  // Sets `node.device` from the colocation device and the device layers (see the top of this
  // file). `node` should be otherwise complete: device functions read its op, name and attrs.
  // InvalidArgument naming the node for a malformed device string.
  Status assign_device(NodeDef& node) const;

  // OK, or the first error any builder call on this graph hit.
  const Status& status() const { return state_->status; }
  bool ok() const { return state_->status.ok(); }
  // Records `status` if it is the first error; later builder calls become no-ops.
  void update_status(const Status& status) const;
  // Returns the recorded error and clears it, so that later builder calls build again: for a
  // front end that reports each call's error at once (the Python module). A failed call adds
  // no node.
  Status take_status() const;

  // A name for a new node: the op name if set, else `default_name`, prefixed and made unique
  // ("MatMul", "MatMul_1", ...).
  std::string make_node_name(std::string_view default_name) const;

  // The graph built so far.
  GraphDef to_graph_def() const { return graph().to_graph_def(); }

 private:
  struct State {
    std::shared_ptr<Graph> graph_ptr;
    Graph& graph;
    Status status;
    std::map<std::string, int, std::less<>> name_counts;
    explicit State(std::shared_ptr<Graph> g) : graph_ptr(std::move(g)), graph(*graph_ptr) {}
  };

  // One entry of the device stack: a function if `function` is set, else the string `device`.
  struct DeviceLayer {
    std::string device;
    DeviceFunction function;
  };

  explicit Scope(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::string unique(std::string name) const;

  std::shared_ptr<State> state_;
  std::string prefix_;  // "a/b/" or ""
  std::string op_name_;
  std::vector<DeviceLayer> device_layers_;      // outermost first
  std::string colocation_device_;               // requested device of the colocate_with op, or ""
  std::vector<std::string> colocation_groups_;  // sorted, unique
  std::vector<Operation> control_deps_;
};

}  // namespace troupe
