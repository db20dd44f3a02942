// GradientRegistry: how to differentiate each op, by op name (TensorFlow's REGISTER_GRADIENT_OP
// and NotDifferentiable).
//
// A gradient function builds, in the scope it is given, the nodes that turn the gradients with
// respect to an op's outputs into the gradients with respect to its inputs:
//
//   Status square_grad(const Scope& scope, const Operation& op,
//                      const std::vector<Output>& grad_outputs,
//                      std::vector<Output>* grad_inputs) {
//     Output x = op_input(op, 0);
//     grad_inputs->push_back(ops::Mul(scope, grad_outputs[0], ops::Mul(scope, x, 2.0)));
//     return scope.status();
//   }
//
// The contract, which add_gradients (graph/gradients.hpp) keeps:
//   - grad_outputs has one entry per output of `op`. For a floating-point output it is a valid
//     tensor of the output's dtype and shape (zeros where nothing flowed back to that output);
//     for any other output it is an invalid Output(), which the function must ignore.
//   - the function sets *grad_inputs to one entry per data input of `op` (inputs of a list
//     argument counted one by one): the gradient for that input, of its dtype and shape, or an
//     invalid Output() for "no gradient" (an integer input such as axes or a shape, say).
//   - it returns an error, or scope.status() after building.
// An op declared not differentiable stops the flow: nothing flows back through it.
//
// A few ops also have a sparse gradient function (SparseGradFn), which takes and returns
// Gradients (graph/indexed_slices.hpp): GatherV2 returns IndexedSlices for its params, Identity
// passes them on. add_gradients calls it in preference to the GradFn; an op without one gets
// its incoming IndexedSlices densified first.
//
// The global registry holds troupe's built-in gradients (graph/gradients/) and takes users'
// own; it is safe to use from several threads.
#pragma once

#include <functional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "troupe/graph/indexed_slices.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {

using GradFn = std::function<Status(const Scope& scope, const Operation& op,
                                    const std::vector<Output>& grad_outputs,
                                    std::vector<Output>* grad_inputs)>;

// The same contract, with Gradients: an entry of grad_outputs may be IndexedSlices, and so
// may an entry of *grad_inputs (with values of the input's dtype, for a dense shape of the
// input's shape).
using SparseGradFn = std::function<Status(const Scope& scope, const Operation& op,
                                          const std::vector<Gradient>& grad_outputs,
                                          std::vector<Gradient>* grad_inputs)>;

class GradientRegistry {
 public:
  GradientRegistry() = default;
  GradientRegistry(const GradientRegistry&) = delete;
  GradientRegistry& operator=(const GradientRegistry&) = delete;

  // The process-wide registry with the gradients of all built-in ops registered.
  static GradientRegistry& global();

  // Registers the gradient of `op`. AlreadyExists if `op` has a gradient or was declared not
  // differentiable; InvalidArgument for an empty function.
  Status register_gradient(std::string op, GradFn fn);
  // Declares that `op` has no gradient (TensorFlow's NotDifferentiable): gradients stop there.
  // AlreadyExists as for register_gradient.
  Status not_differentiable(std::string op);

  // Registers the sparse gradient of `op`, which must have a (dense) gradient already.
  // AlreadyExists if it has a sparse one; NotFound if it has no gradient; InvalidArgument for
  // an empty function.
  Status register_sparse_gradient(std::string op, SparseGradFn fn);

  // The gradient function of `op`; an empty GradFn if it was declared not differentiable;
  // NotFound if neither was registered.
  StatusOr<GradFn> lookup(std::string_view op) const;
  // The sparse gradient function of `op`, or an empty one if it has none.
  SparseGradFn lookup_sparse(std::string_view op) const;

  // Every op with an entry, sorted.
  std::vector<std::string> op_names() const;

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, GradFn> fns_;  // an empty GradFn: not differentiable
  std::unordered_map<std::string, SparseGradFn> sparse_fns_;
};

// Registration that cannot fail unless troupe has a bug (a duplicate): a failure ends the
// process (graph/core/check.hpp).
void must_register_gradient(GradientRegistry& registry, std::string op, GradFn fn);
void must_declare_not_differentiable(GradientRegistry& registry, std::string op);
void must_register_sparse_gradient(GradientRegistry& registry, std::string op, SparseGradFn fn);

// Data input `i` of `op` (inputs of a list argument counted one by one): the output feeding it.
// For a reference input (a variable), the reference; a consumer reads its value.
Output op_input(const Operation& op, int i);

// Attribute `name` of `op`, which its op declares (defaults are filled in once a node is in a
// Graph, so a declared attribute is always present).
template <class T>
const T& op_attr(const Operation& op, std::string_view name) {
  return op.node()->def().find_attr(name)->get<T>();
}

}  // namespace troupe
