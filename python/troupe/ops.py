"""The ops troupe has kernels for, with TensorFlow 1.x's names and arguments, and the
arithmetic operators of Tensor. Each builds one node in the default graph (framework.py) through
the C++ builder API (graph/ops/); a bad argument raises InvalidArgumentError naming the node, or
TypeError/ValueError naming the argument."""

import re

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from . import errors as _errors
from .framework import (IndexedSlices, Operation, Tensor, _holds_tensor, convert_to_tensor,
                        get_default_graph, to_numpy, control_dependencies, name_scope)


def _graph_of(*values):
    default = get_default_graph()
    if getattr(default, "_is_function", False):  # tracing a function: its ops go there
        return default
    for v in values:
        if isinstance(v, Tensor):
            return v.graph
        g = getattr(v, "graph", None)
        if g is not None and hasattr(g, "_scope"):
            return g
    return get_default_graph()


def _keeps_reference(value, what):
    """Whether the reference `value` goes into the op input `what` (as ops._input names it)
    as it is: a reference to anything but a variable (a dataset or iterator handle, a queue),
    or a variable for an op that changes it or asks about it."""
    if value.op.type not in ("Variable", "VariableV2"):
        return True
    op_type = what.split(" ")[0]
    return what.endswith(" ref") or op_type.startswith(("Assign", "Scatter", "Apply",
                                                        "SparseApply", "ResourceApply",
                                                        "CountUpTo", "IsVariableInitialized",
                                                        "is_variable_initialized",
                                                        "StridedSliceAssign"))


def _input(value, graph, what, dtype=None):
    """An op input for the extension: an Output, or a numpy array for a literal."""
    if isinstance(value, Tensor):
        if value.graph is not graph and getattr(graph, "_is_function", False):
            value = graph._capture(value)  # an outer tensor a traced function uses
        context = graph._cond_context
        # A tensor from outside the tf.cond branch being built (a traced function's arguments
        # and captures are outside any of its conds).
        if context is not None and value.graph is graph and \
                (not context.inside(value) or value.op.type == "_Arg") and \
                not (value._output.is_ref and _keeps_reference(value, what)):
            value = context.enter(value)
        if value.graph is not graph:
            raise ValueError("%s: Tensor %s must be from the same graph as the other inputs"
                             % (what, value.name))
        return value._output
    if isinstance(value, Operation):
        raise TypeError("%s: expected a Tensor, got the Operation %r" % (what, value.name))
    if isinstance(value, IndexedSlices):
        return _input(value._dense(), graph, what, dtype)
    if hasattr(value, "_as_graph_element"):
        return _input(value._as_graph_element(), graph, what, dtype)
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        with graph.as_default():
            return _input(convert_to_tensor(value, dtype=dtype), graph, what)  # auto-packing
    return to_numpy(value, dtype, what)


def _like(value, other):
    """The dtype a literal `value` should take beside tensor `other`, as TensorFlow converts
    `x * 2` for a float32 x."""
    if isinstance(other, Tensor) or hasattr(other, "_as_graph_element"):
        return (other if isinstance(other, Tensor) else other._as_graph_element()).dtype
    return None


def _t(output, graph):
    return Tensor(output, graph)


def _op(operation, graph):
    return Operation(operation, graph)


def _scope(graph, name, default=None):
    return graph._op_scope(name)


# Ops that draw random numbers (a kernel with a generator of its own): a while_loop records
# their draws in its body for its gradient, which replays them (control_flow_ops.py).
_RANDOM_OPS = frozenset([
    "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt",
    "RandomShuffle", "Multinomial", "UniformCandidateSampler", "LogUniformCandidateSampler",
    "FixedUnigramCandidateSampler", "LearnedUnigramCandidateSampler", "AllCandidateSampler"])


