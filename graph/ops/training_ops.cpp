// Optimizer update ops: definitions (dtypes, shape checks) and builders.
#include "troupe/graph/ops/training_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// One optimizer update: the Apply op's inputs in order, the first `num_refs` of them the
// variable and its slots (references), `grad` the gradient, the rest scalars.
struct UpdateSpec {
  const char* kind;  // "Adagrad": ApplyAdagrad and SparseApplyAdagrad
  std::vector<const char*> inputs;
  int num_refs;
  int grad;
  bool nesterov = false;
  bool sparse = true;  // whether a SparseApply op exists
};

const std::vector<UpdateSpec>& update_specs() {
  static const std::vector<UpdateSpec> specs = {
      {"GradientDescent", {"var", "alpha", "delta"}, 1, 2, false, false},
      {"Momentum", {"var", "accum", "lr", "grad", "momentum"}, 2, 3, true},
      {"Adagrad", {"var", "accum", "lr", "grad"}, 2, 3},
      {"Adam",
       {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
       3,
       9,
       true},
      {"RMSProp", {"var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"}, 3, 7},
      {"CenteredRMSProp",
       {"var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"},
       4,
       8},
      {"Adadelta", {"var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"}, 3, 6},
      {"FtrlV2",
       {"var", "accum", "linear", "grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"},
       3,
       3},
      {"ProximalGradientDescent", {"var", "alpha", "l1", "l2", "delta"}, 1, 4},
      {"ProximalAdagrad", {"var", "accum", "lr", "l1", "l2", "grad"}, 2, 5},
  };
  return specs;
}

// The slots have the variable's shape and the scalars rank 0; a dense gradient has the
// variable's shape, a sparse one (input grad + 1 holds its row indices, a vector) the
// variable's shape with any number of rows.
ShapeFn update_shape(int num_refs, int grad, bool sparse) {
  return [num_refs, grad, sparse](InferenceContext& c) -> Status {
    PartialShape shape = c.input(0);
    for (int i = 1; i < num_refs; ++i) {
      auto merged = shape.merge(c.input(i));
      if (!merged.ok()) {
        return c.invalid("input {} has shape {}, the variable {}", i, c.input(i).to_string(),
                         c.input(0).to_string());
      }
      shape = *merged;
    }
    const PartialShape& g = c.input(grad);
    if (!sparse && !g.compatible_with(shape)) {
      return c.invalid("the gradient has shape {}, the variable {}", g.to_string(),
                       shape.to_string());
    }
    if (sparse) {
      const PartialShape& indices = c.input(grad + 1);
      if (indices.rank_known() && indices.rank() != 1) {
        return c.invalid("indices must be a vector, got shape {}", indices.to_string());
      }
      if (shape.rank_known() && g.rank_known()) {
        std::vector<int64_t> rows = shape.dims();
        if (rows.empty()) return c.invalid("a sparse update needs a variable of rank >= 1");
        rows[0] = indices.rank_known() ? indices.dim(0) : -1;
        if (!g.compatible_with(PartialShape(rows))) {
          return c.invalid("the gradient has shape {}, expected {} (a row per index)",
                           g.to_string(), PartialShape(rows).to_string());
        }
      }
    }
    for (int i = num_refs; i < c.num_inputs(); ++i) {
      if (i == grad || (sparse && i == grad + 1)) continue;
      if (c.input(i).rank_known() && c.input(i).rank() != 0) {
        return c.invalid("input {} must be a scalar, got shape {}", i, c.input(i).to_string());
      }
    }
    c.set_output(0, shape);
    return Status::OK();
  };
}

void register_update(OpRegistry& r, const UpdateSpec& spec, bool sparse) {
  OpDefBuilder builder(std::string(sparse ? "SparseApply" : "Apply") + spec.kind);
  for (int i = 0; i < static_cast<int>(spec.inputs.size()); ++i) {
    const std::string name = spec.inputs[i];
    builder.input(name + (i < spec.num_refs ? ": Ref(T)" : ": T"));
    if (sparse && i == spec.grad) builder.input("indices: Tindices");
  }
  builder.output("out: Ref(T)").attr("T: {float32, float64}").attr("use_locking: bool = false");
  if (sparse) builder.attr("Tindices: {int32, int64}");
  if (spec.nesterov) builder.attr("use_nesterov: bool = false");
  must_register(r, builder.stateful().shape_fn(update_shape(spec.num_refs, spec.grad, sparse)));
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  for (const UpdateSpec& spec : update_specs()) {
    register_update(r, spec, /*sparse=*/false);
    if (spec.sparse) register_update(r, spec, /*sparse=*/true);
  }
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
  return ApplyUpdate(s, "GradientDescent", {var, alpha, delta});
}

Output ApplyMomentum(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                     const Input& grad, const Input& momentum, bool use_nesterov) {
  return ApplyUpdate(s, "Momentum", {var, accum, lr, grad, momentum}, Output(), use_nesterov);
}

Output ApplyAdagrad(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                    const Input& grad) {
  return ApplyUpdate(s, "Adagrad", {var, accum, lr, grad});
}

Output ApplyAdam(const Scope& s, const Input& var, const Input& m, const Input& v,
                 const Input& beta1_power, const Input& beta2_power, const Input& lr,
                 const Input& beta1, const Input& beta2, const Input& epsilon, const Input& grad) {
  return ApplyUpdate(s, "Adam",
                     {var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad});
}

Output ApplyRMSProp(const Scope& s, const Input& var, const Input& ms, const Input& mom,
                    const Input& lr, const Input& rho, const Input& momentum, const Input& epsilon,
                    const Input& grad) {
  return ApplyUpdate(s, "RMSProp", {var, ms, mom, lr, rho, momentum, epsilon, grad});
}

Output ApplyCenteredRMSProp(const Scope& s, const Input& var, const Input& mg, const Input& ms,
                            const Input& mom, const Input& lr, const Input& rho,
                            const Input& momentum, const Input& epsilon, const Input& grad) {
  return ApplyUpdate(s, "CenteredRMSProp", {var, mg, ms, mom, lr, rho, momentum, epsilon, grad});
}

Output ApplyAdadelta(const Scope& s, const Input& var, const Input& accum,
                     const Input& accum_update, const Input& lr, const Input& rho,
                     const Input& epsilon, const Input& grad) {
  return ApplyUpdate(s, "Adadelta", {var, accum, accum_update, lr, rho, epsilon, grad});
}

Output ApplyFtrlV2(const Scope& s, const Input& var, const Input& accum, const Input& linear,
                   const Input& grad, const Input& lr, const Input& l1, const Input& l2,
                   const Input& l2_shrinkage, const Input& lr_power) {
  return ApplyUpdate(s, "FtrlV2", {var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power});
}

Output ApplyProximalGradientDescent(const Scope& s, const Input& var, const Input& alpha,
                                    const Input& l1, const Input& l2, const Input& delta) {
  return ApplyUpdate(s, "ProximalGradientDescent", {var, alpha, l1, l2, delta});
}

Output ApplyProximalAdagrad(const Scope& s, const Input& var, const Input& accum, const Input& lr,
                            const Input& l1, const Input& l2, const Input& grad) {
  return ApplyUpdate(s, "ProximalAdagrad", {var, accum, lr, l1, l2, grad});
}

Output ApplyUpdate(const Scope& s, std::string_view kind, const std::vector<Input>& inputs,
                   const Output& indices, std::optional<bool> use_nesterov) {
  const bool sparse = indices.valid();
  for (const UpdateSpec& spec : update_specs()) {
    if (spec.kind != kind) continue;
    if (inputs.size() != spec.inputs.size() || (sparse && !spec.sparse)) break;
    NodeBuilder builder(s, std::string(sparse ? "SparseApply" : "Apply") + spec.kind);
    for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
      builder.input(inputs[i]);
      if (sparse && i == spec.grad) builder.input(indices);
    }
    if (use_nesterov) builder.attr("use_nesterov", *use_nesterov);
    return builder.finalize();
  }
  s.update_status(errors::InvalidArgument("ApplyUpdate: no {} update '{}' taking {} inputs",
                                          sparse ? "sparse" : "dense", kind, inputs.size()));
  return Output();
}

Output IsVariableInitialized(const Scope& s, const Input& ref) {
  return NodeBuilder(s, "IsVariableInitialized").input(ref).finalize();
}

}  // namespace ops
}  // namespace troupe
