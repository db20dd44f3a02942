// add_gradients: finds the nodes between the xs and the ys, then walks them in reverse
// topological order (decreasing node id: a Graph's ids are topological), summing the gradients
// that reach each output and calling the op's gradient function to send gradients to its inputs.
#include "troupe/graph/gradients.hpp"

#include <unordered_map>
#include <unordered_set>

#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace {

// Only floating-point tensors carry gradients.
bool carries_gradient(DataType dtype) {
  return dtype_is_floating(dtype);
}

Status check_endpoint(const Graph& graph, const Output& output, std::string_view what, size_t i) {
  if (!output.valid()) {
    return errors::InvalidArgument("add_gradients: {}[{}] is not a valid output", what, i);
  }
  if (graph.find(output.node()->name()) != output.node()) {
    return errors::InvalidArgument(
        "add_gradients: {}[{}] ('{}') belongs to another graph than the scope's", what, i,
        output.name());
  }
  return Status::OK();
}

class GradientBuilder {
 public:
  GradientBuilder(const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
                  const std::vector<Output>& grad_ys, const GradientRegistry& registry,
                  const std::vector<Output>& stop_gradients = {})
      : scope_(scope),
        graph_(scope.graph()),
        ys_(ys),
        xs_(xs),
        grad_ys_(grad_ys),
        stop_gradients_(stop_gradients),
        registry_(registry),
        num_nodes_(graph_.num_nodes()) {}

  // `g` as a dense tensor, built under the gradients' scope (after build()).
  Output densify(const Gradient& g) const { return to_dense(grad_scope_, g); }

  StatusOr<std::vector<Gradient>> build() {
    TROUPE_RETURN_IF_ERROR(check_arguments());
    for (const Output& stop : stop_gradients_)
      stop_nodes_.insert(stop.node()->id());
    find_nodes_between();
    grad_scope_ = scope_.sub_scope("gradients");
    TROUPE_RETURN_IF_ERROR(seed_ys());
    std::vector<Gradient> result(xs_.size());
    std::unordered_multimap<int, size_t> xs_by_node;
    for (size_t k = 0; k < xs_.size(); ++k)
      xs_by_node.emplace(xs_[k].node()->id(), k);
    // Every consumer of a node has a larger id, so when a node is reached here all the
    // gradients for its outputs are in.
    for (int id = num_nodes_ - 1; id >= 0; --id) {
      if (!between_[id]) continue;
      const Node& node = graph_.node(id);
      std::vector<Gradient> dy(node.num_outputs());
      bool any = false;
      for (int i = 0; i < node.num_outputs(); ++i) {
        dy[i] = sum_contributions(id, i);
        any = any || dy[i].valid();
      }
      TROUPE_RETURN_IF_ERROR(scope_.status());
      auto [first, last] = xs_by_node.equal_range(id);
      for (auto it = first; it != last; ++it) {
        const Output& x = xs_[it->second];
        if (carries_gradient(x.dtype())) result[it->second] = dy[x.index()];
      }
      if (any) TROUPE_RETURN_IF_ERROR(backprop_through(node, std::move(dy)));
    }
    TROUPE_RETURN_IF_ERROR(scope_.status());
    return result;
  }

 private:
  Status check_arguments() const {
    TROUPE_RETURN_IF_ERROR(scope_.status());
    for (size_t i = 0; i < ys_.size(); ++i)
      TROUPE_RETURN_IF_ERROR(check_endpoint(graph_, ys_[i], "ys", i));
    for (size_t i = 0; i < xs_.size(); ++i)
      TROUPE_RETURN_IF_ERROR(check_endpoint(graph_, xs_[i], "xs", i));
    for (size_t i = 0; i < stop_gradients_.size(); ++i) {
      TROUPE_RETURN_IF_ERROR(check_endpoint(graph_, stop_gradients_[i], "stop_gradients", i));
    }
    if (grad_ys_.empty()) return Status::OK();
    if (grad_ys_.size() != ys_.size()) {
      return errors::InvalidArgument("add_gradients: {} grad_ys for {} ys (expected one per y)",
                                     grad_ys_.size(), ys_.size());
    }
    for (size_t i = 0; i < grad_ys_.size(); ++i) {
      TROUPE_RETURN_IF_ERROR(check_endpoint(graph_, grad_ys_[i], "grad_ys", i));
      const Output& y = ys_[i];
      const Output& g = grad_ys_[i];
      if (g.dtype() != y.dtype()) {
        return errors::InvalidArgument(
            "add_gradients: grad_ys[{}] ('{}') is {} but ys[{}] ('{}') is {} (expected the same "
            "dtype)",
            i, g.name(), dtype_name(g.dtype()), i, y.name(), dtype_name(y.dtype()));
      }
      if (!g.shape().compatible_with(y.shape())) {
        return errors::InvalidArgument(
            "add_gradients: grad_ys[{}] ('{}') has shape {} but ys[{}] ('{}') has shape {} "
            "(expected the same shape)",
            i, g.name(), g.shape().to_string(), i, y.name(), y.shape().to_string());
      }
    }
    return Status::OK();
  }

