// Test helpers: function graphs (the cond and body of a While, say) built by hand from _Arg and
// _Retval nodes, and serialized as a function attribute takes them.
#pragma once

#include <string>

#include <boost/test/unit_test.hpp>

#include "troupe/graph/graph_def_codec.hpp"
#include "troupe/graph/node_builder.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe::testing {

// Argument `index` of a function graph.
inline Output function_arg(const Scope& function, const char* name, int index, DataType dtype) {
  return Output(NodeBuilder(function.with_op_name(name), "_Arg")
                    .attr("T", dtype)
                    .attr("index", index)
                    .finalize(),
                0);
}

// Result `index` of a function graph (allow_dead: it may come from a cond's untaken branch).
inline void function_result(const Scope& function, const Output& value, int index, DataType dtype,
                            bool allow_dead = false) {
  NodeBuilder(function.with_op_name("result_" + std::to_string(index)), "_Retval")
      .input(value)
      .attr("T", dtype)
      .attr("index", index)
      .attr("allow_dead", allow_dead)
      .finalize();
}

// The function graph as a function attribute holds it.
inline std::string serialized(const Scope& function) {
  BOOST_REQUIRE_MESSAGE(function.ok(), function.status().to_string());
  auto words = serialize_graph_def(function.graph().to_graph_def());
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

}  // namespace troupe::testing