def _make(op_type, inputs, attrs=None, name=None, graph=None):
    """Builds one `op_type` node: `inputs` in its definition's order (Tensors, values, or lists
    of them for a list argument), `attrs` by name. Returns the Operation."""
    g = graph or _graph_of(*[i for i in inputs if not isinstance(i, (list, tuple))])
    if op_type in _RANDOM_OPS and getattr(g, "_is_function", False):
        replayed = g._replayed_draw(op_type, name)
        if replayed is not None:
            return replayed
    converted = []
    for i, value in enumerate(inputs):
        what = "%s input %d" % (op_type, i)
        if isinstance(value, (list, tuple)):
            converted.append([_input(v, g, what) for v in value])
        else:
            converted.append(_input(value, g, what))
    try:
        return _op(_troupe.make_op(_scope(g, name), op_type, converted, attrs or {}), g)
    except _errors.InvalidArgumentError as e:
        # What TensorFlow finds wrong while building is TypeError (a dtype the op does not
        # take) or ValueError (shapes): the error is also of that class.
        kind = _DTypeError if _DTYPE_PROBLEM.search(e.message) else _BuildError
        raise kind(e.node_def, e.op, e.message) from None


# What a node that cannot be built says when its dtypes are wrong (graph/node_signature.cpp,
# graph/graph.cpp): an attribute's dtype the op does not take, an input of another dtype, a
# value where the op updates a variable.
_DTYPE_PROBLEM = re.compile(r"does not support \(allowed:|input \d+ \('[^']*'\) "
                            r"(is \w+, expected \w+|must be a reference to a variable)")

# InvalidArgumentError while building, also a ValueError or TypeError as TensorFlow's are.
_BuildError = type("InvalidArgumentError", (_errors.InvalidArgumentError, ValueError), {})
_DTypeError = type("InvalidArgumentError", (_errors.InvalidArgumentError, TypeError), {})


# --- constants and placeholders ---

def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A Const node holding `value` (a Python value or numpy array), of `dtype` if given, filled
    or reshaped to `shape` as TensorFlow's tf.constant does."""
    array = to_numpy(value, dtype, "constant value")
    if shape is not None:
        shape = [int(d) for d in shape]
        if array.size == 1 and int(np.prod(shape)) != 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), array.shape))
    g = get_default_graph()
    return _t(_troupe.const(_scope(g, name), array), g)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TensorFlow's name
    """`input`, unless a step feeds this tensor another value of `shape` (None entries: any
    size)."""
    value = input if isinstance(input, Tensor) else convert_to_tensor(input)
    shape = None if shape is None else [None if d is None else int(d) for d in shape]
    return _make("PlaceholderWithDefault", [value], {"shape": shape}, name).outputs[0]


def placeholder(dtype, shape=None, name=None):
    """A Placeholder of `dtype` and `shape` (None: any; None entries: any size); a step that
    needs it must feed it."""
    dtype = _dtypes.as_dtype(dtype)
    if shape is not None:
        shape = [None if d is None else int(d) for d in shape]
    g = get_default_graph()
    return _t(_troupe.placeholder(_scope(g, name), dtype.as_datatype_enum, shape), g)


def identity(input, name=None):  # noqa: A002 - TensorFlow's name
    g = _graph_of(input)
    return _t(_troupe.identity(_scope(g, name), _input(input, g, "identity input")), g)


def no_op(name=None):
    g = get_default_graph()
    return _op(_troupe.no_op(_scope(g, name)), g)


def group(*inputs, name=None):
    """A NoOp that runs after all of `inputs` (ops or tensors, or lists of them)."""
    flat = []
    for i in inputs:
        flat.extend(i if isinstance(i, (list, tuple)) else [i])
    with control_dependencies(flat):
        return no_op(name=name or "group_deps")


def reshape(tensor, shape, name=None):
    g = _graph_of(tensor, shape)
    shape_input = _input(shape, g, "reshape shape", None if isinstance(shape, Tensor)
                         else _dtypes.int32)
    return _t(_troupe.reshape(_scope(g, name), _input(tensor, g, "reshape tensor"), shape_input),
              g)


def size(input, name=None, out_type=_dtypes.int32):  # noqa: A002 - TensorFlow's name
    """The number of elements of `input` (a scalar of out_type)."""
    attrs = {"out_type": _dtypes.as_dtype(out_type).as_datatype_enum}
    if not isinstance(input, Tensor) and not hasattr(input, "_as_graph_element"):
        input = convert_to_tensor(input)  # a list is one tensor here, not a list argument
    if isinstance(input, Tensor) and input.shape.is_fully_defined():
        # A constant, as TensorFlow's size_internal(optimize=True) gives for a known shape.
        return constant(input.shape.num_elements(), dtype=out_type, name=name or "Size")
    return _make("Size", [input], attrs, name).outputs[0]


