// Test helper: a checked Graph made of NodeDefs written out by hand.
#pragma once

#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "troupe/graph/graph.hpp"

namespace troupe::testing {

// The graph of `nodes` (any order); fails the test if it does not check.
inline Graph graph_of(std::vector<NodeDef> nodes) {
  GraphDef def;
  def.nodes = std::move(nodes);
  auto graph = Graph::create(def);
  BOOST_REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

}  // namespace troupe::testing
