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

Output IsVariableInitialized(const Scope& s, const Input& ref) {
  return NodeBuilder(s, "IsVariableInitialized").input(ref).finalize();
}

}  // namespace ops
}  // namespace troupe