def add_n(inputs, name=None):
    """The element-wise sum of a list of tensors of one shape and dtype."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and "
                         "shape")
    inputs = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return identity(inputs[0], name=name)
    return _make("AddN", [list(inputs)], {}, name).outputs[0]


def stop_gradient(input, name=None):  # noqa: A002 - TensorFlow's name
    """`input`, through which tf.gradients passes no gradient."""
    return _make("StopGradient", [input], {}, name).outputs[0]


def shape(input, name=None, out_type=_dtypes.int32):  # noqa: A002
    g = _graph_of(input)
    return _t(_troupe.shape(_scope(g, name), _input(input, g, "shape input"),
                            _dtypes.as_dtype(out_type).as_datatype_enum), g)


def fill(dims, value, name=None):
    g = _graph_of(dims, value)
    result = _t(_troupe.fill(_scope(g, name), _input(dims, g, "fill dims", _dtypes.int32),
                             _input(value, g, "fill value")), g)
    if isinstance(dims, Tensor) and dims.op.type == "Shape":
        # Dims that are a tensor's shape: its static shape, as TensorFlow's shape function
        # reads it through the Shape op.
        result.set_shape(dims.op.inputs[0].shape)
    return result


def _filled(shape, value, dtype, name):
    """A constant of `shape` when it is known while building; else Fill of the shape tensor
    (a 1-D int tensor, or a list holding scalar tensors), as TensorFlow's zeros and ones."""
    dtype = _dtypes.as_dtype(dtype)
    if isinstance(shape, Tensor) or _holds_tensor(shape):
        dims = shape if isinstance(shape, Tensor) else stack(
            [d if isinstance(d, Tensor) else np.int32(d) for d in shape])
        return fill(dims, constant(value, dtype), name=name)
    return constant(np.full([int(d) for d in shape], value, dtype=dtype.as_numpy_dtype), dtype,
                    name=name)


def zeros(shape, dtype=_dtypes.float32, name=None):
    return _filled(shape, 0, dtype, name or "zeros")


def ones(shape, dtype=_dtypes.float32, name=None):
    return _filled(shape, 1, dtype, name or "ones")


def zeros_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    return fill(shape(tensor), constant(0, dtype or tensor.dtype), name=name or "zeros_like")


def ones_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    return fill(shape(tensor), constant(1, dtype or tensor.dtype), name=name or "ones_like")


# --- math ---

def _binary(fn, x, y, name, what):
    g = _graph_of(x, y)
    xi = _input(x, g, what + " x", _like(x, y) if not isinstance(x, Tensor) else None)
    yi = _input(y, g, what + " y", _like(y, x) if not isinstance(y, Tensor) else None)
    return _t(fn(_scope(g, name), xi, yi), g)


def _named(op, what, doc):
    """`op` named `what` (as TensorFlow's function is) and documented by `doc`."""
    op.__name__ = op.__qualname__ = what
    op.__doc__ = doc % what
    return op


def _binary_op(native, what):
    return _named(lambda x, y, name=None: _binary(native, x, y, name, what), what,
                  "tf.%s(x, y, name=None), with numpy broadcasting.")


def _unary_op(native, what):
    return _named(lambda x, name=None: _unary(native, x, name, what), what,
                  "tf.%s(x, name=None), element-wise.")


def _unary(fn, x, name, what):
    g = _graph_of(x)
    return _t(fn(_scope(g, name), _input(x, g, what)), g)


def _by_type(op_type):
    """A native builder (scope, *inputs) -> Output for the registered op `op_type`; what
    cannot be built is also TypeError or ValueError, as in _make."""
    def build(scope, *inputs):
        try:
            return _troupe.make_op(scope, op_type, list(inputs), {}).output(0)
        except _errors.InvalidArgumentError as e:
            kind = _DTypeError if _DTYPE_PROBLEM.search(e.message) else _BuildError
            raise kind(e.node_def, e.op, e.message) from None
    return build


