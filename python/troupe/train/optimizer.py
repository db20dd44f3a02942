"""tf.train's optimizers: GradientDescent, Momentum, Adagrad, Adam, RMSProp, Adadelta, Ftrl,
ProximalGradientDescent, ProximalAdagrad, and SyncReplicasOptimizer (graph/optimizers.hpp,
graph/sync_replicas_optimizer.hpp). Each update is colocated with its variable, so it runs where
the variable lives (a ps task). A learning rate may be a number, a scalar Tensor or Variable (a
decayed rate, a placeholder), or a callable returning one, as TensorFlow's optimizers take."""

import numbers

import numpy as np

from .. import _troupe
from .. import logging
from ..framework import (Operation, Tensor, _unwrap_gradient, _wrap_gradient,
                         get_default_graph)
from ..variables import Variable, global_variables


def _number(value, what):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "fiu":
        return float(value)
    if isinstance(value, (Tensor, Variable)):
        raise TypeError("%s: troupe's optimizers take a Python number here, not a Tensor (%s); "
                        "only learning rates (and Momentum's momentum) may be tensors"
                        % (what, value.name))
    raise TypeError("%s: expected a Python number, got %r" % (what, value))


def _hyper(value, what):
    """A learning rate for the native optimizer: a float, or a tensor's native output (checked
    to be a number scalar when the update is built)."""
    if callable(value) and not isinstance(value, (Tensor, Variable)):
        value = value()
    if isinstance(value, Variable):
        value = value.value()
    if isinstance(value, Tensor):
        return value._output
    return _number(value, what)


def _non_negative(value, what):
    value = _number(value, what)
    if value < 0.0:
        raise ValueError("%s %f needs to be positive or zero" % (what, value))
    return value


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
            return self._gradients_weighted(loss, var_list, grad_loss)
        g = loss.graph
        g._check_not_finalized()
        pairs = self._native.compute_gradients(g._scope, loss._output, _refs(var_list,
                                                                             "var_list"))
        return [(_wrap_gradient(grad, g), _variable_for(g, var)) for grad, var in pairs]

    def _gradients_weighted(self, loss, var_list, grad_loss):
        """compute_gradients with the loss's gradient `grad_loss` (TensorFlow's grad_loss:
        d(something)/d(loss), of the loss's shape) in place of ones."""
        from ..gradients import gradients
        from ..variables import trainable_variables
        variables = list(var_list) if var_list is not None else trainable_variables()
        if not variables:
            raise ValueError("No variables to optimize.")
        for v in variables:
            if not isinstance(v, Variable):
                raise TypeError("var_list: expected Variables, got %r" % (v,))
        grads = gradients([loss], [v._ref for v in variables], grad_ys=[grad_loss])
        return list(zip(grads, variables))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One update per variable with a gradient, then global_step += 1; returns the op."""
        g = get_default_graph()
        pairs = []
        for grad, var in grads_and_vars:
            if not isinstance(var, Variable):
                raise TypeError("apply_gradients: expected (gradient, Variable) pairs, got %r"
                                % (var,))
            pairs.append((_unwrap_gradient(grad, "apply_gradients: gradient for %s" % var.name),
                          var._ref._output))
        op = self._native.apply_gradients(g._op_scope(name), pairs,
                                          _global_step_output(global_step))
        return Operation(op, g)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        loss = self._loss(loss)
        if grad_loss is not None:
            return self.apply_gradients(self._gradients_weighted(loss, var_list, grad_loss),
                                        global_step=global_step, name=name)
        g = loss.graph
        op = self._native.minimize(g._op_scope(name), loss._output,
                                   _global_step_output(global_step), _refs(var_list, "var_list"))
        return Operation(op, g)


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(_troupe.GradientDescentOptimizer(_hyper(learning_rate,
                                                                 "learning_rate")), name)


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(_troupe.MomentumOptimizer(_hyper(learning_rate, "learning_rate"),
                                                   _hyper(momentum, "momentum"),
                                                   bool(use_nesterov)), name)


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        value = _number(initial_accumulator_value, "initial_accumulator_value")
        if value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % value)
        super().__init__(_troupe.AdagradOptimizer(_hyper(learning_rate, "learning_rate"),
                                                  value), name)


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
                 use_locking=False, name="Adam"):
        super().__init__(_troupe.AdamOptimizer(_hyper(learning_rate, "learning_rate"),
                                               _number(beta1, "beta1"), _number(beta2, "beta2"),
                                               _number(epsilon, "epsilon")), name)


class RMSPropOptimizer(Optimizer):
    """ms = decay * ms + (1 - decay) * g^2 (ms starting at 1); mom = momentum * mom + lr * g /
    sqrt(ms + epsilon); var -= mom. centered: the variance, ms - mean(g)^2, instead of ms."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        super().__init__(_troupe.RMSPropOptimizer(_hyper(learning_rate, "learning_rate"),
                                                  _number(decay, "decay"),
                                                  _number(momentum, "momentum"),
                                                  _number(epsilon, "epsilon"), bool(centered)),
                         name)


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-08, use_locking=False,
                 name="Adadelta"):
        super().__init__(_troupe.AdadeltaOptimizer(_hyper(learning_rate, "learning_rate"),
                                                   _number(rho, "rho"),
                                                   _number(epsilon, "epsilon")), name)


