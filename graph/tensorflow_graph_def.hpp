// A Graph as TensorFlow's GraphDef protobuf, for what TensorFlow's tools read: the graph of a
// TensorBoard event file (FileWriter.add_graph), a graph.pbtxt. Encoded by hand:
//   GraphDef { repeated NodeDef node = 1; VersionDef versions = 4; }
//   NodeDef  { string name = 1; string op = 2; repeated string input = 3; string device = 4;
//              map<string, AttrValue> attr = 5; }
//   AttrValue { oneof { ListValue list = 1; bytes s = 2; int64 i = 3; float f = 4; bool b = 5;
//                       DataType type = 6; TensorShapeProto shape = 7; TensorProto tensor = 8; } }
//   ListValue { repeated bytes s = 2; repeated int64 i = 3 [packed]; repeated float f = 4
//               [packed]; repeated bool b = 5 [packed]; repeated DataType type = 6 [packed];
//               repeated TensorShapeProto shape = 7; }
// Inputs are named as TensorFlow names them: "x" for output 0, "x:1", "^x" for control.
// troupe's op names and attributes are TensorFlow's, so TensorBoard draws the graph.
#pragma once

#include <string>

#include "troupe/graph/graph.hpp"

namespace troupe {

std::string encode_tensorflow_graph_def(const Graph& graph);

}  // namespace troupe