add = _binary_op(_troupe.add, "add")
subtract = _binary_op(_troupe.sub, "subtract")
multiply = _binary_op(_troupe.mul, "multiply")
_div = _binary_op(_troupe.div, "divide")
_floordiv = _binary_op(_by_type("FloorDiv"), "floordiv")


def _division_operands(x, y, what):
    """x and y as Tensors of one dtype, as TensorFlow's division converts them: the dtype of
    the Tensor (or Variable) among them, else x's as a constant; TypeError when they differ."""
    def dtype_of(v):
        return v.dtype if isinstance(v, Tensor) or hasattr(v, "_as_graph_element") else None
    x_dtype, y_dtype = dtype_of(x), dtype_of(y)
    if x_dtype is not None and y_dtype is not None and x_dtype != y_dtype:
        raise TypeError("%s: x and y must have the same dtype, got %r != %r"
                        % (what, x_dtype, y_dtype))
    dtype = x_dtype or y_dtype
    x = convert_to_tensor(x, dtype=dtype)
    return x, convert_to_tensor(y, dtype=x.dtype)


def truediv(x, y, name=None):
    """x / y as Python 3 divides: integers are cast to a float first, as TensorFlow's truediv
    does (uint8 to float32, int32 and int64 to float64, so tf.constant(7) / 2 is 3.5); x and y
    of one dtype (TypeError otherwise)."""
    x, y = _division_operands(x, y, "truediv")
    if x.dtype.is_integer:
        to = _dtypes.float32 if x.dtype == _dtypes.uint8 else _dtypes.float64
        x, y = cast(x, to), cast(y, to)
    return _div(x, y, name=name)


