// Optimizers: TensorFlow's tf.train optimizers as graph builders. minimize() adds the gradient
// computation and one update op per variable, each colocated with its variable (so updates run
// where the variables live, usually a ps task), then increments the global step.
//
//   AdamOptimizer optimizer(0.001);
//   TROUPE_ASSIGN_OR_RETURN(Operation train, optimizer.minimize(root, loss, global_step.ref));
//
// Slot variables (momentum accumulators, Adam's moments) are model variables named
// "<variable>/<Optimizer>" (e.g. "layer1/weights/Adam"), initialised by
// global_variables_initializer() and saved by checkpoints like any other.
//
// Learning rates (and Momentum's momentum) are Hyperparameters: a number, or a scalar tensor
// computed every step (a decayed rate, graph/learning_rate_decay.hpp); a tensor that is not a
// number scalar makes apply_gradients InvalidArgument naming it. The formulas are TensorFlow's
// (graph/ops/training_ops.hpp); so are the defaults.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "troupe/graph/hyperparameter.hpp"
#include "troupe/graph/indexed_slices.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe {

struct GradientAndVariable {
  // Invalid when the loss does not depend on the variable; IndexedSlices when only some rows
  // have a gradient (a variable read through gathers, an embedding table).
  Gradient gradient;
  Output variable;  // the Variable node's output (a reference)
};

class Optimizer {
 public:
  explicit Optimizer(std::string name) : name_(std::move(name)) {}
  virtual ~Optimizer() = default;

  const std::string& name() const { return name_; }

  // d(loss)/d(variable) for each of `variables` (default: every trainable variable).
  StatusOr<std::vector<GradientAndVariable>> compute_gradients(
      const Scope& scope, const Output& loss, std::vector<Output> variables = {}) const;

  // One update per variable with a gradient, then (if `global_step` is valid) global_step += 1
  // after them all. Returns the op to run for one training step. InvalidArgument if no
  // variable has a gradient.
  StatusOr<Operation> apply_gradients(const Scope& scope,
                                      const std::vector<GradientAndVariable>& grads_and_vars,
                                      const Output& global_step = Output());

  // compute_gradients + apply_gradients.
  StatusOr<Operation> minimize(const Scope& scope, const Output& loss,
                               const Output& global_step = Output(),
                               std::vector<Output> variables = {});

 protected:
  // Creates the optimizer's slots and shared state (once per apply_gradients call).
  virtual Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) {
    return Status::OK();
  }
  // The op updating `var` with `grad`; `scope` is colocated with the variable. With `indices`
  // valid (distinct row indices), `grad` holds one row per index and only those rows of the
  // variable and its slots are updated (the SparseApply op, TensorFlow's _apply_sparse).
  virtual Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                              const Output& var) = 0;
  // The update from IndexedSlices whose indices may repeat: by default their rows are summed
  // per index first, then apply_update (TensorFlow's _apply_sparse_duplicate_indices).
  virtual Output apply_sparse(const Scope& scope, const IndexedSlices& grad, const Output& var);
  // Ops to run after every update (e.g. Adam's beta powers); default none.
  virtual std::vector<Operation> finish(const Scope& scope, const std::vector<Operation>& updates) {
    return updates;
  }

  // A non-trainable slot variable for `var` of its shape and dtype, every element
  // `initial_value`, on its device.
  Output make_slot(const Scope& scope, const Output& var, const std::string& slot_name,
                   double initial_value);
  // The slot made for `var` under `slot_name`.
  Output slot(const Output& var, const std::string& slot_name) const;
  // A scalar of `var`'s dtype: a constant, or `value`'s tensor (cast if needed); `what` names it
  // in errors.
  static Output scalar_like(const Scope& scope, const Output& var, const Hyperparameter& value,
                            const std::string& what = "a hyperparameter");

 private:
  std::string name_;
  std::vector<std::pair<std::string, Output>> slots_;  // "<var>/<slot>" -> slot ref
};

class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(Hyperparameter learning_rate)
      : Optimizer("GradientDescent"), learning_rate_(std::move(learning_rate)) {}

 protected:
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;
  Output apply_sparse(const Scope& scope, const IndexedSlices& grad, const Output& var) override;

 private:
  Hyperparameter learning_rate_;
};

class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(Hyperparameter learning_rate, Hyperparameter momentum,
                    bool use_nesterov = false)
      : Optimizer("Momentum"),
        learning_rate_(std::move(learning_rate)),
        momentum_(std::move(momentum)),
        use_nesterov_(use_nesterov) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  Hyperparameter momentum_;
  bool use_nesterov_;
};

