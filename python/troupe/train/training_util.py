"""The global step (tf.train.get_or_create_global_step)."""

from .. import _troupe
from ..framework import Operation, Tensor, get_default_graph
from ..variables import Variable


def get_or_create_global_step(graph=None):
    """The int64 scalar variable "global_step" (0 at first), created on first call."""
    g = graph or get_default_graph()
    existing = g._variables.get("global_step")
    if existing is not None:
        return existing
    g._check_not_finalized()
    ref, init = _troupe.get_or_create_global_step(g._scope)
    v = Variable(_existing=(ref, init), trainable=False, collections=["variables", "global_step"])
    return v


def get_global_step(graph=None):
    g = graph or get_default_graph()
    return g._variables.get("global_step")


def global_step(sess, global_step_tensor):
    return int(sess.run(global_step_tensor))