def divide(x, y, name=None):
    """tf.divide: x / y (truediv)."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """tf.div: Python 2's division, floor division for integers (-7 // 2 is -4) and true
    division for floats."""
    x, y = _division_operands(x, y, "div")
    if x.dtype.is_integer:
        return _floordiv(x, y, name=name)
    return _div(x, y, name=name)
maximum = _binary_op(_troupe.maximum, "maximum")
minimum = _binary_op(_troupe.minimum, "minimum")
equal = _binary_op(_troupe.equal, "equal")
not_equal = _binary_op(_troupe.not_equal, "not_equal")
less = _binary_op(_troupe.less, "less")
less_equal = _binary_op(_troupe.less_equal, "less_equal")
greater = _binary_op(_troupe.greater, "greater")
greater_equal = _binary_op(_troupe.greater_equal, "greater_equal")
pow = _binary_op(_by_type("Pow"), "pow")  # noqa: A001  (TensorFlow's name)
squared_difference = _binary_op(_by_type("SquaredDifference"), "squared_difference")
sub = subtract
mul = multiply

negative = _unary_op(_troupe.neg, "negative")
square = _unary_op(_troupe.square, "square")
sqrt = _unary_op(_troupe.sqrt, "sqrt")
exp = _unary_op(_troupe.exp, "exp")
log = _unary_op(_troupe.log, "log")
sigmoid = _unary_op(_troupe.sigmoid, "sigmoid")
tanh = _unary_op(_troupe.tanh, "tanh")
abs = _unary_op(_by_type("Abs"), "abs")  # noqa: A001  (TensorFlow's name)
sign = _unary_op(_by_type("Sign"), "sign")
rsqrt = _unary_op(_by_type("Rsqrt"), "rsqrt")
reciprocal = _unary_op(_by_type("Reciprocal"), "reciprocal")
expm1 = _unary_op(_by_type("Expm1"), "expm1")
log1p = _unary_op(_by_type("Log1p"), "log1p")
floor = _unary_op(_by_type("Floor"), "floor")
ceil = _unary_op(_by_type("Ceil"), "ceil")
round = _unary_op(_by_type("Round"), "round")  # noqa: A001  (TensorFlow's name)
cos = _unary_op(_by_type("Cos"), "cos")
sin = _unary_op(_by_type("Sin"), "sin")
neg = negative


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    g = _graph_of(a, b)
    return _t(_troupe.matmul(_scope(g, name), _input(a, g, "matmul a", _like(a, b)),
                             _input(b, g, "matmul b", _like(b, a)),
                             bool(transpose_a), bool(transpose_b)), g)


def _reduce(fn, input_tensor, axis, keepdims, name, reduction_indices, keep_dims, what):
    if axis is not None and reduction_indices is not None:
        raise ValueError("%s: give axis or reduction_indices, not both" % what)
    axis = reduction_indices if axis is None else axis
    keepdims = keep_dims if keepdims is None else keepdims
    g = _graph_of(input_tensor)
    x = convert_to_tensor(input_tensor) if not isinstance(input_tensor, Tensor) else input_tensor
    if axis is None:
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("%s: axis=None needs an input of known rank (%s)" % (what, x.name))
        axis = list(range(rank))
    axes = _input(axis, g, what + " axis", None if isinstance(axis, Tensor) else _dtypes.int32)
    # Through _input, as every op's input: inside a cond's branch, a tensor from outside it
    # enters through a Switch; inside a traced function, an outer one is captured.
    return _t(fn(_scope(g, name), _input(x, g, what), axes, bool(keepdims)), g)


def _reduce_op(native, what):
    def op(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        return _reduce(native, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                       what)
    return _named(op, what, "tf.%s(input_tensor, axis=None, keepdims=None, name=None): over "
                            "`axis` (all axes when None).")


reduce_sum = _reduce_op(_troupe.sum, "reduce_sum")
reduce_mean = _reduce_op(_troupe.mean, "reduce_mean")
reduce_max = _reduce_op(_troupe.max, "reduce_max")
reduce_prod = _reduce_op(lambda scope, x, axes, keep: _troupe.make_op(
    scope, "Prod", [x, axes], {"keep_dims": keep}).output(0), "reduce_prod")
reduce_min = _reduce_op(_troupe.min, "reduce_min")


def cast(x, dtype, name=None):
    g = _graph_of(x)
    return _t(_troupe.cast(_scope(g, name), _input(x, g, "cast x"),
                           _dtypes.as_dtype(dtype).as_datatype_enum), g)


def to_float(x, name="ToFloat"):
    return cast(x, _dtypes.float32, name=name)


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002
           output_type=_dtypes.int64):
    if axis is not None and dimension is not None:
        raise ValueError("argmax: give axis or dimension, not both")
    axis = dimension if axis is None else axis
    axis = 0 if axis is None else axis
    g = _graph_of(input)
    return _t(_troupe.argmax(_scope(g, name), _input(input, g, "argmax input"),
                             _input(axis, g, "argmax axis", _dtypes.int32),
                             _dtypes.as_dtype(output_type).as_datatype_enum), g)


# --- state ---

def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    g = _graph_of(ref)
    r = _input(ref, g, "assign ref")
    v = _input(value, g, "assign value", _like(value, ref))
    return _t(_troupe.assign(_scope(g, name), r, v,
                             True if validate_shape is None else bool(validate_shape)), g)


def assign_add(ref, value, use_locking=None, name=None):
    g = _graph_of(ref)
    return _t(_troupe.assign_add(_scope(g, name), _input(ref, g, "assign_add ref"),
                                 _input(value, g, "assign_add value", _like(value, ref))), g)


def assign_sub(ref, value, use_locking=None, name=None):
    g = _graph_of(ref)
    return _t(_troupe.assign_sub(_scope(g, name), _input(ref, g, "assign_sub ref"),
                                 _input(value, g, "assign_sub value", _like(value, ref))), g)


def stack(values, axis=0, name="stack"):
    """tf.stack: tensors of one shape stacked into one of rank + 1 along `axis`."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("stack: values must be a non-empty list of tensors, got %r" % (values,))
    if not isinstance(axis, int):
        raise TypeError("stack: axis must be an int, got %r" % (axis,))
    g = _graph_of(*values)
    tensors = [v if isinstance(v, Tensor) else convert_to_tensor(v) for v in values]
    return _make("Pack", [tensors], {"axis": axis}, name, g).outputs[0]