class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(Hyperparameter learning_rate, double initial_accumulator_value = 0.1)
      : Optimizer("Adagrad"),
        learning_rate_(std::move(learning_rate)),
        initial_accumulator_value_(initial_accumulator_value) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  double initial_accumulator_value_;
};

class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(Hyperparameter learning_rate = 0.001, double beta1 = 0.9,
                         double beta2 = 0.999, double epsilon = 1e-8)
      : Optimizer("Adam"),
        learning_rate_(std::move(learning_rate)),
        beta1_(beta1),
        beta2_(beta2),
        epsilon_(epsilon) {}

  // As tf.contrib.opt.LazyAdamOptimizer: a sparse gradient updates the moments and the variable
  // in its rows only (SparseApplyAdam). Otherwise, as TensorFlow's AdamOptimizer, the moments
  // of every row decay and every row of the variable moves, every step.
  void set_lazy(bool lazy) { lazy_ = lazy; }

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;
  std::vector<Operation> finish(const Scope& scope, const std::vector<Operation>& updates) override;

 private:
  Hyperparameter learning_rate_;
  double beta1_;
  double beta2_;
  double epsilon_;
  bool lazy_ = false;
  Output beta1_power_;
  Output beta2_power_;
};

// Slots "RMSProp" (the mean square, starting at 1 as TensorFlow 1.x's), "RMSProp_1" (the
// momentum) and, when centered, "RMSProp_2" (the mean gradient).
class RMSPropOptimizer : public Optimizer {
 public:
  struct Options {
    double decay = 0.9;
    double momentum = 0.0;
    double epsilon = 1e-10;
    bool centered = false;
  };
  explicit RMSPropOptimizer(Hyperparameter learning_rate)
      : RMSPropOptimizer(std::move(learning_rate), Options{}) {}
  RMSPropOptimizer(Hyperparameter learning_rate, Options options)
      : Optimizer("RMSProp"), learning_rate_(std::move(learning_rate)), options_(options) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  Options options_;
};

// Slots "Adadelta" (accumulated squared gradients) and "Adadelta_1" (squared updates).
class AdadeltaOptimizer : public Optimizer {
 public:
  explicit AdadeltaOptimizer(Hyperparameter learning_rate = 0.001, double rho = 0.95,
                             double epsilon = 1e-8)
      : Optimizer("Adadelta"),
        learning_rate_(std::move(learning_rate)),
        rho_(rho),
        epsilon_(epsilon) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  double rho_;
  double epsilon_;
};

// Slots "Ftrl" (the accumulator, starting at initial_accumulator_value) and "Ftrl_1" (linear).
// The kernel rejects (InvalidArgument) a learning rate <= 0, negative strengths, or a
// learning_rate_power > 0.
class FtrlOptimizer : public Optimizer {
 public:
  struct Options {
    double learning_rate_power = -0.5;
    double initial_accumulator_value = 0.1;
    double l1_regularization_strength = 0.0;
    double l2_regularization_strength = 0.0;
    double l2_shrinkage_regularization_strength = 0.0;
  };
  explicit FtrlOptimizer(Hyperparameter learning_rate)
      : FtrlOptimizer(std::move(learning_rate), Options{}) {}
  FtrlOptimizer(Hyperparameter learning_rate, Options options)
      : Optimizer("Ftrl"), learning_rate_(std::move(learning_rate)), options_(options) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  Options options_;
};

class ProximalGradientDescentOptimizer : public Optimizer {
 public:
  explicit ProximalGradientDescentOptimizer(Hyperparameter learning_rate, double l1 = 0.0,
                                            double l2 = 0.0)
      : Optimizer("ProximalGradientDescent"),
        learning_rate_(std::move(learning_rate)),
        l1_(l1),
        l2_(l2) {}

 protected:
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  double l1_;
  double l2_;
};

// Slot "ProximalAdagrad" (the accumulator, starting at initial_accumulator_value).
class ProximalAdagradOptimizer : public Optimizer {
 public:
  explicit ProximalAdagradOptimizer(Hyperparameter learning_rate,
                                    double initial_accumulator_value = 0.1, double l1 = 0.0,
                                    double l2 = 0.0)
      : Optimizer("ProximalAdagrad"),
        learning_rate_(std::move(learning_rate)),
        initial_accumulator_value_(initial_accumulator_value),
        l1_(l1),
        l2_(l2) {}

 protected:
  Status prepare(const Scope& scope, const std::vector<GradientAndVariable>& updates) override;
  Output apply_update(const Scope& scope, const Output& grad, const Output& indices,
                      const Output& var) override;

 private:
  Hyperparameter learning_rate_;
  double initial_accumulator_value_;
  double l1_;
  double l2_;
};

}  // namespace troupe
