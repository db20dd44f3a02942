"""Variables: tf.Variable, tf.get_variable with variable scopes, the initializers, and the
global-variable lists and initializer.

A variable's initial value is what its initializer computes when it runs: constants, or random
ops (random_ops.py) seeded from tf.set_random_seed and the initializer's seed as TensorFlow
seeds them, so every worker building the same graph with the same seeds draws the same values,
and running an initializer again draws new ones, as in TensorFlow. get_variable builds the
initializer's ops in "<variable>/Initializer".
"""

import contextlib
import re

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from .framework import Operation, Tensor, get_default_graph, to_numpy

GLOBAL_VARIABLES = "variables"
LOCAL_VARIABLES = "local_variables"
TRAINABLE_VARIABLES = "trainable_variables"
GLOBAL_STEP = "global_step"


class Variable:
    """tf.Variable: a Variable node on the device it is placed on (a ps task under
    replica_device_setter), with an initializer op; usable wherever a Tensor is."""

    def __init__(self, initial_value=None, trainable=True, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 _existing=None, _name_prefix=None):
        g = get_default_graph()
        self._graph = g
        if _existing is not None:
            ref, init = _existing
        else:
            if initial_value is None:
                raise ValueError("initial_value must be specified.")
            if callable(initial_value):
                initial_value = initial_value()
            if hasattr(initial_value, "_as_graph_element"):  # a Variable: its value
                initial_value = initial_value._as_graph_element()
            if name is not None and not isinstance(name, str):
                raise TypeError("Variable name must be a string, got %r" % (name,))
            if isinstance(initial_value, Tensor):
                if validate_shape and not initial_value.shape.is_fully_defined():
                    raise ValueError("initial_value must have a shape specified: %s"
                                     % initial_value)
                value = initial_value._output
                if dtype is not None and _dtypes.as_dtype(dtype) != initial_value.dtype:
                    raise ValueError("Variable %s: initial value is %s, dtype says %s"
                                     % (name, initial_value.dtype.name,
                                        _dtypes.as_dtype(dtype).name))
            else:
                value = to_numpy(initial_value, dtype, "initial_value of Variable %s"
                                 % (name or "Variable"))
            g._check_not_finalized()
            scope = g._scope if _name_prefix is None else g._scope.with_name_prefix(_name_prefix)
            # Outside GLOBAL_VARIABLES it is the task's own: not saved, not initialised by
            # global_variables_initializer() (graph/variables.hpp).
            local = collections is not None and GLOBAL_VARIABLES not in collections
            ref, init = _troupe.make_variable(scope, name or "Variable", value, bool(trainable),
                                              local, bool(validate_shape))
        self._ref = Tensor(ref, g)
        self._initializer = Operation(init, g)
        self._trainable = trainable
        g._variables[self._ref.op.name] = self
        for c in (collections if collections is not None else [GLOBAL_VARIABLES]):
            g.add_to_collection(c, self)
        if trainable and TRAINABLE_VARIABLES not in (collections or [GLOBAL_VARIABLES]):
            g.add_to_collection(TRAINABLE_VARIABLES, self)

    @property
    def name(self):
        return self._ref.name

    @property
    def op(self):
        return self._ref.op

    @property
    def graph(self):
        return self._graph

    @property
    def dtype(self):
        return self._ref.dtype

    @property
    def shape(self):
        return self._ref.shape

    @property
    def device(self):
        return self._ref.device

    @property
    def trainable(self):
        return self._trainable

    def get_shape(self):
        return self.shape

    @property
    def initializer(self):
        return self._initializer

    @property
    def initial_value(self):
        return self._initializer.inputs[1] if len(self._initializer.inputs) > 1 else None

    def initialized_value(self):
        """The variable's value once initialized: its initial value (what another
        variable's initializer reads, in the same initialization run)."""
        return self.initial_value

    def value(self):
        return self._ref

    def read_value(self):
        from .ops import identity
        return identity(self._ref)

    def _as_graph_element(self):
        return self._ref

    def eval(self, session=None):
        return self._ref.eval(session=session)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        from .ops import assign
        return assign(self._ref, value, name=name)

    def count_up_to(self, limit):
        from .ops import count_up_to
        return count_up_to(self._ref, limit)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        from .ops import assign_add
        return assign_add(self._ref, delta, name=name)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        from .ops import assign_sub
        return assign_sub(self._ref, delta, name=name)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _delegate(op_name):
    def method(self, *args):
        return getattr(Tensor, op_name)(self._ref, *args)
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__neg__", "__lt__",
              "__le__", "__gt__", "__ge__", "__pow__", "__rpow__", "__abs__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__"):
    setattr(Variable, _name, _delegate(_name))