def gather(params, indices, validate_indices=None, name=None, axis=0):
    """tf.gather: the slices of `params` along `axis` at `indices`."""
    g = _graph_of(params, indices)
    params = params if isinstance(params, Tensor) else convert_to_tensor(params)
    indices = indices if isinstance(indices, Tensor) else convert_to_tensor(indices)
    if indices.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("gather: indices must be int32 or int64, got %s" % indices.dtype.name)
    axis = axis if isinstance(axis, Tensor) else np.array(axis, dtype=np.int32)
    return _make("GatherV2", [params, indices, axis], {}, name, g).outputs[0]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums of the slices of `data` by segment id (a prefix of data's shape): result[i] sums
    the slices whose id is i; negative ids are dropped."""
    data = data if isinstance(data, Tensor) else convert_to_tensor(data)
    ids = segment_ids if isinstance(segment_ids, Tensor) else convert_to_tensor(segment_ids)
    if ids.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("unsorted_segment_sum: segment_ids must be int32 or int64, got %s"
                        % ids.dtype.name)
    num = num_segments if isinstance(num_segments, Tensor) else np.int32(num_segments)
    return _make("UnsortedSegmentSum", [data, ids, num], {}, name).outputs[0]


def where(condition, x=None, y=None, name=None):
    """tf.where(condition): the coordinates of the true elements, int64 [num_true, rank].
    tf.where(condition, x, y): the elements of x where condition is true, else of y (x and y of
    one shape; condition a scalar, of their shape, or a vector choosing whole rows)."""
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    condition = condition if isinstance(condition, Tensor) else \
        convert_to_tensor(condition, dtype=_dtypes.bool)
    if condition.dtype != _dtypes.bool:
        raise TypeError("where: condition must be bool, got %s" % condition.dtype.name)
    if x is None:
        return _make("Where", [condition], {}, name).outputs[0]
    g = _graph_of(condition, x, y)
    xi = _input(x, g, "where x", _like(x, y) if not isinstance(x, Tensor) else None)
    yi = _input(y, g, "where y", _like(y, x) if not isinstance(y, Tensor) else None)
    return _t(_by_type("Select")(_scope(g, name or "Select"),
                                 _input(condition, g, "where condition"), xi, yi), g)


def logical_not(x, name=None):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=_dtypes.bool)
    return _make("LogicalNot", [x], {}, name).outputs[0]


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """tf.boolean_mask: the elements (or slices) of `tensor` where `mask`, a bool tensor of the
    shape of tensor's first dimensions, is true."""
    if axis not in (None, 0):
        raise ValueError("boolean_mask: only axis=0 is supported by troupe")
    tensor = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    mask = mask if isinstance(mask, Tensor) else convert_to_tensor(mask, dtype=_dtypes.bool)
    k = mask.shape.ndims
    if k is None or k == 0:
        raise ValueError("boolean_mask: the mask's rank must be known and at least 1")
    if tensor.shape.ndims is not None and tensor.shape.ndims < k:
        raise ValueError("boolean_mask: the mask has rank %d, the tensor only %d"
                         % (k, tensor.shape.ndims))
    with name_scope(name):
        rest = tensor.shape.as_list()[k:] if tensor.shape.ndims is not None else None
        if k > 1:
            if rest is None or any(d is None for d in rest):
                raise ValueError("boolean_mask: with a mask of rank > 1 the tensor's other "
                                 "dimensions must be known")
            tensor = reshape(tensor, [-1] + rest)
            mask = reshape(mask, [-1])
        indices = reshape(where(mask), [-1])
        return gather(tensor, indices, axis=0)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """tf.clip_by_value: `t` with values below clip_value_min raised to it and values above
    clip_value_max lowered to it (gradients flow where `t` is inside the range)."""
    t = t if isinstance(t, Tensor) else convert_to_tensor(t)
    with name_scope(name or "clip_by_value"):
        return maximum(minimum(t, clip_value_max), clip_value_min)


def count_up_to(ref, limit, name=None):
    """The value of the int32 or int64 scalar variable `ref` before it adds 1; once it has
    reached `limit` running it raises OutOfRangeError."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError("count_up_to: limit must be an int, got %r" % (limit,))
    return _make("CountUpTo", [ref], {"limit": limit}, name).outputs[0]


def is_variable_initialized(variable):
    g = _graph_of(variable)
    return _t(_troupe.is_variable_initialized(g._op_scope(None),
                                              _input(variable, g, "is_variable_initialized")), g)


# --- queues ---

class QueueBase:
    """tf.QueueBase: a queue of tuples of tensors, held by the device it is placed on and shared
    by the sessions that use it (FIFOQueue, RandomShuffleQueue)."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes
        if names is not None:
            names = [names] if isinstance(names, str) else list(names)
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            if not all(isinstance(n, str) for n in names):
                raise TypeError("%s: names must be strings, got %r" % (type(self).__name__,
                                                                      names))
        self._names = names
        self._graph = _graph_of(queue_ref)
        self._handle = queue_ref

    @staticmethod
    def _checked(kind, capacity, dtypes, shapes):
        if not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        dtypes = [_dtypes.as_dtype(d) for d in dtypes]
        if shapes is not None:
            from .framework import TensorShape
            # TensorFlow's rule: one shape (a TensorShape, or ints and Nones, () a scalar)
            # stands for a list of one.
            if isinstance(shapes, TensorShape) or all(
                    d is None or isinstance(d, int) for d in shapes):
                shapes = [shapes]
            shapes = [[None if d is None else int(d) for d in s] for s in shapes]
            if len(shapes) != len(dtypes):
                raise ValueError("%s: %d shapes for %d dtypes" % (kind, len(shapes), len(dtypes)))
        if not isinstance(capacity, int) or isinstance(capacity, bool):
            raise TypeError("%s: capacity must be an int, got %r" % (kind, capacity))
        return dtypes, shapes

    @property
    def queue_ref(self):
        return self._handle

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        from .framework import TensorShape
        if self._shapes is None:
            return [TensorShape(None) for _ in self._dtypes]
        return [TensorShape(s) for s in self._shapes]

    @property
    def names(self):
        """The components' names (dequeues give a dict by them), or None."""
        return None if self._names is None else list(self._names)

    @property
    def name(self):
        return self._handle.op.name

    def _values(self, vals, what):
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names) != sorted(vals.keys()):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  "
                                 "Dictionary: (%s), Queue: (%s)"
                                 % (sorted(vals.keys()), sorted(self._names)))
            vals = [vals[k] for k in self._names]
        elif self._names:
            raise ValueError("You must enqueue a dictionary in a Queue with names")
        if not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("%s: %d values for a queue of %d components"
                             % (what, len(vals), len(self._dtypes)))
        g = self._graph
        return [_input(v, g, "%s value" % what, d) for v, d in zip(vals, self._dtypes)]

    def enqueue(self, vals, name=None):
        g = self._graph
        return _op(_troupe.queue_enqueue(_scope(g, name), self._handle._output,
                                         self._values(vals, "enqueue")), g)

    def enqueue_many(self, vals, name=None):
        """Enqueues each slice along dimension 0 of `vals` as one element."""
        g = self._graph
        return _op(_troupe.make_op(_scope(g, name or "enqueue_many"), "QueueEnqueueMany",
                                   [self._handle._output, self._values(vals, "enqueue_many")],
                                   {}), g)

    def _outputs(self, outs, batch):
        tensors = [_t(o, self._graph) for o in outs]
        if self._shapes is not None:
            for t, shape in zip(tensors, self._shapes):
                t.set_shape(list(shape) if batch is False else [batch] + list(shape))
        if self._names:
            return dict(zip(self._names, tensors))
        return tensors[0] if len(tensors) == 1 else tensors

    def dequeue(self, name=None):
        g = self._graph
        outs = _troupe.queue_dequeue(_scope(g, name), self._handle._output,
                                     [d.as_datatype_enum for d in self._dtypes])
        return self._outputs(outs, False)

    def _dequeue_n(self, op_type, n, name):
        n_in = n if isinstance(n, Tensor) else np.array(n, dtype=np.int32)
        op = _make(op_type, [self._handle, n_in],
                   {"component_types": [d.as_datatype_enum for d in self._dtypes]},
                   name=name, graph=self._graph)
        batch = int(n) if not isinstance(n, Tensor) and op_type == "QueueDequeueMany" else None
        return self._outputs([o._output for o in op.outputs], batch)

    def dequeue_many(self, n, name=None):
        """n elements, each component stacked along a new dimension 0; OutOfRange once the queue
        is closed with fewer."""
        return self._dequeue_n("QueueDequeueMany", n, name or "dequeue_many")

    def dequeue_up_to(self, n, name=None):
        """As dequeue_many, but a closed queue gives what it has left (at least one)."""
        return self._dequeue_n("QueueDequeueUpTo", n, name or "dequeue_up_to")

    def close(self, cancel_pending_enqueues=False, name=None):
        g = self._graph
        return _op(_troupe.queue_close(_scope(g, name), self._handle._output,
                                       bool(cancel_pending_enqueues)), g)

    def size(self, name=None):
        g = self._graph
        return _t(_troupe.queue_size(_scope(g, name), self._handle._output), g)


