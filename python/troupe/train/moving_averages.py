"""tf.train.ExponentialMovingAverage, as TensorFlow 1.x defines it: apply(var_list) makes a
shadow variable "<var>/<name>" for each variable (initialized to the variable's initial value,
placed with it) or tensor (initialized to zeros), and returns an op that moves each shadow
toward its variable's current value: shadow -= (1 - decay) * (shadow - value), decay being
min(decay, (1 + num_updates) / (10 + num_updates)) when num_updates is given. average(),
average_name() and variables_to_restore() give the shadows and the names a Saver uses to load
the averages into the variables themselves (for evaluation)."""

from .. import dtypes as _dtypes
from ..framework import GraphKeys, Tensor, colocate_with, convert_to_tensor, name_scope


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        if zero_debias:
            raise ValueError("ExponentialMovingAverage: zero_debias=True is not supported by "
                             "troupe (the averages of tensors start at 0 and are not debiased)")
        self._decay = decay
        self._num_updates = num_updates
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """An op that updates the moving averages of var_list (the trainable variables by
        default), making their shadow variables the first time."""
        from ..framework import get_default_graph
        from ..ops import assign_sub, cast, group, minimum
        from ..variables import (Variable, get_variable, trainable_variables,
                                 variable_scope, zeros_initializer)
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        for var in var_list:
            if var.dtype not in (_dtypes.float32, _dtypes.float64):
                raise TypeError("The variables must be half, float, or double: %s" % var.name)
            if id(var) in self._averages:
                raise ValueError("Moving average already computed for: %s" % var.name)
        graph = get_default_graph()
        from ..partitioned_variables import PartitionedVariable
        for var in var_list:
            if isinstance(var, PartitionedVariable):
                raise ValueError("ExponentialMovingAverage: %s is partitioned, which troupe's "
                                 "moving averages do not support: average its shards' values "
                                 "instead" % var.name)
        for var in var_list:
            # Free of the enclosing control dependencies and cond branch, as TensorFlow's:
            # the shadows' initializers must not run a training step.
            with graph.control_dependencies(None), variable_scope(var.op.name):
                if isinstance(var, Variable):
                    with colocate_with(var):
                        avg = get_variable(self._name, initializer=var.initialized_value(),
                                           dtype=var.dtype, trainable=False)
                    graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    tensor = var if isinstance(var, Tensor) else convert_to_tensor(var)
                    if not tensor.shape.is_fully_defined():
                        raise ValueError("ExponentialMovingAverage: the shape of %s must be "
                                         "fully defined, got %s" % (tensor.name, tensor.shape))
                    avg = get_variable(self._name, shape=tensor.shape.as_list(),
                                       dtype=tensor.dtype, initializer=zeros_initializer(),
                                       trainable=False)
            self._averages[id(var)] = (var, avg)
        with name_scope(self._name):
            decay = convert_to_tensor(self._decay, dtype=_dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = cast(convert_to_tensor(self._num_updates), _dtypes.float32)
                decay = minimum(decay, (1.0 + n) / (10.0 + n))
            updates = []
            for var in var_list:
                avg = self._averages[id(var)][1]
                value = var if isinstance(var, Tensor) else var._as_graph_element() \
                    if hasattr(var, "_as_graph_element") else convert_to_tensor(var)
                rate = cast(1.0 - decay, avg.dtype)
                updates.append(assign_sub(avg, (avg - value) * rate))
            return group(*updates, name=self._name)

    def average(self, var):
        """The shadow variable of var, or None if apply() was not given it."""
        found = self._averages.get(id(var))
        return found[1] if found is not None else None

    def average_name(self, var):
        """The name of var's shadow variable (also in checkpoints): its own once apply() made
        it, else "<var>/<name>"."""
        found = self._averages.get(id(var))
        if found is not None:
            return found[1].op.name
        return var.op.name + "/" + self._name

    def variables_to_restore(self, moving_avg_variables=None):
        """{name in the checkpoint: variable} for a Saver that restores each moving average
        into its variable (and the other global variables as themselves)."""
        from ..variables import global_variables, moving_average_variables, trainable_variables
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        chosen = {id(v): v for v in moving_avg_variables}
        names = {self.average_name(v): v for v in chosen.values()}
        for v in global_variables():
            if id(v) not in chosen and v.op.name not in names:
                names[v.op.name] = v
        return names
