// GraphFunction: decode, check and instantiate once; run synchronously per call.
#include "troupe/devices/graph_function.hpp"

#include <atomic>
#include <cstring>

#include <capnp/common.h>
#include <kj/array.h>

#include "troupe/graph/graph_def_codec.hpp"

namespace troupe {

StatusOr<std::shared_ptr<GraphFunction>> GraphFunction::instantiate(std::string_view serialized,
                                                                    Device& device,
                                                                    std::string what) {
  if (serialized.empty() || serialized.size() % sizeof(capnp::word) != 0) {
    return errors::InvalidArgument("{}: {} bytes are not a serialized graph", what,
                                   serialized.size());
  }
  auto words = kj::heapArray<capnp::word>(serialized.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), serialized.data(), serialized.size());
  auto def = parse_graph_def(words.asPtr());
  if (!def.ok()) {
    return errors::InvalidArgument("{}: not a serialized graph: {}", what, def.status().message());
  }
  for (const NodeDef& node : def->nodes) {
    if (node.op == "_Send" || node.op == "_Recv") {
      return errors::InvalidArgument("{}: node '{}' ({}) crosses devices; a function runs on one",
                                     what, node.name, node.op);
    }
  }
  auto graph = Graph::create(*def);
  if (!graph.ok()) return errors::InvalidArgument("{}: {}", what, graph.status().message());
  auto shared = std::make_shared<const Graph>(std::move(graph).value());
  auto executor = Executor::create(shared, device);
  if (!executor.ok()) {
    return Status(executor.status().code(),
                  fmt::format("{}: {}", what, executor.status().message()));
  }
  return std::shared_ptr<GraphFunction>(
      new GraphFunction(shared, device, std::move(executor).value(), std::move(what)));
}

Status GraphFunction::run(StepContext& step, std::vector<Tensor> args,
                          const std::string& container) {
  if (static_cast<int>(args.size()) != num_args()) {
    return errors::InvalidArgument("{}: called with {} arguments, it takes {}", what_, args.size(),
                                   num_args());
  }
  // Function steps get ids from the top of the range, apart from the session's steps.
  static std::atomic<int64_t> next_step_id{int64_t{1} << 62};
  step.step_id = next_step_id.fetch_add(1, std::memory_order_relaxed);
  step.container = container;
  step.args = std::move(args);
  std::unique_ptr<Executor> executor;
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      executor = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (executor == nullptr) {  // another call runs on each idle one: one more
    TROUPE_ASSIGN_OR_RETURN(executor, Executor::create(graph_, device_));
  }
  Status status = executor->run(step);
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(executor));
  return status;
}

StatusOr<std::vector<Tensor>> GraphFunction::call(std::vector<Tensor> args,
                                                  const std::string& container) {
  StepContext step;
  TROUPE_RETURN_IF_ERROR(run(step, std::move(args), container));
  return std::move(step.rets);
}

StatusOr<std::vector<std::shared_ptr<Resource>>> GraphFunction::call_for_resources(
    std::vector<Tensor> args, const std::string& container) {
  StepContext step;
  TROUPE_RETURN_IF_ERROR(run(step, std::move(args), container));
  return std::move(step.ret_refs);
}

}  // namespace troupe