class FtrlOptimizer(Optimizer):
    """Follow the regularized leader (McMahan et al., 2013), with L1, L2 and L2 shrinkage."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        initial = _non_negative(initial_accumulator_value, "initial_accumulator_value")
        power = _number(learning_rate_power, "learning_rate_power")
        if power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero" % power)
        l1 = _non_negative(l1_regularization_strength, "l1_regularization_strength")
        l2 = _non_negative(l2_regularization_strength, "l2_regularization_strength")
        shrinkage = _non_negative(l2_shrinkage_regularization_strength,
                                  "l2_shrinkage_regularization_strength")
        if accum_name is not None or linear_name is not None:
            raise ValueError("FtrlOptimizer: accum_name and linear_name are not supported by "
                             "troupe (its slots are named <variable>/Ftrl and <variable>/Ftrl_1)")
        super().__init__(_troupe.FtrlOptimizer(_hyper(learning_rate, "learning_rate"), power,
                                               initial, l1, l2, shrinkage), name)


class ProximalGradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(_troupe.ProximalGradientDescentOptimizer(
            _hyper(learning_rate, "learning_rate"),
            _non_negative(l1_regularization_strength, "l1_regularization_strength"),
            _non_negative(l2_regularization_strength, "l2_regularization_strength")), name)


class ProximalAdagradOptimizer(Optimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        value = _number(initial_accumulator_value, "initial_accumulator_value")
        if value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % value)
        super().__init__(_troupe.ProximalAdagradOptimizer(
            _hyper(learning_rate, "learning_rate"), value,
            _non_negative(l1_regularization_strength, "l1_regularization_strength"),
            _non_negative(l2_regularization_strength, "l2_regularization_strength")), name)


def _chief_queue_runner_class():
    from .queue_runner import QueueRunner

    class ChiefQueueRunner(QueueRunner):
        """The chief's update loop. At a clean stop its cancel op releases the workers waiting
        for a token; when an update failed (the coordinator holds the error) it closes the
        token queue instead, so that every worker stops (OutOfRangeError) rather than train
        on without updates."""

        def __init__(self, *args, close_tokens=None, **kwargs):
            super().__init__(*args, **kwargs)
            self._close_tokens = close_tokens

        def _close_on_stop(self, sess, cancel_op, coord, tags):
            coord.wait_for_stop()
            if coord._exc_info_to_raise is not None:
                try:
                    sess.run(self._close_tokens)
                except Exception as e:  # noqa: BLE001
                    logging.info("Ignored exception: %s", e)
            super()._close_on_stop(sess, cancel_op, coord, tags)

    return ChiefQueueRunner


def _ChiefQueueRunner(*args, **kwargs):  # noqa: N802 - built lazily (import cycle)
    return _chief_queue_runner_class()(*args, **kwargs)


class SyncReplicasOptimizer(Optimizer):
    """tf.train.SyncReplicasOptimizer: synchronous data-parallel training. Each worker's
    gradients go to an accumulator next to each variable (on the ps); once
    `replicas_to_aggregate` are in, the chief applies their average with the wrapped optimizer,
    advances the global step and releases the workers with tokens
    (graph/sync_replicas_optimizer.hpp). Gradients computed at an older step are stale and
    dropped, so with total_num_replicas > replicas_to_aggregate the slowest workers are
    backups.

    Run it as TensorFlow 1.x programs do: with a MonitoredTrainingSession and
    make_session_run_hook(is_chief), or with a Supervisor, local_init_op=opt.local_step_init_op
    (opt.chief_init_op on the chief), ready_for_local_init_op=opt.ready_for_local_init_op, the
    chief running get_init_tokens_op() and starting get_chief_queue_runner()."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if not isinstance(opt, Optimizer) or isinstance(opt, SyncReplicasOptimizer):
            raise TypeError("SyncReplicasOptimizer: opt must be a troupe optimizer, got %r"
                            % (opt,))
        if variable_averages is not None or variables_to_average is not None:
            raise ValueError("SyncReplicasOptimizer: variable_averages is not supported by "
                             "troupe")
        total = replicas_to_aggregate if total_num_replicas is None else total_num_replicas
        for what, value in (("replicas_to_aggregate", replicas_to_aggregate),
                            ("total_num_replicas", total)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError("SyncReplicasOptimizer: %s must be an int >= 1, got %r"
                                 % (what, value))
        super().__init__(opt._native, name)
        self._opt = opt
        self._sync = _troupe.SyncReplicasOptimizer(opt._native, replicas_to_aggregate, total)
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total = total
        self._graph = None
        self._train_op = None
        self._chief_queue_runner = None
        self._ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the accumulators, the token queue and this worker's training op: hand in
        the gradients, wait for the chief's token. `global_step` is required."""
        if global_step is None or not hasattr(global_step, "op"):
            raise ValueError("Global step is required to check staleness")
        if self._train_op is not None:
            raise ValueError("SyncReplicasOptimizer.apply_gradients was called already")
        g = get_default_graph()
        g._check_not_finalized()
        pairs = []
        for grad, var in grads_and_vars:
            if not isinstance(var, Variable):
                raise TypeError("apply_gradients: expected (gradient, Variable) pairs, got %r"
                                % (var,))
            pairs.append((_unwrap_gradient(grad, "apply_gradients: gradient for %s" % var.name),
                          var._ref._output))
        if not any(grad is not None for grad, _ in pairs):
            raise ValueError("No gradients provided for any variable.")
        op = self._sync.apply_gradients(g._op_scope(name), pairs, global_step.op.name,
                                        g._worker_device())
        return self._built(g, op)

    def minimize(self, loss, global_step=None, var_list=None, name=None, grad_loss=None,
                 **unused):
        if global_step is None or not hasattr(global_step, "op"):
            raise ValueError("Global step is required to check staleness")
        if var_list is not None or grad_loss is not None:
            return self.apply_gradients(
                self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss),
                global_step, name)
        g = loss.graph
        g._check_not_finalized()
        op = self._sync.minimize(g._scope, loss._output, global_step.op.name,
                                 g._worker_device())
        return self._built(g, op)

    def _built(self, graph, op):
        from ..ops import FIFOQueue, group
        from ..variables import global_variables, report_uninitialized_variables
        self._graph = graph
        self._train_op = Operation(op, graph)
        self._local_step = Tensor(self._sync.local_step, graph)
        self._local_step_init_op = Operation(self._sync.local_step_init, graph)
        self._ready_for_local_init_op = report_uninitialized_variables(global_variables())
        # The chief's update loop as a queue runner on a queue of its own, as TensorFlow's.
        # Its cancel op (run when the coordinator stops: sv.stop(), the end of a monitored
        # session) also puts a token per replica in the token queue, which TensorFlow's does
        # not: a worker still waiting for a token (it read the global step before the last
        # update landed) then ends its step and sees the last step, instead of waiting for
        # ever for an update the chief will no longer make.
        with graph.colocate_with(Tensor(self._sync.token_queue, graph)):
            dummy = FIFOQueue(1, "int32", shapes=[[]], shared_name="dummy_queue",
                              name="dummy_queue")
        release = Operation(self._sync.init_tokens(graph._op_scope("release_tokens"),
                                                   int(self._total)), graph)
        cancel = group(dummy.close(cancel_pending_enqueues=True), release,
                       name="chief_queue_runner_cancel")
        close_tokens = Operation(_troupe.queue_close(graph._op_scope("close_token_queue"),
                                                     self._sync.token_queue, True), graph)
        self._chief_queue_runner = _ChiefQueueRunner(
            dummy, [Operation(self._sync.chief_update, graph)], cancel_op=cancel,
            close_tokens=close_tokens)
        return self._train_op

    def _require_built(self, what):
        if self._train_op is None:
            raise ValueError("%s: call apply_gradients (or minimize) first" % what)

    def get_chief_queue_runner(self):
        """The QueueRunner the chief starts to run the update loop."""
        if self._chief_queue_runner is None:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """An op the chief runs once to put tokens in the queue: replicas_to_aggregate by
        default, so the workers compute their second gradients before the first update."""
        self._require_built("get_init_tokens_op")
        tokens_needed = self._replicas_to_aggregate - self._total
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        if num_tokens <= 0:
            from ..ops import no_op
            return no_op(name="no_init_tokens")
        return Operation(self._sync.init_tokens(self._graph._scope, int(num_tokens)),
                         self._graph)

    @property
    def chief_init_op(self):
        self._require_built("chief_init_op")
        return self._local_step_init_op

    @property
    def local_step_init_op(self):
        self._require_built("local_step_init_op")
        return self._local_step_init_op

    @property
    def ready_for_local_init_op(self):
        self._require_built("ready_for_local_init_op")
        return self._ready_for_local_init_op

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs) if hasattr(self._opt, "get_slot") else None

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs) \
            if hasattr(self._opt, "get_slot_names") else []

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that sets each worker's local step and runs the chief's update loop (and,
        on the chief, puts get_init_tokens_op(num_tokens)'s tokens in the queue). Build it
        before the session starts."""
        self._require_built("make_session_run_hook")
        init_tokens = self.get_init_tokens_op(num_tokens) if is_chief else None
        return _SyncReplicasHookSpec(self, bool(is_chief), init_tokens)


class _SyncReplicasHookSpec:
    """Made into troupe's native SyncReplicasHook by MonitoredTrainingSession."""

    def __init__(self, optimizer, is_chief, init_tokens):
        self.optimizer = optimizer
        self.is_chief = is_chief
        self.init_tokens = init_tokens

    def _native_hook(self, master, config):
        tokens = self.init_tokens._op if self.init_tokens is not None else None
        return _troupe.sync_replicas_hook(self.optimizer._sync, self.is_chief, master, tokens,
                                          config)