class FIFOQueue(QueueBase):
    """tf.FIFOQueue: elements leave in the order they came."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes, shapes = QueueBase._checked("FIFOQueue", capacity, dtypes, shapes)
        g = get_default_graph()
        handle = _t(_troupe.fifo_queue(_scope(g, name), [d.as_datatype_enum for d in dtypes],
                                       shapes, capacity, shared_name or ""), g)
        super().__init__(dtypes, shapes, names, handle)


class PaddingFIFOQueue(QueueBase):
    """tf.PaddingFIFOQueue: a FIFOQueue whose elements may differ in the dimensions their
    shapes leave unknown (None); dequeue_many and dequeue_up_to pad each component to the
    largest element with zeros (empty strings, False)."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("PaddingFIFOQueue: shapes must be provided for all components "
                             "(None for an unknown dimension)")
        dtypes, shapes = QueueBase._checked("PaddingFIFOQueue", capacity, dtypes, shapes)
        g = get_default_graph()
        attrs = {"component_types": [d.as_datatype_enum for d in dtypes], "shapes": shapes,
                 "capacity": capacity, "shared_name": shared_name or ""}
        handle = _make("PaddingFIFOQueue", [], attrs, name=name, graph=g).outputs[0]
        super().__init__(dtypes, shapes, names, handle)