def _variable_getitem(self, key):
    """var[...]: the selection's value, with .assign(value) replacing it in the variable."""
    from .array_ops import _slice_helper
    return _slice_helper(self._ref, key, var=self)


Variable.__getitem__ = _variable_getitem


def _wrapped(graph, variable, initializer, trainable):
    """The Variable of record `variable`, made for one the C++ layer created (an optimizer's
    slot, the global step) the first time it is asked for."""
    v = graph._variables.get(variable)
    if v is None:
        ref = graph.get_operation_by_name(variable).outputs[0]
        init = graph.get_operation_by_name(initializer)
        v = Variable.__new__(Variable)
        v._graph, v._ref, v._initializer, v._trainable = graph, ref, init, trainable
        v._made_natively = True
        graph._variables[variable] = v
    return v


def _variables_of(graph, trainable_only):
    records = _troupe.variable_records(graph._root)
    result = []
    for variable, initializer, trainable, local in records:
        if (not trainable) if trainable_only else local:
            continue
        result.append(_wrapped(graph, variable, initializer, trainable))
    return result


def _sync_native_variables(graph):
    """Puts the variables the C++ layer made (an optimizer's slots, the global step) in the
    graph's variable collections, once each, as TensorFlow's get_variable puts them: so that
    tf.get_collection(GLOBAL_VARIABLES) and what reads it (warm_start, init_from_checkpoint)
    see them."""
    root = getattr(graph, "_root", None)
    if root is None:
        return
    synced = graph.__dict__.setdefault("_native_variables_synced", set())
    for variable, initializer, trainable, local in _troupe.variable_records(root):
        if variable in synced:
            continue
        synced.add(variable)
        v = _wrapped(graph, variable, initializer, trainable)
        if not getattr(v, "_made_natively", False):
            continue  # made in Python: it joined its collections then
        keys = [LOCAL_VARIABLES if local else GLOBAL_VARIABLES]
        if trainable:
            keys.append(TRAINABLE_VARIABLES)
        for key in keys:
            graph._collections.setdefault(key, []).append(v)


def _in_scope(variables, scope):
    """Those whose name `scope` matches at its start, a regular expression (TensorFlow's
    get_collection)."""
    if scope is None:
        return list(variables)
    pattern = re.compile(scope)
    return [v for v in variables if pattern.match(v.name)]


def global_variables(scope=None):
    return _in_scope(_variables_of(get_default_graph(), False), scope)


def trainable_variables(scope=None):
    return _in_scope(_variables_of(get_default_graph(), True), scope)


all_variables = global_variables


def moving_average_variables(scope=None):
    """The variables ExponentialMovingAverage.apply() averages (MOVING_AVERAGE_VARIABLES)."""
    from .framework import GraphKeys
    return _in_scope(get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES),
                     scope)


def global_variables_initializer():
    g = get_default_graph()
    return Operation(_troupe.global_variables_initializer(g._scope), g)


initialize_all_variables = global_variables_initializer


def variables_initializer(var_list, name="init"):
    from .ops import group
    return group(*[v.initializer for v in var_list], name=name)


def local_variables(scope=None):
    """The variables in the LOCAL_VARIABLES collection (made with that collection)."""
    return get_default_graph().get_collection("local_variables", scope)


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_1")


