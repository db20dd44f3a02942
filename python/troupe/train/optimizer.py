"""tf.train's optimizers: GradientDescent, Momentum, Adagrad, Adam, and SyncReplicasOptimizer
(graph/optimizers.hpp, graph/sync_replicas_optimizer.hpp). Each update is colocated with its
variable, so it runs where the variable lives (a ps task)."""

import numbers

from .. import _troupe
from ..framework import Operation, Tensor, get_default_graph
from ..variables import Variable, global_variables


def _number(value, what):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, Tensor):
        raise TypeError("%s: troupe's optimizers take a Python number, not a Tensor (%s)"
                        % (what, value.name))
    raise TypeError("%s: expected a Python number, got %r" % (what, value))


def _variable_for(graph, ref_output):
    for v in global_variables():
        if v._ref._output == ref_output:
            return v
    return None


def _refs(var_list, what):
    if var_list is None:
        return []
    refs = []
    for v in var_list:
        if isinstance(v, Variable):
            refs.append(v._ref._output)
        elif isinstance(v, Tensor) and v._output.is_ref:
            refs.append(v._output)
        else:
            raise TypeError("%s: expected Variables, got %r" % (what, v))
    return refs


def _global_step_output(global_step):
    if global_step is None:
        return None
    if isinstance(global_step, Variable):
        return global_step._ref._output
    if isinstance(global_step, Tensor) and global_step._output.is_ref:
        return global_step._output
    raise TypeError("global_step: expected a Variable, got %r" % (global_step,))


class Optimizer:
    """The base of troupe's optimizers (tf.train.Optimizer)."""

    def __init__(self, native, name):
        self._native = native
        self._name = name

    def get_name(self):
        return self._name

    def _loss(self, loss):
        if not isinstance(loss, Tensor):
            raise TypeError("loss: expected a Tensor, got %r" % (loss,))
        return loss

    def compute_gradients(self, loss, var_list=None, gate_gradients=1,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """[(gradient or None, variable)] for var_list (default: the trainable variables)."""
        loss = self._loss(loss)
        if grad_loss is not None:
            raise ValueError("compute_gradients: grad_loss is not supported by troupe")
        g = loss.graph
        g._check_not_finalized()
        pairs = self._native.compute_gradients(g._scope, loss._output, _refs(var_list,
                                                                             "var_list"))
        result = []
        for grad, var in pairs:
            v = _variable_for(g, var)
            result.append((Tensor(grad, g) if grad is not None else None, v))
        return result

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One update per variable with a gradient, then global_step += 1; returns the op."""
        g = get_default_graph()
        pairs = []
        for grad, var in grads_and_vars:
            if not isinstance(var, Variable):
                raise TypeError("apply_gradients: expected (gradient, Variable) pairs, got %r"
                                % (var,))
            if grad is not None and not isinstance(grad, Tensor):
                raise TypeError("apply_gradients: gradient for %s must be a Tensor or None, "
                                "got %r" % (var.name, grad))
            pairs.append((grad._output if grad is not None else None, var._ref._output))
        op = self._native.apply_gradients(g._op_scope(name), pairs,
                                          _global_step_output(global_step))
        return Operation(op, g)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        loss = self._loss(loss)
        if grad_loss is not None:
            raise ValueError("minimize: grad_loss is not supported by troupe")
        g = loss.graph
        op = self._native.minimize(g._op_scope(name), loss._output,
                                   _global_step_output(global_step), _refs(var_list, "var_list"))
        return Operation(op, g)


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(_troupe.GradientDescentOptimizer(_number(learning_rate,
                                                                  "learning_rate")), name)


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(_troupe.MomentumOptimizer(_number(learning_rate, "learning_rate"),
                                                   _number(momentum, "momentum"),
                                                   bool(use_nesterov)), name)


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        value = _number(initial_accumulator_value, "initial_accumulator_value")
        if value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % value)
        super().__init__(_troupe.AdagradOptimizer(_number(learning_rate, "learning_rate"),
                                                  value), name)


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(_troupe.AdamOptimizer(_number(learning_rate, "learning_rate"),
                                               _number(beta1, "beta1"), _number(beta2, "beta2"),
                                               _number(epsilon, "epsilon")), name)


class SyncReplicasOptimizer:
    """Synchronous training: workers' gradients are averaged on the ps, applied once
    `replicas_to_aggregate` are in; pass make_session_run_hook(is_chief) to the
    MonitoredTrainingSession. Only minimize() is supported."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if not isinstance(opt, Optimizer):
            raise TypeError("SyncReplicasOptimizer: opt must be a troupe optimizer, got %r"
                            % (opt,))
        if variable_averages is not None:
            raise ValueError("SyncReplicasOptimizer: variable_averages is not supported")
        total = replicas_to_aggregate if total_num_replicas is None else total_num_replicas
        for what, value in (("replicas_to_aggregate", replicas_to_aggregate),
                            ("total_num_replicas", total)):
            if not isinstance(value, int) or value < 1:
                raise ValueError("SyncReplicasOptimizer: %s must be an int >= 1, got %r"
                                 % (what, value))
        self._native = _troupe.SyncReplicasOptimizer(opt._native, replicas_to_aggregate, total)
        self._total = total
        self._built = False

    def minimize(self, loss, global_step=None, var_list=None, name=None, **unused):
        if global_step is None or not isinstance(global_step, Variable):
            raise ValueError("SyncReplicasOptimizer.minimize needs global_step (a Variable)")
        if var_list is not None:
            raise ValueError("SyncReplicasOptimizer.minimize: var_list is not supported; it "
                             "trains every trainable variable")
        g = loss.graph
        g._check_not_finalized()
        op = self._native.minimize(g._scope, loss._output, global_step.op.name,
                                   g._worker_device())
        self._built = True
        return Operation(op, g)

    def compute_gradients(self, *args, **kwargs):
        raise ValueError("SyncReplicasOptimizer: use minimize(loss, global_step=...) in troupe")

    apply_gradients = compute_gradients

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that runs the chief's update loop and starts each worker's local step."""
        if not self._built:
            raise ValueError("SyncReplicasOptimizer.minimize() must be called before "
                             "make_session_run_hook()")
        return _SyncReplicasHookSpec(self, bool(is_chief), num_tokens)


class _SyncReplicasHookSpec:
    """Made into troupe's native SyncReplicasHook by MonitoredTrainingSession."""

    def __init__(self, optimizer, is_chief, num_tokens):
        self.optimizer = optimizer
        self.is_chief = is_chief
        self.num_tokens = num_tokens

    def _native_hook(self, master, config):
        return _troupe.sync_replicas_hook(self.optimizer._native, self.is_chief, master,
                                          self.num_tokens > 0, config)