class RandomShuffleQueue(QueueBase):
    """tf.RandomShuffleQueue: each dequeue takes an element at random, and only while more than
    `min_after_dequeue` remain (until the queue is closed). Seeded as TensorFlow's random ops
    (tf.set_random_seed and `seed`)."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes, shapes = QueueBase._checked("RandomShuffleQueue", capacity, dtypes, shapes)
        if not isinstance(min_after_dequeue, int) or min_after_dequeue < 0:
            raise ValueError("RandomShuffleQueue: min_after_dequeue must be an int >= 0, got %r"
                             % (min_after_dequeue,))
        from .random_ops import _seed_attrs
        g = get_default_graph()
        attrs = dict(_seed_attrs(seed),
                     component_types=[d.as_datatype_enum for d in dtypes], capacity=capacity,
                     min_after_dequeue=min_after_dequeue, shared_name=shared_name or "")
        if shapes is not None:
            attrs["shapes"] = shapes
        handle = _make("RandomShuffleQueue", [], attrs, name=name, graph=g).outputs[0]
        super().__init__(dtypes, shapes, names, handle)


# --- Tensor's operators ---

def _reverse(fn):
    return lambda a, b: fn(b, a)


Tensor.__add__ = add
Tensor.__radd__ = _reverse(add)
Tensor.__sub__ = subtract
Tensor.__rsub__ = _reverse(subtract)
Tensor.__mul__ = multiply
Tensor.__rmul__ = _reverse(multiply)
Tensor.__truediv__ = divide
Tensor.__rtruediv__ = _reverse(divide)
Tensor.__neg__ = negative
Tensor.__pow__ = pow
Tensor.__rpow__ = _reverse(pow)
Tensor.__abs__ = abs
# As in TensorFlow 1.x: <, <=, >, >= build comparisons; == and != stay identity (tensors are
# dict keys), tf.equal and tf.not_equal compare values.
Tensor.__lt__ = less
Tensor.__le__ = less_equal
Tensor.__gt__ = greater
Tensor.__ge__ = greater_equal