initialize_local_variables = local_variables_initializer


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor naming the variables of `var_list` (global and local by default)
    that are not initialized; empty when all are. Each check runs where its variable lives."""
    from .framework import name_scope
    from .ops import boolean_mask, constant, is_variable_initialized, logical_not, stack
    if var_list is None:
        var_list = global_variables() + [v for v in local_variables()
                                         if v not in global_variables()]
    with name_scope(name):
        if not var_list:
            return constant(np.array([], dtype=object), dtype=_dtypes.string)
        initialized = stack([is_variable_initialized(v) for v in var_list])
        names = constant(np.array([v.op.name.encode() for v in var_list], dtype=object))
        return boolean_mask(names, logical_not(initialized))


def set_random_seed(seed):
    get_default_graph().seed = seed


# --- initializers: callables (shape, dtype, partition_info) -> numpy array ---

class _Initializer:
    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def _shape(self, shape):
        return [int(d) for d in shape]


class zeros_initializer(_Initializer):  # noqa: N801 - TensorFlow's names
    def __call__(self, shape, dtype=None, partition_info=None):
        return np.zeros(self._shape(shape), _dtypes.as_dtype(dtype or self.dtype).as_numpy_dtype)


class ones_initializer(_Initializer):  # noqa: N801
    def __call__(self, shape, dtype=None, partition_info=None):
        return np.ones(self._shape(shape), _dtypes.as_dtype(dtype or self.dtype).as_numpy_dtype)


class constant_initializer(_Initializer):  # noqa: N801
    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype).as_numpy_dtype
        value = np.asarray(self.value, dtype=dtype)
        shape = self._shape(shape)
        if value.size == 1:
            return np.full(shape, value.reshape(()), dtype=dtype)
        if value.size != int(np.prod(shape)):
            raise ValueError("constant_initializer: %d values cannot fill shape %s"
                             % (value.size, shape))
        return value.reshape(shape)


class random_normal_initializer(_Initializer):  # noqa: N801
    """Normal values, drawn by a RandomStandardNormal op when the initializer runs."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from .random_ops import random_normal
        return random_normal(self._shape(shape), self.mean, self.stddev,
                             _dtypes.as_dtype(dtype or self.dtype), self.seed)


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801
    """Normal values within two standard deviations, drawn by a TruncatedNormal op."""

    def __call__(self, shape, dtype=None, partition_info=None):
        from .random_ops import truncated_normal
        return truncated_normal(self._shape(shape), self.mean, self.stddev,
                                _dtypes.as_dtype(dtype or self.dtype), self.seed)


class random_uniform_initializer(_Initializer):  # noqa: N801
    """Uniform values in [minval, maxval), drawn by a RandomUniform op."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from .random_ops import random_uniform
        return random_uniform(self._shape(shape), self.minval, self.maxval,
                              _dtypes.as_dtype(dtype or self.dtype), self.seed)


class variance_scaling_initializer(_Initializer):  # noqa: N801
    """TensorFlow's variance scaling: values of variance scale / n, n the fan in, the fan out
    or their mean (`mode`), from a truncated normal (corrected for the truncation), a normal or
    a uniform `distribution`."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("Invalid `mode` argument: %s" % mode)
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"  # as TensorFlow 1.x: "normal" means truncated
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("Invalid `distribution` argument: %s" % distribution)
        super().__init__(dtype)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from .random_ops import random_normal, random_uniform, truncated_normal
        shape = self._shape(shape)
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        # A shard's scale is the whole variable's, as TensorFlow's.
        fan_in, fan_out = _fans(partition_info.full_shape if partition_info is not None
                                else shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            # The standard deviation of a standard normal truncated to (-2, 2).
            stddev = np.sqrt(scale) / 0.87962566103423978
            return truncated_normal(shape, 0.0, stddev, dtype, self.seed)
        if self.distribution == "untruncated_normal":
            return random_normal(shape, 0.0, np.sqrt(scale), dtype, self.seed)
        limit = np.sqrt(3.0 * scale)
        return random_uniform(shape, -limit, limit, dtype, self.seed)


class orthogonal_initializer(_Initializer):  # noqa: N801
    """A random orthogonal matrix (or, for a shape of more than two dimensions, one whose
    flattening to [prod(shape[:-1]), shape[-1]] is orthogonal), times `gain`: the Q of a QR
    decomposition of a normal matrix, drawn by ops when the initializer runs (TensorFlow's)."""

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32):
        super().__init__(dtype)
        if not self.dtype.is_floating:
            raise ValueError("Expected floating point type, got %s." % self.dtype)
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        from .array_ops import transpose
        from .ops import _make, constant, multiply, reduce_sum, reshape, sign
        from .random_ops import random_normal
        shape = self._shape(shape)
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        flat = (cols, rows) if rows < cols else (rows, cols)
        a = random_normal(flat, dtype=dtype, seed=self.seed)
        q, r = _make("Qr", [a], {"full_matrices": False}).outputs
        # Q's columns signed as R's diagonal: then Q is uniformly distributed.
        diagonal = reduce_sum(multiply(r, constant(np.eye(flat[1]), dtype=dtype)), 0)
        q = multiply(q, sign(diagonal))
        if rows < cols:
            q = transpose(q)
        return multiply(constant(self.gain, dtype=dtype), reshape(q, shape))


