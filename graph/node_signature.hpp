// NodeSignature: the dtypes a node's inputs must have and its outputs will have, derived from
// its op definition and attributes.
#pragma once

#include <vector>

#include "troupe/graph/graph_def.hpp"
#include "troupe/graph/op_def.hpp"

namespace troupe {

struct NodeSignature {
  std::vector<DataType> input_types;
  std::vector<bool> input_is_ref;
  std::vector<DataType> output_types;
  std::vector<bool> output_is_ref;
};

// Fills in defaults for attributes `node` leaves out, then checks its attributes against `op`:
// every declared attribute present with the declared kind, allowed types, minimums, nothing
// undeclared (except internal ones starting with '_'). Errors are InvalidArgument naming the
// node.
Status complete_and_check_attrs(const OpDef& op, NodeDef& node);

// The signature of `node`, whose attributes have been completed and checked.
NodeSignature node_signature(const OpDef& op, const NodeDef& node);

}  // namespace troupe
