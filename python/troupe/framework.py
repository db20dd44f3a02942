"""Graphs, tensors and operations, as TensorFlow 1.x's tf.Graph, tf.Tensor and tf.Operation.

A Graph wraps a troupe graph and a stack of builder scopes: each `with tf.name_scope(...)`,
`tf.device(...)`, `tf.control_dependencies(...)` or `tf.colocate_with(...)` pushes a scope
derived from the current one, so an op built inside gets the name prefix, device, control
inputs and colocation of all of them (device functions compose as in TensorFlow:
graph/scope.hpp). Building a graph is not thread-safe, as in TensorFlow.
"""

import collections
import contextlib
import re
import threading

import numpy as np

from . import _troupe
from . import dtypes as _dtypes


class Graph:
    """A dataflow graph. `as_default()` makes it the graph ops are built in."""

    def __init__(self):
        self._root = _troupe.Scope.new_root()
        self._scopes = [self._root]
        self._name_stack = [""]
        self._collections = {}
        self._variables = {}  # Variable node name -> Variable
        self._finalized = False
        self.seed = None
        self._device_stack = []  # what each enclosing device() was given
        # While a MonitoredTrainingSession prepares this graph (it adds nodes without the
        # GIL), only its hooks' thread may build; set by train/monitored_session.py.
        self._preparing = False
        self._preparer = None
        # While node name -> what its gradient needs (control_flow_ops.while_loop); a cond's
        # Merge node name -> its predicate; the tf.cond branch being built, if any.
        self._while_loops = {}
        self._cond_merges = {}
        self._cond_context = None

    def _worker_device(self):
        """The worker device the innermost device() names: a replica_device_setter's
        worker_device, or a device string; "" when none."""
        for item in reversed(self._device_stack):
            if isinstance(item, _troupe.NativeDeviceFunction):
                return item.worker_device
            if isinstance(item, str):
                return item
        return ""

    # --- the current scope ---
    @property
    def _scope(self):
        return self._scopes[-1]

    @contextlib.contextmanager
    def _push(self, scope, name_prefix=None):
        self._scopes.append(scope)
        if name_prefix is not None:
            self._name_stack.append(name_prefix)
        try:
            yield
        finally:
            self._scopes.pop()
            if name_prefix is not None:
                self._name_stack.pop()

    def _op_scope(self, name):
        """The scope for one new op: the current one, named `name` if given."""
        self._check_not_finalized()
        if name is None:
            return self._scope
        if not isinstance(name, str):
            raise TypeError("name: expected a string, got %r" % (name,))
        return self._scope.with_op_name(name)

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if self._preparing and self._preparer != threading.get_ident():
            raise RuntimeError("The graph is being prepared by a MonitoredTrainingSession in "
                               "another thread: build it before, or in a hook's begin().")

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def name_scope(self, name):
        return name_scope(name, graph=self)

    def device(self, device_name_or_function):
        return _device(self, device_name_or_function)

    def control_dependencies(self, control_inputs):
        return _control_dependencies(self, control_inputs)

    def colocate_with(self, op):
        op = _as_operation(op, "colocate_with")
        return self._push(self._scope.colocate_with(op._op))

    # --- lookup ---
    def get_operations(self):
        return [Operation(self._root.node(i), self) for i in range(self._root.num_nodes())]

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("get_operation_by_name: expected a string, got %r" % (name,))
        op = self._root.find(name)
        if op is None:
            raise KeyError("The name %r refers to an Operation not in the graph." % name)
        return Operation(op, self)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("get_tensor_by_name: expected a string, got %r" % (name,))
        if ":" not in name:
            raise ValueError("The name %r looks like an (invalid) Operation name, not a Tensor. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\"."
                             % name)
        op_name, index = name.rsplit(":", 1)
        op = self.get_operation_by_name(op_name)
        index = int(index)
        if index >= op._op.num_outputs:
            raise KeyError("The name %r refers to a Tensor which does not exist. The operation, "
                           "%r, exists but only has %d outputs."
                           % (name, op_name, op._op.num_outputs))
        return op.outputs[index]

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as TensorFlow's GraphDef message (tf.GraphDef). `add_shapes` (the
        "_output_shapes" attribute) is not supported."""
        if add_shapes:
            raise ValueError("as_graph_def(add_shapes=True) is not supported by troupe")
        from .graph_pb import GraphDef
        return GraphDef.FromString(_troupe.tensorflow_graph_def(self._root))

    @property
    def graph_def_versions(self):
        return self.as_graph_def().versions

    def as_graph_element(self, obj):
        if isinstance(obj, (Tensor, Operation)):
            return obj
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else \
                self.get_operation_by_name(obj)
        if hasattr(obj, "_as_graph_element"):
            return obj._as_graph_element()
        raise TypeError("Can not convert a %s into a Tensor or Operation." % type(obj).__name__)

    # --- collections ---
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name, scope=None):
        self._sync_variables(name)
        values = list(self._collections.get(name, []))
        if scope is None:
            return values
        # As TensorFlow: `scope` is a regular expression matched at the start of each item's
        # name; items without a name are left out.
        pattern = re.compile(scope)
        return [v for v in values
                if isinstance(getattr(v, "name", None), str) and pattern.match(v.name)]

    def get_collection_ref(self, name):
        self._sync_variables(name)
        return self._collections.setdefault(name, [])

    def _sync_variables(self, name):
        if name in ("variables", "trainable_variables", "local_variables"):
            from .variables import _sync_native_variables
            _sync_native_variables(self)



class GraphKeys:
    """tf.GraphKeys: the standard collection names (TensorFlow 1.x's values)."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    for name in ([names] if isinstance(names, str) else names):
        get_default_graph().add_to_collection(name, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


class _DefaultGraphStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []

    @contextlib.contextmanager
    def get_controller(self, graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            # The innermost entry of `graph`: an InteractiveSession's need not be on top.
            for i in range(len(self.stack) - 1, -1, -1):
                if self.stack[i] is graph:
                    del self.stack[i]
                    break


_default_graph_stack = _DefaultGraphStack()
_global_default_graph = None


def get_default_graph():
    """The graph ops are built in: the innermost `as_default()`, else the global one."""
    global _global_default_graph
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    global _global_default_graph
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs.")
    _global_default_graph = Graph()


class Operation:
    """A node of a Graph."""

    def __init__(self, op, graph):
        self._op = op
        self._graph = graph

    @property
    def name(self):
        return self._op.name

    @property
    def type(self):
        return self._op.type

    @property
    def device(self):
        return self._op.device

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return [Tensor(o, self._graph) for o in self._op.inputs]

    @property
    def outputs(self):
        return [Tensor(self._op.output(i), self._graph) for i in range(self._op.num_outputs)]

    @property
    def control_inputs(self):
        return [Operation(o, self._graph) for o in self._op.control_inputs]

    def get_attr(self, name):
        value = self._op.attr(name)
        if name in ("T", "dtype", "DstT", "SrcT", "Tidx", "output_type", "out_type"):
            return _dtypes.as_dtype(value)
        return value

    def colocation_groups(self):
        """The op's colocation groups as TensorFlow's: its "loc:@<name>" entries of _class as
        bytes, else [b"loc:@<its own name>"]."""
        groups = [g.encode() for g in (self._op.attr("_class") if "_class" in
                                       self._op.attr_names() else []) if g.startswith("loc:@")]
        return groups or [("loc:@" + self.name).encode()]

    @property
    def node_def(self):
        return {"name": self.name, "op": self.type, "device": self.device,
                "input": [t.name for t in self.inputs] + ["^" + c.name
                                                          for c in self.control_inputs],
                "attr": {n: self._op.attr(n) for n in self._op.attr_names()}}

    def run(self, feed_dict=None, session=None):
        from .session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot execute operation using `run()`: No default session is "
                             "registered. Use `with sess.as_default():` or pass a session.")
        session.run(self, feed_dict)

    def __eq__(self, other):
        return isinstance(other, Operation) and self._op == other._op

    def __hash__(self):
        return hash(self._op)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)


class TensorShape:
    """A possibly partial shape: `dims` (None for an unknown rank), entries None when unknown."""

    def __init__(self, dims):
        if isinstance(dims, TensorShape) and dims.dims is None:
            dims = None
        if dims is None:
            self._dims = None
        else:
            if isinstance(dims, TensorShape):
                dims = dims.dims
            elif not hasattr(dims, "__iter__"):
                dims = [dims]  # one dimension, as TensorFlow's TensorShape(8)
            self._dims = [None if d is None or (isinstance(d, int) and d < 0) else int(d)
                          for d in dims]

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def concatenate(self, other):
        """This shape's dimensions followed by `other`'s; of unknown rank if either is."""
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(list(self._dims) + list(other._dims))

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError("Shape %s is not fully defined" % self)

    def num_elements(self):
        """The number of elements, or None when the shape is not fully defined."""
        if not self.is_fully_defined():
            return None
        count = 1
        for d in self._dims:
            count *= d
        return count

    @property
    def rank(self):
        return self.ndims

    def is_compatible_with(self, other):
        other = other if isinstance(other, TensorShape) else TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __getitem__(self, key):
        """A dimension (None when unknown) for an index; a TensorShape for a slice, as
        TensorFlow's (unknown when the rank is)."""
        if isinstance(key, slice):
            return TensorShape(None if self._dims is None else self._dims[key])
        if self._dims is None:
            return None
        return self._dims[key]

    def __iter__(self):
        return iter(self._dims)

    def __eq__(self, other):
        try:
            other = other if isinstance(other, TensorShape) else TensorShape(other)
        except TypeError:
            return False
        return self._dims == other._dims

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape([%s])" % ", ".join("Dimension(%s)" % d for d in self._dims)

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return "(%s,)" % ("?" if self._dims[0] is None else self._dims[0])
        return "(%s)" % ", ".join("?" if d is None else str(d) for d in self._dims)


class Tensor:
    """An output of an Operation."""

    def __init__(self, output, graph):
        self._output = output
        self._graph = graph

    @property
    def op(self):
        return Operation(self._output.op, self._graph)

    @property
    def name(self):
        return self._output.name

    @property
    def dtype(self):
        return _dtypes.as_dtype(self._output.dtype)

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._output.op.device

    @property
    def value_index(self):
        return self._output.index

    @property
    def shape(self):
        return TensorShape(self._output.shape)

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Narrows the static shape known for this tensor (TensorFlow's Tensor.set_shape): ops
        built from it afterwards see the merged shape. ValueError if they conflict."""
        if isinstance(shape, TensorShape):
            dims = shape.dims
        elif shape is None:
            dims = None
        else:
            dims = [None if d is None else int(d) for d in shape]
        _troupe.set_output_shape(self._graph._op_scope(None), self._output, dims)

    def eval(self, feed_dict=None, session=None):
        from .session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass a session.")
        return session.run(self, feed_dict)

    def __eq__(self, other):  # TensorFlow 1.x: identity, so tensors can be dict keys
        return self is other or (isinstance(other, Tensor) and self._output == other._output)

    def __hash__(self):
        return hash(self._output)

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not "
                        "None:` instead of `if t:` to test if a tensor is defined.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled.")

    # Operators: defined in ops.py, math_ops.py and array_ops.py (they need the op functions).


def _as_operation(value, what):
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    if hasattr(value, "op") and isinstance(value.op, Operation):
        return value.op
    raise TypeError("%s: expected an Operation or a Tensor, got %r" % (what, value))


# --- the scope context managers ---

@contextlib.contextmanager
def name_scope(name, default_name=None, values=None, graph=None):
    """Ops built inside get names prefixed with "<name>/" (made unique, as TensorFlow does:
    a second "layer" scope is "layer_1/"). A name ending in "/" re-enters that scope exactly
    (as a prefix a scope yielded); None (with no default_name) or "" resets to the top-level
    scope. Yields the prefix ("" at the top level)."""
    if name is not None and not isinstance(name, str):
        raise TypeError("name_scope: name must be a string or None, got %r" % (name,))
    if default_name is not None and not isinstance(default_name, str):
        raise TypeError("name_scope: default_name must be a string, got %r" % (default_name,))
    g = graph or get_default_graph()
    g._check_not_finalized()
    if name is None and default_name is None and values is not None:
        raise ValueError("At least one of name (%s) and default_name (%s) must be provided."
                         % (name, default_name))
    name = default_name if name is None else name
    if not name:  # the top-level scope
        scope = g._scope.with_name_prefix("")
    elif name.endswith("/"):  # an existing scope, re-entered as it is
        scope = g._scope.with_name_prefix(name)
    else:
        scope = g._scope.sub_scope(name)
    with g._push(scope, scope.name_prefix):
        yield scope.name_prefix


@contextlib.contextmanager
def _device(graph, device_name_or_function):
    scope = graph._scope
    if device_name_or_function is None:
        scope = scope.with_device("")
    elif isinstance(device_name_or_function, str):
        scope = scope.with_device(device_name_or_function)
    elif isinstance(device_name_or_function, _troupe.NativeDeviceFunction):
        scope = scope.with_native_device_function(device_name_or_function)
    elif hasattr(device_name_or_function, "to_string"):  # a DeviceSpec
        scope = scope.with_device(device_name_or_function.to_string())
    elif callable(device_name_or_function):
        fn = device_name_or_function

        def call(name, op_type, device):
            result = fn(_PendingOperation(name, op_type, device))
            if result is not None and hasattr(result, "to_string"):
                result = result.to_string()
            return result

        scope = scope.with_python_device_function(call)
    else:
        raise TypeError("device: expected a device string, a device function or None, got %r"
                        % (device_name_or_function,))
    graph._device_stack.append(device_name_or_function)
    try:
        with graph._push(scope):
            yield
    finally:
        graph._device_stack.pop()


class _PendingOperation:
    """What a device function sees of the node it places: name, type, device, node_def."""

    def __init__(self, name, op_type, device):
        self.name = name
        self.type = op_type
        self.device = device
        self.node_def = self

    @property
    def op(self):
        return self.type


def device(device_name_or_function):
    """Places ops built inside: a device string ("/job:ps/task:0"), a function of the op
    returning one (e.g. tf.train.replica_device_setter), or None (no constraint)."""
    return _device(get_default_graph(), device_name_or_function)


@contextlib.contextmanager
def _control_dependencies(graph, control_inputs):
    if control_inputs is None:
        # The enclosing scopes' control dependencies cleared, and (as TensorFlow's) the
        # control-flow context: ops built inside are outside any cond branch.
        saved = graph._cond_context
        graph._cond_context = None
        try:
            with graph._push(graph._scope.without_control_dependencies()):
                yield
        finally:
            graph._cond_context = saved
        return
    ops = []
    for c in control_inputs:
        if isinstance(c, (Tensor, Operation)) or hasattr(c, "op"):
            ops.append(_as_operation(c, "control_dependencies")._op)
        else:
            raise TypeError("Can not convert a %s into a Tensor or Operation."
                            % type(c).__name__)
    with graph._push(graph._scope.with_control_dependencies(ops)):
        yield


def control_dependencies(control_inputs):
    """Ops built inside run after `control_inputs` (Operations or Tensors); with None, ops
    built inside have none of the enclosing scopes' control dependencies."""
    return _control_dependencies(get_default_graph(), control_inputs)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op)


IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = "What Session.run returns for IndexedSlices: numpy arrays."


class IndexedSlices:
    """tf.IndexedSlices: a sparse form of a dense tensor's gradient, rows `indices` of a tensor
    of shape `dense_shape` holding `values` (values[i] in row indices[i]; duplicates sum), every
    other row zero. The gradient of a gather (an embedding lookup) with respect to its table;
    optimizers update only those rows. Used as a Tensor, it is densified."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def name(self):
        return self._values.name

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    def __str__(self):
        return "IndexedSlices(indices=%s, values=%s%s)" % (
            self._indices, self._values,
            (", dense_shape=%s" % self._dense_shape) if self._dense_shape is not None else "")

    __repr__ = __str__

    def __neg__(self):
        from .ops import negative
        return IndexedSlices(negative(self._values), self._indices, self._dense_shape)

    def _dense(self, name=None):
        """The dense tensor these slices stand for (TensorFlow's conversion, with its warning
        when the dense shape is not known while building)."""
        if self._dense_shape is None:
            raise ValueError("Tensor conversion requested for IndexedSlices without dense_shape: "
                             "%s" % self._values.name)
        if self._dense_shape.op.type != "Const":
            from .logging import warning
            warning("Converting sparse IndexedSlices to a dense Tensor of unknown shape. This "
                    "may consume a large amount of memory.")
        g = self._values.graph
        output = _troupe.indexed_slices_to_dense(g._op_scope(name), self._values._output,
                                                 self._indices._output,
                                                 self._dense_shape._output)
        return Tensor(output, g)


def _wrap_gradient(native, graph):
    """A gradient from the extension as Python sees it: None, a Tensor, or IndexedSlices (a
    (values, indices, dense_shape) tuple)."""
    if native is None:
        return None
    if isinstance(native, tuple):
        return IndexedSlices(*[Tensor(part, graph) for part in native])
    return Tensor(native, graph)


def _unwrap_gradient(gradient, what):
    """The reverse of _wrap_gradient, for a gradient a user hands back."""
    if gradient is None:
        return None
    if isinstance(gradient, IndexedSlices):
        if gradient.dense_shape is None:
            raise ValueError("%s: IndexedSlices without dense_shape" % what)
        return tuple(convert_to_tensor(part)._output for part in
                     (gradient.values, gradient.indices, gradient.dense_shape))
    if isinstance(gradient, Tensor):
        return gradient._output
    raise TypeError("%s must be a Tensor, IndexedSlices or None, got %r" % (what, gradient))


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None):
    """A Tensor for `value`: a Tensor (checked against `dtype`), a Variable's value, or a
    constant made from a Python value or numpy array."""
    if isinstance(value, IndexedSlices):
        value = value._dense(name)
    if isinstance(value, Tensor):
        if dtype is not None and _dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (_dtypes.as_dtype(dtype).name, value.dtype.name, value))
        return value
    if hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value._as_graph_element(), dtype, name)
    from . import ops
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        # TensorFlow's auto-packing: a (nested) list holding tensors is their stack, its
        # Python numbers converted to the tensors' dtype.
        if dtype is None:
            dtype = _first_tensor_dtype(value)
        return ops.stack([convert_to_tensor(v, dtype=dtype) for v in value],
                         name=name or "packed")
    return ops.constant(value, dtype=dtype if dtype is not None else preferred_dtype, name=name)


def _holds_tensor(value):
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return isinstance(value, (Tensor, IndexedSlices)) or hasattr(value, "_as_graph_element")


def _first_tensor_dtype(value):
    for v in value:
        if isinstance(v, (list, tuple)):
            found = _first_tensor_dtype(v)
            if found is not None:
                return found
        elif isinstance(v, (Tensor, IndexedSlices)) or hasattr(v, "_as_graph_element"):
            return convert_to_tensor(v).dtype
    return None


def to_numpy(value, dtype=None, what="value"):
    """`value` as a numpy array troupe takes: Python floats become float32 and ints int32
    unless `dtype` says otherwise, as TensorFlow's constants are."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
        if dtype == _dtypes.string:
            return np.asarray(value, dtype=object)
        try:
            array = np.asarray(value)
        except Exception as e:
            raise TypeError("%s: cannot convert %r to a numpy array: %s" % (what, value, e))
        if array.dtype.kind in ("U", "S", "O") and dtype != _dtypes.string:
            raise TypeError("%s: expected %s, got %r of type '%s' instead."
                            % (what, dtype.name, value, type(value).__name__))
        if dtype.is_integer and array.dtype.kind == "f" and array.size:
            raise TypeError("%s: expected %s, got %r of type '%s' instead."
                            % (what, dtype.name, value, type(value).__name__))
        return np.asarray(array, dtype=dtype.as_numpy_dtype)
    try:
        array = np.asarray(value)
    except Exception as e:
        raise TypeError("%s: cannot convert %r to a tensor: %s" % (what, value, e))
    if array.dtype.kind == "f" and not isinstance(value, np.ndarray) and \
            not isinstance(value, np.generic):
        return array.astype(np.float32)
    if array.dtype.kind in ("i", "u") and not isinstance(value, np.ndarray) and \
            not isinstance(value, np.generic):
        if array.size and (array.max() > 2**31 - 1 or array.min() < -2**31):
            return array.astype(np.int64)
        return array.astype(np.int32)
    if array.dtype.kind in ("U", "S"):
        return array.astype(object)
    if array.dtype.kind == "O":
        if all(isinstance(x, (bytes, str)) for x in array.ravel()):
            return array
        raise TypeError("%s: cannot convert %r to a tensor (mixed or unsupported types)"
                        % (what, value))
    _dtypes.as_dtype(array.dtype)  # TypeError for dtypes troupe has no tensors of
    return array