class glorot_uniform_initializer(variance_scaling_initializer):  # noqa: N801
    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class glorot_normal_initializer(variance_scaling_initializer):  # noqa: N801
    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)


def _fans(shape):
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = float(np.prod(shape[:-2])) if len(shape) > 2 else 1.0
    return shape[-2] * receptive, shape[-1] * receptive


# --- variable scopes and get_variable ---

class _VariableScopeState:
    def __init__(self):
        self.names = []               # the variable-scope name stack
        self.reuse = [False]
        self.initializer = [None]     # the innermost scope's default initializer
        self.dtype = [None]
        self.partitioner = [None]
        self.regularizer = [None]
        self.store = {}               # full name -> Variable made by get_variable


def _state(graph):
    # A function's graph (a while_loop body, a cond branch's, a dataset function) shares the
    # program's variable scopes and variables, as TensorFlow's control flow does.
    if getattr(graph, "_is_function", False):
        return _state(graph._outer)
    if not hasattr(graph, "_var_scope_state"):
        graph._var_scope_state = _VariableScopeState()
    return graph._var_scope_state


AUTO_REUSE = "auto_reuse"


class VariableScope(object):
    """tf.VariableScope: a variable scope as tf.get_variable_scope() returns it and
    tf.variable_scope(...) yields it. While it is the innermost scope, its settings are
    get_variable's defaults and reuse_variables() makes get_variable reuse existing variables
    until the scope is left; entering it again with tf.variable_scope(scope) names variables
    under it again."""

    def __init__(self, state, frame):
        self._state = state
        self._frame = frame                 # its entry in the state's stacks
        self._names = list(state.names)     # where it names variables

    def _live(self):
        return self._frame < len(self._state.reuse) and self._state.names == self._names

    def _get(self, stack):
        return getattr(self._state, stack)[self._frame] if self._live() else None

    def _set(self, stack, value):
        if self._live():
            getattr(self._state, stack)[self._frame] = value

    @property
    def name(self):
        return "/".join(self._names)

    @property
    def original_name_scope(self):
        return self.name + "/" if self._names else ""

    @property
    def reuse(self):
        return bool(self._get("reuse"))

    @property
    def initializer(self):
        return self._get("initializer")

    @property
    def dtype(self):
        return self._get("dtype") or _dtypes.float32

    @property
    def partitioner(self):
        return self._get("partitioner")

    @property
    def regularizer(self):
        return self._get("regularizer")

    def reuse_variables(self):
        self._set("reuse", True)

    def set_initializer(self, initializer):
        self._set("initializer", initializer)

    def set_dtype(self, dtype):
        self._set("dtype", _dtypes.as_dtype(dtype))

    def set_partitioner(self, partitioner):
        self._set("partitioner", partitioner)

    def set_regularizer(self, regularizer):
        self._set("regularizer", regularizer)

    def __repr__(self):
        return "<tf.VariableScope %r>" % self.name


