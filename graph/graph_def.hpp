// NodeDef and GraphDef: a dataflow graph as plain data, as TensorFlow defines it.
//
// A node's inputs are "name" (output 0), "name:i", or "^name" for a control dependency
// (control inputs come after data inputs). graph/graph.hpp checks and indexes a GraphDef;
// graph/graph_def_codec.hpp puts it on the wire.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/attr_value.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

// Bumped when an existing op changes meaning; a peer with another version is refused.
inline constexpr int kGraphVersion = 1;

struct NodeDef {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;
  std::string device;  // requested device, possibly partial ("/job:ps/task:0"); may be empty
  AttrMap attrs;

  // The attribute `key`, or nullptr.
  const AttrValue* find_attr(std::string_view key) const;
};

struct GraphDef {
  std::vector<NodeDef> nodes;
  int version = kGraphVersion;
};

// One end of an edge: output `index` of node `node`; index -1 is a control edge.
struct TensorId {
  std::string node;
  int index = 0;

  bool is_control() const { return index < 0; }
  // "node:1", "node" for output 0, "^node" for control.
  std::string to_string() const;
  bool operator==(const TensorId& other) const = default;
  auto operator<=>(const TensorId& other) const = default;
};

// Parses "node", "node:3" or "^node". InvalidArgument for "", ":1", "node:x", "node:-1".
StatusOr<TensorId> parse_tensor_id(std::string_view text);

}  // namespace troupe
