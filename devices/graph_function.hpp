// GraphFunction: a graph run as a function on one device — tf.data's map, filter, flat_map
// and interleave bodies.
//
// The body is a graph whose _Arg nodes (indices 0..n-1) are the arguments and whose _Retval
// nodes (0..m-1; _RetvalRef for a reference such as a dataset) are the results, serialized as
// graph_def_codec writes it. Instantiated once (graph checked, kernels built for the device); each
// call runs it to the end on the calling thread. Calls may come from several threads at once (a
// parallel map): each runs on an executor of its own, made when no idle one is left, so a
// kernel object never sees two calls at once (resources, such as a random op's generator, are
// shared and locked). The body may not reach other devices (no _Send/_Recv) and may not wait on
// other steps.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/devices/executor.hpp"

namespace troupe {

class GraphFunction {
 public:
  // InvalidArgument naming `what` (e.g. "node 'map' (MapDataset): function f") for bytes that
  // are not a graph, a graph that does not check, or kernels the device lacks.
  static StatusOr<std::shared_ptr<GraphFunction>> instantiate(std::string_view serialized,
                                                              Device& device, std::string what);

  int num_args() const { return num_args_; }
  int num_rets() const { return num_rets_; }
  const std::string& what() const { return what_; }

  // Runs the body with `args` (num_args() of them) and returns its num_rets() results.
  // Resources the body uses live in `container`. A kernel's error is returned as it is
  // (it names the node of the body).
  StatusOr<std::vector<Tensor>> call(std::vector<Tensor> args, const std::string& container);
  // As call(), for a body whose results are references (_RetvalRef: flat_map's dataset): the
  // resources, nullptr for a result that is a tensor.
  StatusOr<std::vector<std::shared_ptr<Resource>>> call_for_resources(std::vector<Tensor> args,
                                                                      const std::string& container);

 private:
  Status run(StepContext& step, std::vector<Tensor> args, const std::string& container);

  GraphFunction(std::shared_ptr<const Graph> graph, Device& device,
                std::unique_ptr<Executor> executor, std::string what)
      : graph_(std::move(graph)),
        device_(device),
        num_args_(executor->num_args()),
        num_rets_(executor->num_rets()),
        what_(std::move(what)) {
    idle_.push_back(std::move(executor));
  }

  std::shared_ptr<const Graph> graph_;
  Device& device_;
  int num_args_, num_rets_;
  std::string what_;
  std::mutex mutex_;                             // guards idle_
  std::vector<std::unique_ptr<Executor>> idle_;  // executors no call is running on
};

}  // namespace troupe
