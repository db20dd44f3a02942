// Test helper: runs part of a graph built with the builder API on a CPU device, without
// actors, the way a device actor runs a partition (rewrite for the run, check, execute).
#pragma once

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/devices/executor.hpp"
#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/subgraph.hpp"

namespace troupe::testing {

struct Feed {
  Output output;
  Tensor value;
};

// Runs once on `device` (a fresh one if null) and returns the fetched values.
inline StatusOr<std::vector<Tensor>> run_graph(const Scope& scope,
                                               const std::vector<Output>& fetches,
                                               const std::vector<Feed>& feeds = {},
                                               const std::vector<Operation>& targets = {},
                                               Device* device = nullptr) {
  TROUPE_RETURN_IF_ERROR(scope.status());
  RunSignature signature;
  std::vector<Tensor> args;
  for (const Feed& f : feeds) {
    signature.feeds.push_back(f.output.name());
    args.push_back(f.value);
  }
  for (const Output& o : fetches)
    signature.fetches.push_back(o.name());
  for (const Operation& t : targets)
    signature.targets.push_back(t.name());
  TROUPE_ASSIGN_OR_RETURN(GraphDef def, rewrite_for_run(scope.graph(), signature));
  TROUPE_ASSIGN_OR_RETURN(Graph graph, Graph::create(def));
  std::unique_ptr<Device> owned;
  if (device == nullptr) {
    owned = std::make_unique<Device>("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
    device = owned.get();
  }
  TROUPE_ASSIGN_OR_RETURN(
      auto executor, Executor::create(std::make_shared<const Graph>(std::move(graph)), *device));
  StepContext step;
  step.args = std::move(args);
  TROUPE_RETURN_IF_ERROR(executor->run(step));
  return std::move(step.rets);
}

// Runs and requires success; returns the single fetched value.
inline Tensor run_one(const Scope& scope, const Output& fetch,
                      const std::vector<Feed>& feeds = {}) {
  auto result = run_graph(scope, {fetch}, feeds);
  BOOST_REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  return result->at(0);
}

// Checks dtype, shape and every element (within `tolerance` for floating types).
template <class T>
void check_tensor(const Tensor& actual, const TensorShape& shape, const std::vector<T>& expected,
                  double tolerance = 1e-5) {
  BOOST_TEST_REQUIRE(dtype_name(actual.dtype()) == dtype_name(dtype_of<T>));
  BOOST_TEST_REQUIRE(actual.shape().to_string() == shape.to_string());
  auto values = actual.flat<T>();
  BOOST_TEST_REQUIRE(values.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      BOOST_TEST(
          std::abs(static_cast<double>(values[i]) - static_cast<double>(expected[i])) <= tolerance,
          "element " << i << ": " << values[i] << " vs expected " << expected[i]);
    } else {
      BOOST_TEST(values[i] == expected[i], "element " << i);
    }
  }
}

}  // namespace troupe::testing