def get_variable_scope():
    """The innermost variable scope of the default graph (the top-level one, named "", outside
    every tf.variable_scope)."""
    state = _state(get_default_graph())
    return VariableScope(state, len(state.reuse) - 1)


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """Names get_variable's variables "<scope>/<name>" (whatever the name scope) and opens a
    name scope of that name for the ops built inside. reuse=True looks up existing variables;
    tf.AUTO_REUSE creates them when missing; `initializer`, `regularizer`, `partitioner` and
    `dtype` are the defaults of get_variable inside. Yields the VariableScope. Given a
    VariableScope (tf.get_variable_scope()), re-enters it: variables are named under it, with its
    settings unless given here; its ops get a name scope of its last name (none for the
    top-level scope), which troupe makes unique where TensorFlow would re-enter the original."""
    from .framework import name_scope
    for value, what in ((custom_getter, "custom_getter"), (constraint, "constraint")):
        if value is not None:
            raise ValueError("variable_scope(%s=...) is not supported by troupe" % what)
    if isinstance(name_or_scope, VariableScope):
        with _reenter(name_or_scope, initializer, regularizer, partitioner, reuse,
                      dtype) as scope:
            yield scope
        return
    name = name_or_scope if name_or_scope is not None else default_name
    if not isinstance(name, str) or not name:
        raise TypeError("variable_scope: expected a non-empty scope name, got %r"
                        % (name_or_scope,))
    if partitioner is not None and not callable(partitioner):
        raise TypeError("variable_scope: partitioner must be callable, got %r" % (partitioner,))
    g = get_default_graph()
    state = _state(g)
    state.names.append(name)
    _reset_subscope_counts(g, state.names)
    state.reuse.append(reuse if reuse is not None else state.reuse[-1])
    state.initializer.append(initializer if initializer is not None else state.initializer[-1])
    state.dtype.append(_dtypes.as_dtype(dtype) if dtype is not None else state.dtype[-1])
    state.partitioner.append(partitioner if partitioner is not None else state.partitioner[-1])
    state.regularizer.append(regularizer if regularizer is not None else state.regularizer[-1])
    try:
        with name_scope(name):
            yield VariableScope(state, len(state.reuse) - 1)
    finally:
        state.names.pop()
        state.reuse.pop()
        state.initializer.pop()
        state.dtype.pop()
        state.partitioner.pop()
        state.regularizer.pop()


def _reset_subscope_counts(graph, names):
    """Entering a variable scope restarts the numbering of the layers and cells made under it
    ("dense", "dense_1", ...), as TensorFlow's does: re-entered with reuse, a layer finds the
    variables it made the first time."""
    counts = graph.__dict__.get("_layer_name_counts")
    if counts:
        prefix = "/".join(names) + "/"
        for key in [k for k in counts if k.startswith(prefix)]:
            del counts[key]


@contextlib.contextmanager
def _reenter(scope, initializer, regularizer, partitioner, reuse, dtype):
    """variable_scope(scope) for a VariableScope `scope`."""
    from .framework import name_scope
    state = _state(get_default_graph())
    saved_names = state.names
    values = {"reuse": reuse if reuse is not None else scope.reuse,
              "initializer": initializer if initializer is not None else scope.initializer,
              "dtype": _dtypes.as_dtype(dtype) if dtype is not None else scope._get("dtype"),
              "partitioner": partitioner if partitioner is not None else scope.partitioner,
              "regularizer": regularizer if regularizer is not None else scope.regularizer}
    state.names = list(scope._names)
    if state.names:
        _reset_subscope_counts(get_default_graph(), state.names)
    for stack, value in values.items():
        getattr(state, stack).append(value)
    try:
        if state.names:
            with name_scope(state.names[-1]):
                yield VariableScope(state, len(state.reuse) - 1)
        else:
            yield VariableScope(state, len(state.reuse) - 1)
    finally:
        state.names = saved_names
        for stack in values:
            getattr(state, stack).pop()


