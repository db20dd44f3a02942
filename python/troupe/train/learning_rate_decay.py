"""tf.train's learning-rate schedules (exponential_decay, natural_exp_decay, inverse_time_decay,
polynomial_decay, cosine_decay, piecewise_constant): ops computing the rate from the global step
at every step, built by troupe's C++ schedules (graph/learning_rate_decay.hpp). Give the result
to an optimizer as its learning rate."""

import numbers

import numpy as np

from .. import _troupe
from ..framework import Tensor, convert_to_tensor, get_default_graph
from ..ops import _t
from ..variables import Variable


def _step(global_step, schedule):
    if global_step is None:
        raise ValueError("global_step is required for %s." % schedule)
    if isinstance(global_step, Variable):
        global_step = global_step.value()
    if not isinstance(global_step, Tensor):
        global_step = convert_to_tensor(global_step)
    return global_step


def _rate(learning_rate):
    if isinstance(learning_rate, Variable):
        learning_rate = learning_rate.value()
    if isinstance(learning_rate, Tensor):
        return learning_rate._output
    return _number(learning_rate, "learning_rate")


def _number(value, what):
    if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (Tensor, Variable)):
        raise TypeError("%s: troupe's schedules take a Python number here, not a Tensor (%s)"
                        % (what, value.name))
    raise TypeError("%s: expected a Python number, got %r" % (what, value))


def _build(fn, step, name, *args):
    g = step.graph
    return _t(fn(g._op_scope(name), *args), g)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), the exponent floored with
    staircase."""
    step = _step(global_step, "exponential_decay")
    return _build(_troupe.exponential_decay, step, name, _rate(learning_rate), step._output,
                  _number(decay_steps, "decay_steps"), _number(decay_rate, "decay_rate"),
                  bool(staircase))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps)."""
    step = _step(global_step, "natural_exp_decay")
    return _build(_troupe.natural_exp_decay, step, name, _rate(learning_rate), step._output,
                  _number(decay_steps, "decay_steps"), _number(decay_rate, "decay_rate"),
                  bool(staircase))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps)."""
    step = _step(global_step, "inverse_time_decay")
    return _build(_troupe.inverse_time_decay, step, name, _rate(learning_rate), step._output,
                  _number(decay_steps, "decay_steps"), _number(decay_rate, "decay_rate"),
                  bool(staircase))


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(learning_rate - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end; with
    cycle, decay_steps grows to the next multiple of the step instead."""
    step = _step(global_step, "polynomial_decay")
    return _build(_troupe.polynomial_decay, step, name, _rate(learning_rate), step._output,
                  _number(decay_steps, "decay_steps"),
                  _number(end_learning_rate, "end_learning_rate"), _number(power, "power"),
                  bool(cycle))


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)."""
    step = _step(global_step, "cosine_decay")
    return _build(_troupe.cosine_decay, step, name, _rate(learning_rate), step._output,
                  _number(decay_steps, "decay_steps"), _number(alpha, "alpha"))


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <=
    boundaries[i], values[-1] after; float32 values."""
    x = _step(x, "piecewise_constant")
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    return _build(_troupe.piecewise_constant, x, name, x._output,
                  [_number(b, "boundaries") for b in boundaries],
                  [_number(v, "values") for v in values])


__all__ = ["cosine_decay", "exponential_decay", "inverse_time_decay", "natural_exp_decay",
           "piecewise_constant", "polynomial_decay"]
