// The graph one run executes (TensorFlow's subgraph rewrite for a call to Session::run).
//
// Every fed tensor is replaced by an _Arg node (index = its position among the feeds), every
// fetched tensor gets a _Retval node (index = its position among the fetches), and only the
// nodes that the fetches and targets need are kept: a node whose output is fed does not run
// for that output. The runtime's own node names start with '_', which user nodes cannot.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "troupe/graph/graph.hpp"

namespace troupe {

struct RunSignature {
  std::vector<std::string> feeds;    // tensor names, "node:i"
  std::vector<std::string> fetches;  // tensor names
  std::vector<std::string> targets;  // node names, run for their effects

  bool operator==(const RunSignature& other) const = default;
  auto operator<=>(const RunSignature& other) const = default;
};

// Errors: NotFound for a feed, fetch or target the graph lacks; InvalidArgument for a
// malformed name, a tensor fed twice, a fed variable reference, or a run with no fetches and
// no targets.
StatusOr<GraphDef> rewrite_for_run(const Graph& graph, const RunSignature& signature);

// Names of the runtime's nodes for feed i / fetch j.
std::string arg_node_name(size_t i);
std::string retval_node_name(size_t j);

}  // namespace troupe
