"""tf.contrib.training's strategies for placing variables on parameter servers:
GreedyLoadBalancingStrategy and byte_size_load_fn, as TensorFlow 1.x defines them (a
replica_device_setter ps_strategy)."""

import numpy as np

from ..framework import TensorShape


class GreedyLoadBalancingStrategy:
    """Places each ps op on the least-loaded ps task so far (the lowest index among equal
    loads), then adds load_fn(op) to that task's load. Sensitive to the order in which the
    variables are made, as TensorFlow's."""

    def __init__(self, num_tasks, load_fn):
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op):
        task = np.argmin(self._ps_loads)
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The bytes of a single-output op's value (a variable's): ValueError when the op has
    another number of outputs or its shape is not fully defined."""
    if len(op.outputs) != 1:
        raise ValueError("Op %s must have a single output" % op)
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined():
        shape = TensorShape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * output.dtype.size


from .hparams import HParams, parse_values  # noqa: E402,F401 - tf.contrib.training's names