  // True if data input `i` of `node` carries a gradient: a floating-point tensor.
  bool input_carries(const Node& node, int i) const {
    const Edge& e = node.inputs()[i];
    return carries_gradient(graph_.node(e.node).output_type(e.index));
  }

  // between_[id]: the node is reachable from an x and reaches a y, along data edges carrying
  // floating-point tensors. Ids are topological, so one pass each way suffices.
  void find_nodes_between() {
    std::vector<char> from_x(num_nodes_, 0), to_y(num_nodes_, 0);
    for (const Output& x : xs_) {
      if (carries_gradient(x.dtype())) from_x[x.node()->id()] = 1;
    }
    for (int id = 0; id < num_nodes_; ++id) {
      const Node& node = graph_.node(id);
      for (int i = 0; i < node.num_inputs() && !from_x[id]; ++i) {
        if (from_x[node.inputs()[i].node] && input_carries(node, i)) from_x[id] = 1;
      }
    }
    for (const Output& y : ys_) {
      if (carries_gradient(y.dtype())) to_y[y.node()->id()] = 1;
    }
    for (int id = num_nodes_ - 1; id >= 0; --id) {
      if (!to_y[id]) continue;
      const Node& node = graph_.node(id);
      for (int i = 0; i < node.num_inputs(); ++i) {
        if (input_carries(node, i)) to_y[node.inputs()[i].node] = 1;
      }
    }
    between_.assign(num_nodes_, 0);
    for (int id = 0; id < num_nodes_; ++id)
      between_[id] = from_x[id] && to_y[id];
  }

  Status seed_ys() {
    for (size_t i = 0; i < ys_.size(); ++i) {
      const Output& y = ys_[i];
      if (!carries_gradient(y.dtype()) || !between_[y.node()->id()]) continue;
      Output g = grad_ys_.empty() ? ops::OnesLike(grad_scope_, y) : grad_ys_[i];
      // Shapes that agree only as far as they are known (check_inputs) are checked when the
      // step runs: the gradient formulas trust the shape of what flows into y (Add's, for one,
      // skips its reduction when its inputs' static shapes match).
      if (!grad_ys_.empty() && !(g.shape().is_fully_defined() && y.shape().is_fully_defined())) {
        g = ops::EnsureShapeLike(grad_scope_, g, y);
      }
      TROUPE_RETURN_IF_ERROR(scope_.status());
      add_contribution(y.node()->id(), y.index(), g);
    }
    return Status::OK();
  }

  void add_contribution(int id, int index, const Gradient& gradient) {
    auto& per_output = contributions_[id];
    if (per_output.empty()) per_output.resize(graph_.node(id).num_outputs());
    per_output[index].push_back(gradient);
  }

  // The sum of the gradients that reached output `index` of node `id`, or an invalid Gradient
  // if none did. IndexedSlices only are concatenated (still sparse); with a dense one among
  // them, all are densified and added.
  Gradient sum_contributions(int id, int index) {
    auto it = contributions_.find(id);
    if (it == contributions_.end() || it->second[index].empty()) return Gradient();
    std::vector<Gradient>& parts = it->second[index];
    if (parts.size() == 1) return parts[0];
    std::vector<IndexedSlices> slices;
    for (const Gradient& part : parts) {
      if (part.is_sparse()) slices.push_back(part.slices());
    }
    if (slices.size() == parts.size()) return concat_slices(grad_scope_, slices);
    std::vector<Input> inputs;
    for (const Gradient& part : parts)
      inputs.emplace_back(to_dense(grad_scope_, part));
    return ops::AddN(grad_scope_, inputs);
  }

