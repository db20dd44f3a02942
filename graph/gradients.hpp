// add_gradients: graph-to-graph reverse-mode automatic differentiation (TensorFlow's
// AddSymbolicGradients, tf.gradients).
//
//   Scope root = Scope::new_root();
//   auto w = ops::Variable(root, {3, 2}, DataType::kFloat);
//   auto loss = ops::Mean(root, ops::Square(root, ops::MatMul(root, x, w)), {0, 1});
//   auto grads = add_gradients(root, {loss}, {w});   // d(loss)/d(w), a [3,2] float tensor
//
// The nodes computing the gradients are added to the scope's graph under
// scope.sub_scope("gradients"): the gradient of a node "MatMul" is built under
// "gradients/MatMul_grad/", sums of several contributions are "gradients/AddN", ...
#pragma once

#include <vector>

#include "troupe/graph/gradient_registry.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {

// Adds nodes computing the gradients of sum(ys) — the sum over every y and every element of
// it, each weighted by grad_ys — with respect to each x, and returns them, one per x, each of
// x's dtype and shape.
//
//   - grad_ys: empty (every weight 1: OnesLike(y)), or one tensor per y of y's dtype and shape
//     (the gradient flowing into y, as TensorFlow's grad_ys).
//   - Only the nodes on a path from some x to some y, through data edges carrying
//     floating-point tensors, are differentiated: control inputs and integer or bool tensors
//     carry no gradient (as TensorFlow's trainable-dtype rule), and the walk does not go
//     upstream of the xs (unless one x lies on a path between another x and the ys).
//   - An x that no y depends on (through such a path) gets an invalid Output() — TensorFlow's
//     None — not zeros; so does an x that is not floating-point.
//   - Several gradient contributions reaching one tensor are summed with AddN; outputs of a
//     node that receive no gradient while others do get ZerosLike.
//   - xs may be Variable outputs (references): the gradient is what the consumers reading the
//     variable's value send back.
//   - Ops declared not differentiable (Shape, Equal, ArgMax, Variable, Assign, queue ops, ...)
//     stop the flow.
//
// Errors (InvalidArgument unless noted): the scope already has an error (that error); an
// invalid y or x, or one from another graph; grad_ys of the wrong count or dtype; a node on a
// path from an x to a y whose op has no registered gradient ("node 'n' (Op): no gradient is
// registered for op Op"); an error a gradient function returns or hits while building (also
// recorded in scope.status()); a gradient function returning the wrong number or dtypes of
// gradients (Internal).
StatusOr<std::vector<Output>> add_gradients(const Scope& scope, const std::vector<Output>& ys,
                                            const std::vector<Output>& xs,
                                            const std::vector<Output>& grad_ys = {});

// The same with the gradient functions of `registry` (a test's, or a tool's own).
StatusOr<std::vector<Output>> add_gradients(const Scope& scope, const std::vector<Output>& ys,
                                            const std::vector<Output>& xs,
                                            const std::vector<Output>& grad_ys,
                                            const GradientRegistry& registry);

// The same, except that a gradient may stay IndexedSlices (graph/indexed_slices.hpp): that of a
// variable read only through gathers (GatherV2 along axis 0, an embedding lookup) holds just the
// gathered rows, several gathers' rows concatenated. (add_gradients densifies those.)
StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys = {});
StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys,
                                                        const GradientRegistry& registry);

// The same, not differentiating through the nodes of `stop_gradients` (TensorFlow's
// stop_gradients): each is a constant for this gradient, nothing flows to its inputs; an x
// among them still gets its own gradient. A stop tensor from another graph is InvalidArgument.
StatusOr<std::vector<Gradient>> add_gradients_or_slices(const Scope& scope,
                                                        const std::vector<Output>& ys,
                                                        const std::vector<Output>& xs,
                                                        const std::vector<Output>& grad_ys,
                                                        const std::vector<Output>& stop_gradients);

}  // namespace troupe