def _variable_built_beside(g, prefix, name, shape, dtype, initializer, trainable, collections,
                           **initializer_args):
    """The Variable "<prefix><name>" of `shape` and `dtype`, whose initializer's ops are built
    after it on its device, as TensorFlow's get_variable builds them beside the variable
    whatever the device functions (a ps task draws a table's random initial value itself
    rather than receiving it from the worker), named "<prefix><name>/Initializer/...", and
    outside any control dependencies or cond branch (TensorFlow's init_scope)."""
    from .framework import convert_to_tensor, name_scope

    def build(beside):
        with g._push(beside), name_scope(name + "/Initializer"):
            value = convert_to_tensor(initializer(shape, dtype=dtype, **initializer_args),
                                      dtype=dtype)
        if value.shape.ndims is None or value.shape.as_list() != list(shape):
            raise ValueError("Variable %s%s: the initializer gave a value of shape %s where the "
                             "variable's is %s" % (prefix, name, value.shape, list(shape)))
        return value._output

    g._check_not_finalized()
    local = collections is not None and GLOBAL_VARIABLES not in collections
    trainable = True if trainable is None else trainable
    with g.control_dependencies(None):
        ref, init = _troupe.make_variable_built_beside(
            g._scope.with_name_prefix(prefix), name, shape, dtype.as_datatype_enum, build,
            bool(trainable), local)
    return Variable(trainable=trainable, collections=collections, _existing=(ref, init))


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None):
    """The variable "<variable scopes>/<name>": created (with `initializer`, else the scope's,
    else glorot uniform for floats and zeros otherwise) or, under reuse, the existing one."""
    if not isinstance(name, str) or not name:
        raise TypeError("get_variable: name must be a non-empty string, got %r" % (name,))
    g = get_default_graph()
    state = _state(g)
    full_name = "/".join(state.names + [name])
    reuse = state.reuse[-1]
    if full_name in state.store:
        if reuse is False:
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope?" % full_name)
        v = state.store[full_name]
        if shape is not None and v.shape.as_list() != [int(d) for d in shape]:
            raise ValueError("Trying to share variable %s, but specified shape %s and found "
                             "shape %s." % (full_name, list(shape), v.shape))
        return v
    if reuse is True:
        raise ValueError("Variable %s does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         "VarScope?" % full_name)
    if getattr(g, "_is_function", False):
        raise ValueError("Variable %s would be created inside a control-flow construct (a "
                         "while_loop body or a cond branch) or a dataset function, which "
                         "troupe does not support (TensorFlow 1.x allows it with an initializer "
                         "computed outside); create it before the loop and get it with reuse "
                         "inside" % full_name)
    dtype = _dtypes.as_dtype(dtype or state.dtype[-1] or _dtypes.float32)
    if initializer is None:
        initializer = state.initializer[-1]
    if initializer is None:
        initializer = glorot_uniform_initializer() if dtype.is_floating else zeros_initializer()
    if regularizer is None:
        regularizer = state.regularizer[-1]
    if partitioner is None:
        partitioner = state.partitioner[-1]
    if partitioner is not None:
        from .partitioned_variables import _create_partitioned
        v = _create_partitioned(g, full_name, name, shape, dtype, initializer, regularizer,
                                trainable, collections, partitioner, state.names)
        state.store[full_name] = v
        return v
    prefix = "/".join(state.names) + "/" if state.names else ""
    if callable(initializer):
        if shape is None:
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead "
                             "was None." % full_name)
        shape = [int(d) for d in shape]
        if validate_shape:
            v = _variable_built_beside(g, prefix, name, shape, dtype, initializer, trainable,
                                       collections)
        else:
            from .framework import name_scope
            with name_scope(name + "/Initializer"):  # TensorFlow's names, not reserving `name`
                value = initializer(shape, dtype=dtype)
    else:
        value = initializer
        if shape is not None:
            raise ValueError("If initializer is a constant, do not specify shape.")
    if not callable(initializer) or not validate_shape:
        v = Variable(value, trainable=True if trainable is None else trainable,
                     collections=collections, name=name, dtype=dtype, _name_prefix=prefix,
                     validate_shape=validate_shape)
    state.store[full_name] = v
    if regularizer is not None:  # as TensorFlow: its loss joins REGULARIZATION_LOSSES
        from .framework import GraphKeys, name_scope
        with name_scope(name + "/Regularizer"):
            loss = regularizer(v)
        if loss is not None:
            g.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return v