  // Calls the gradient function of `node`, whose outputs received the gradients `dy` (some
  // valid), and passes what it returns on to the inputs between the xs and the ys.
  Status backprop_through(const Node& node, std::vector<Gradient> dy) {
    bool needed = false;
    for (int i = 0; i < node.num_inputs() && !needed; ++i) {
      needed = between_[node.inputs()[i].node] && input_carries(node, i);
    }
    if (!needed) return Status::OK();  // an x at the edge of the walk: stop here
    // A node of stop_gradients is a constant for this gradient: nothing flows to its inputs.
    if (stop_nodes_.count(node.id()) > 0) return Status::OK();
    auto fn = registry_.lookup(node.op_name());
    if (!fn.ok()) {
      return errors::InvalidArgument("node '{}' ({}): no gradient is registered for op {}",
                                     node.name(), node.op_name(), node.op_name());
    }
    if (!*fn) return Status::OK();  // not differentiable: the flow stops
    Operation op(&node);
    Scope node_scope = grad_scope_.sub_scope(node.name() + "_grad");
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (!dy[i].valid() && carries_gradient(node.output_type(i))) {
        dy[i] = Gradient(ops::ZerosLike(node_scope, Output(op, i)));
      }
    }
    TROUPE_RETURN_IF_ERROR(scope_.status());
    std::vector<Gradient> dx;
    if (SparseGradFn sparse = registry_.lookup_sparse(node.op_name())) {
      TROUPE_RETURN_IF_ERROR(sparse(node_scope, op, dy, &dx));
    } else {
      std::vector<Output> dense_dy, dense_dx;
      for (const Gradient& g : dy)
        dense_dy.push_back(to_dense(node_scope, g));
      TROUPE_RETURN_IF_ERROR((*fn)(node_scope, op, dense_dy, &dense_dx));
      dx.assign(dense_dx.begin(), dense_dx.end());
    }
    TROUPE_RETURN_IF_ERROR(scope_.status());
    if (static_cast<int>(dx.size()) != node.num_inputs()) {
      return errors::Internal(
          "node '{}' ({}): the gradient function returned {} gradients for {} inputs", node.name(),
          node.op_name(), dx.size(), node.num_inputs());
    }
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Edge& e = node.inputs()[i];
      if (!dx[i].valid() || !between_[e.node] || !input_carries(node, i)) continue;
      const Node& src = graph_.node(e.node);
      if (dx[i].dtype() != src.output_type(e.index) ||
          (!dx[i].is_sparse() &&
           !dx[i].dense().shape().compatible_with(src.output_shape(e.index)))) {
        return errors::Internal(
            "node '{}' ({}): the gradient function returned {} {} for input {}, which is {} {}",
            node.name(), node.op_name(), dtype_name(dx[i].dtype()),
            dx[i].values().shape().to_string(), i, dtype_name(src.output_type(e.index)),
            src.output_shape(e.index).to_string());
      }
      add_contribution(e.node, e.index, dx[i]);
    }
    return Status::OK();
  }

  const Scope& scope_;
  const Graph& graph_;
  const std::vector<Output>& ys_;
  const std::vector<Output>& xs_;
  const std::vector<Output>& grad_ys_;
  const std::vector<Output>& stop_gradients_;
  std::unordered_set<int> stop_nodes_;
  const GradientRegistry& registry_;
  const int num_nodes_;  // the graph's nodes before any gradient node was added
  Scope grad_scope_ = scope_;
  std::vector<char> between_;
  // Per node id, per output: the gradients that reached it.
  std::unordered_map<int, std::vector<std::vector<Gradient>>> contributions_;
};

}  // namespace

StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys,
                                                        const GradientRegistry& registry) {
  return GradientBuilder(scope, ys, xs, grad_ys, registry).build();
}

StatusOr<std::vector<Output>> add_gradients(const Scope& scope, const std::vector<Output>& ys,
                                            const std::vector<Output>& xs,
                                            const std::vector<Output>& grad_ys,
                                            const GradientRegistry& registry) {
  GradientBuilder builder(scope, ys, xs, grad_ys, registry);
  TROUPE_ASSIGN_OR_RETURN(std::vector<Gradient> grads, builder.build());
  std::vector<Output> dense;
  for (const Gradient& g : grads)
    dense.push_back(builder.densify(g));
  TROUPE_RETURN_IF_ERROR(scope.status());
  return dense;
}

StatusOr<std::vector<Output>> add_gradients(const Scope& scope, const std::vector<Output>& ys,
                                            const std::vector<Output>& xs,
                                            const std::vector<Output>& grad_ys) {
  return add_gradients(scope, ys, xs, grad_ys, GradientRegistry::global());
}

StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys) {
  return add_gradients_or_slices(scope, ys, xs, grad_ys, GradientRegistry::global());
}

StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys,
                                                        const std::vector<Output>& stop_gradients) {
  return GradientBuilder(scope, ys, xs, grad_ys, GradientRegistry::global(), stop_gradients)
      .build();
}

}  // namespace troupe
