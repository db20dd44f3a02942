// Optimizer update ops: definitions (dtypes, shape checks) and builders.
#include "troupe/graph/ops/training_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// Inputs listed in `same_as_var` must have the variable's shape, those in `scalars` rank 0.
ShapeFn update_shape(std::vector<int> same_as_var, std::vector<int> scalars) {
  return [same_as_var, scalars](InferenceContext& c) -> Status {
    PartialShape shape = c.input(0);
    for (int i : same_as_var) {
      auto merged = shape.merge(c.input(i));
      if (!merged.ok()) {
        return c.invalid("input {} has shape {}, the variable {}", i, c.input(i).to_string(),
                         c.input(0).to_string());
      }
      shape = *merged;
    }
    for (int i : scalars) {
      if (c.input(i).rank_known() && c.input(i).rank() != 0) {
        return c.invalid("input {} must be a scalar, got shape {}", i, c.input(i).to_string());
      }
    }
    c.set_output(0, shape);
    return Status::OK();
  };
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  constexpr std::string_view kT = "T: {float32, float64}";
  must_register(r, OpDefBuilder("ApplyGradientDescent")
                       .input("var: Ref(T)")
                       .input("alpha: T")
                       .input("delta: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({2}, {1})));
  must_register(r, OpDefBuilder("ApplyMomentum")
                       .input("var: Ref(T)")
                       .input("accum: Ref(T)")
                       .input("lr: T")
                       .input("grad: T")
                       .input("momentum: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .attr("use_nesterov: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 3}, {2, 4})));
  must_register(r, OpDefBuilder("ApplyAdagrad")
                       .input("var: Ref(T)")
                       .input("accum: Ref(T)")
                       .input("lr: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 3}, {2})));
  must_register(r, OpDefBuilder("ApplyAdam")
                       .input("var: Ref(T)")
                       .input("m: Ref(T)")
                       .input("v: Ref(T)")
                       .input("beta1_power: T")
                       .input("beta2_power: T")
                       .input("lr: T")
                       .input("beta1: T")
                       .input("beta2: T")
                       .input("epsilon: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .attr("use_nesterov: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 2, 9}, {3, 4, 5, 6, 7, 8})));
  must_register(r, OpDefBuilder("ApplyRMSProp")
                       .input("var: Ref(T)")
                       .input("ms: Ref(T)")
                       .input("mom: Ref(T)")
                       .input("lr: T")
                       .input("rho: T")
                       .input("momentum: T")
                       .input("epsilon: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 2, 7}, {3, 4, 5, 6})));
  must_register(r, OpDefBuilder("ApplyCenteredRMSProp")
                       .input("var: Ref(T)")
                       .input("mg: Ref(T)")
                       .input("ms: Ref(T)")
                       .input("mom: Ref(T)")
                       .input("lr: T")
                       .input("rho: T")
                       .input("momentum: T")
                       .input("epsilon: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 2, 3, 8}, {4, 5, 6, 7})));
  must_register(r, OpDefBuilder("ApplyAdadelta")
                       .input("var: Ref(T)")
                       .input("accum: Ref(T)")
                       .input("accum_update: Ref(T)")
                       .input("lr: T")
                       .input("rho: T")
                       .input("epsilon: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 2, 6}, {3, 4, 5})));
  must_register(r, OpDefBuilder("ApplyFtrlV2")
                       .input("var: Ref(T)")
                       .input("accum: Ref(T)")
                       .input("linear: Ref(T)")
                       .input("grad: T")
                       .input("lr: T")
                       .input("l1: T")
                       .input("l2: T")
                       .input("l2_shrinkage: T")
                       .input("lr_power: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 2, 3}, {4, 5, 6, 7, 8})));
  must_register(r, OpDefBuilder("ApplyProximalGradientDescent")
                       .input("var: Ref(T)")
                       .input("alpha: T")
                       .input("l1: T")
                       .input("l2: T")
                       .input("delta: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({4}, {1, 2, 3})));
  must_register(r, OpDefBuilder("ApplyProximalAdagrad")
                       .input("var: Ref(T)")
                       .input("accum: Ref(T)")
                       .input("lr: T")
                       .input("l1: T")
                       .input("l2: T")
                       .input("grad: T")
                       .output("out: Ref(T)")
                       .attr(kT)
                       .attr("use_locking: bool = false")
                       .stateful()
                       .shape_fn(update_shape({1, 5}, {2, 3, 4})));
  must_register(r, OpDefBuilder("IsVariableInitialized")
                       .input("ref: Ref(dtype)")
                       .output("is_initialized: bool")
                       .attr("dtype: type")
                       .stateful()
                       .shape_fn(shapes::scalar));
}

namespace ops {

Output ApplyGradientDescent(const Scope& s, const Input& var, const Input& alpha,
                            const Input& delta) {
  return NodeBuilder(s, "ApplyGradientDescent").input(var).input(alpha).input(delta).finalize();
}

Output ApplyMomentum(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                     const Input& grad, const Input& momentum, bool use_nesterov) {
  return NodeBuilder(s, "ApplyMomentum")
      .input(var)
      .input(accum)
      .input(lr)
      .input(grad)
      .input(momentum)
      .attr("use_nesterov", use_nesterov)
      .finalize();
}

Output ApplyAdagrad(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                    const Input& grad) {
  return NodeBuilder(s, "ApplyAdagrad").input(var).input(accum).input(lr).input(grad).finalize();
}

Output ApplyAdam(const Scope& s, const Input& var, const Input& m, const Input& v,
                 const Input& beta1_power, const Input& beta2_power, const Input& lr,
                 const Input& beta1, const Input& beta2, const Input& epsilon, const Input& grad) {
  return NodeBuilder(s, "ApplyAdam")
      .input(var)
      .input(m)
      .input(v)
      .input(beta1_power)
      .input(beta2_power)
      .input(lr)
      .input(beta1)
      .input(beta2)
      .input(epsilon)
      .input(grad)
      .finalize();
}

namespace {

// Builds `op` with `inputs` in order.
Output apply(const Scope& s, const char* op, std::initializer_list<Input> inputs) {
  NodeBuilder builder(s, op);
  for (const Input& input : inputs)
    builder.input(input);
  return builder.finalize();
}

}  // namespace

Output ApplyRMSProp(const Scope& s, const Input& var, const Input& ms, const Input& mom,
                    const Input& lr, const Input& rho, const Input& momentum, const Input& epsilon,
                    const Input& grad) {
  return apply(s, "ApplyRMSProp", {var, ms, mom, lr, rho, momentum, epsilon, grad});
}

Output ApplyCenteredRMSProp(const Scope& s, const Input& var, const Input& mg, const Input& ms,
                            const Input& mom, const Input& lr, const Input& rho,
                            const Input& momentum, const Input& epsilon, const Input& grad) {
  return apply(s, "ApplyCenteredRMSProp", {var, mg, ms, mom, lr, rho, momentum, epsilon, grad});
}

Output ApplyAdadelta(const Scope& s, const Input& var, const Input& accum,
                     const Input& accum_update, const Input& lr, const Input& rho,
                     const Input& epsilon, const Input& grad) {
  return apply(s, "ApplyAdadelta", {var, accum, accum_update, lr, rho, epsilon, grad});
}

Output ApplyFtrlV2(const Scope& s, const Input& var, const Input& accum, const Input& linear,
                   const Input& grad, const Input& lr, const Input& l1, const Input& l2,
                   const Input& l2_shrinkage, const Input& lr_power) {
  return apply(s, "ApplyFtrlV2", {var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power});
}

Output ApplyProximalGradientDescent(const Scope& s, const Input& var, const Input& alpha,
                                    const Input& l1, const Input& l2, const Input& delta) {
  return apply(s, "ApplyProximalGradientDescent", {var, alpha, l1, l2, delta});
}

Output ApplyProximalAdagrad(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                            const Input& l1, const Input& l2, const Input& grad) {
  return apply(s, "ApplyProximalAdagrad", {var, accum, lr, l1, l2, grad});
}

Output IsVariableInitialized(const Scope& s, const Input& ref) {
  return NodeBuilder(s, "IsVariableInitialized").input(ref).finalize();
}

}  // namespace ops
}  // namespace troupe
