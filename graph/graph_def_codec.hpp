// GraphDef <-> Cap'n Proto (schema/graph.capnp).
#pragma once

#include <memory>

#include <capnp/message.h>
#include <kj/array.h>

#include "troupe/graph/graph_def.hpp"
#include "troupe/schema/graph.capnp.h"

namespace troupe {

// Const tensors are copied into the message (graphs are small and long-lived).
void graph_def_to_wire(const GraphDef& graph, wire::GraphDef::Builder out);

// Decodes; fails with InvalidArgument on a malformed message (unknown dtypes, bad shapes,
// truncated data). Does not check that the graph makes sense: see Graph::create.
StatusOr<GraphDef> graph_def_from_wire(wire::GraphDef::Reader in);

void attr_to_wire(const AttrValue& value, wire::AttrValue::Builder out);
StatusOr<AttrValue> attr_from_wire(wire::AttrValue::Reader in);

kj::Array<capnp::word> serialize_graph_def(const GraphDef& graph);
StatusOr<GraphDef> parse_graph_def(kj::ArrayPtr<const capnp::word> flat);

}  // namespace troupe
