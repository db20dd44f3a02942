"""tf.map_fn, tf.scan, tf.foldl and tf.foldr, as TensorFlow 1.x's functional_ops define them:
a function applied along dimension 0 of `elems` (a tensor, or a nested structure of tensors of
one length), in a tf.while_loop, with gradients.

As in troupe's TensorArray (tensor_array_ops.py), each output is collected into a tensor
[n] + its shape with tensor_scatter_update (the loop's gradient does not record it), so an
output's shape must be the same at every element (TensorArray's stack requires that too).
`fn` is called once outside the loop on element 0 (or the initializer) to make its variables
and learn its outputs' dtypes and shapes; that call is never run, unless an output's shape is not known statically,
in which case the run computes it from element 0 (one call of fn more). Its ops stay in the
graph: a summary fn writes is made there too (so merge_all() evaluates fn on element 0). Inside
the loop fn finds the variables and layers that call made (get_variable, tf.layers, under the
same names); a tf.Variable made inside fn is ValueError (make it outside, or with get_variable).
"""

from . import dtypes as _dtypes
from .control_flow_ops import _flatten_nested, _is_nested, _pack_nested, while_loop
from .framework import Tensor, convert_to_tensor, name_scope


def _elems(elems, what):
    """The flat tensors of `elems` and their length (a Python int when known)."""
    from .ops import shape
    flat = [e if isinstance(e, Tensor) else convert_to_tensor(e, name="elem")
            for e in _flatten_nested(elems)]
    if not flat:
        raise ValueError("%s: elems must be a Tensor or a nested structure of Tensors, got %r"
                         % (what, elems))
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError("%s: elements in elems must be 1+ dimensional Tensors, not "
                             "scalars" % what)
    static = [e.shape.as_list()[0] for e in flat if e.shape.ndims is not None]
    known = [n for n in static if n is not None]
    if len(set(known)) > 1:
        raise ValueError("%s: all elems must have the same size along dimension 0, got %s"
                         % (what, known))
    n = known[0] if known else shape(flat[0])[0]
    return flat, n


def _outputs_like(sample, n):
    """Zero accumulators [n] + shape for the flat sample outputs."""
    from .array_ops import concat
    from .ops import constant, reshape, shape, zeros
    accumulators = []
    for out in sample:
        if isinstance(n, int) and out.shape.is_fully_defined():
            dims = [n] + out.shape.as_list()
        else:
            rest = constant(out.shape.as_list(), dtype=_dtypes.int32) \
                if out.shape.is_fully_defined() else shape(out)
            dims = concat([reshape(convert_to_tensor(n, dtype=_dtypes.int32), [1]), rest], 0)
        accumulators.append(zeros(dims, dtype=out.dtype))
    return accumulators


def _loop(fn_of, n, state, reverse, parallel_iterations, back_prop, swap_memory, what,
          collect=True):
    """The shared loop: i over [0, n) (backwards if reverse), state -> fn_of(i, state) (new
    flat state, flat outputs); returns (final flat state, flat stacked outputs). fn_of(None,
    state) is the call outside the loop, on the first element."""
    from .array_ops import expand_dims
    from .framework import get_default_graph
    from .ops import greater_equal, less, reshape
    from .sparse_ops import tensor_scatter_update
    from .variables import get_variable_scope, variable_scope
    graph = get_default_graph()
    scope = get_variable_scope()
    # fn once, outside the loop: its variables, and its outputs' dtypes and shapes. The layer
    # names it takes are taken again inside the loop, where they then find its variables.
    layer_counts = dict(graph.__dict__.get("_layer_name_counts", {}))
    sample_state, sample_out = fn_of(None, state)
    if len(sample_state) != len(state):
        raise ValueError("%s: fn returned %d values where its accumulator has %d"
                         % (what, len(sample_state), len(state)))
    for new, old in zip(sample_state, state):
        if new.dtype != old.dtype:
            raise TypeError("%s: fn returned a %s where its accumulator is a %s"
                            % (what, new.dtype.name, old.dtype.name))
    accumulators = _outputs_like(sample_out, n) if collect else []
    k, m = len(state), len(accumulators)

    def body(i, *flat):
        current = list(flat[:k])
        body_graph = get_default_graph()
        with variable_scope(scope, reuse=True):  # the variables of the call outside
            body_graph._layer_name_counts = dict(layer_counts)
            new_state, outs = fn_of(i, current)
        made = [op.name for op in body_graph.get_operations()
                if op.type in ("Variable", "VariableV2")]
        if made:
            raise ValueError("%s: fn makes the variable %s with tf.Variable inside the loop: "
                             "make it outside the loop, or with tf.get_variable" % (what, made[0]))
        written = [tensor_scatter_update(acc, reshape(i, [1, 1]), expand_dims(out, 0))
                   for acc, out in zip(flat[k:], outs)] if collect else []
        step = i - 1 if reverse else i + 1
        return [step] + list(new_state) + written

    start = convert_to_tensor(n - 1 if reverse else 0, dtype=_dtypes.int32, name="start")
    results = while_loop(
        (lambda i, *rest: greater_equal(i, 0)) if reverse else (lambda i, *rest: less(i, n)),
        body, [start] + list(state) + accumulators, parallel_iterations=parallel_iterations,
        back_prop=back_prop, swap_memory=swap_memory,
        _unstacked=tuple(range(1 + k, 1 + k + m)))
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    final, stacked = results[1:1 + k], results[1 + k:]
    static_n = n if isinstance(n, int) else None
    for out, sample in zip(stacked, sample_out):
        if sample.shape.ndims is not None:
            out.set_shape([static_n] + sample.shape.as_list())
    for value, initial in zip(final, state):
        value.set_shape(initial.shape)
    return final, stacked


def _assert_same_structure(first, second):
    """As TensorFlow's nest: a sequence against a value, or a different number of elements or
    dict keys, is ValueError; two different kinds of sequence (list, tuple, a namedtuple
    type, dict) are TypeError."""
    def message(what):
        return ("The two structures don't have the same %s.\n\nFirst structure: %s\n\n"
                "Second structure: %s" % (what, first, second))
    nested_a, nested_b = _is_nested(first), _is_nested(second)
    if nested_a != nested_b:
        raise ValueError(message("nested structure"))
    if not nested_a:
        return
    if type(first) is not type(second):
        raise TypeError(message("nested structure"))
    if isinstance(first, dict):
        if sorted(first) != sorted(second):
            raise ValueError(message("keys"))
        pairs = [(first[k], second[k]) for k in sorted(first)]
    else:
        if len(first) != len(second):
            raise ValueError(message("number of elements"))
        pairs = list(zip(first, second))
    for a, b in pairs:
        _assert_same_structure(a, b)


def _check_fn(fn, what):
    if not callable(fn):
        raise TypeError("%s: fn must be callable." % what)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """fn applied to each element of elems (unpacked along dimension 0), the results stacked:
    of elems' structure and dtypes, or of `dtype`'s when fn returns something else."""
    from .ops import gather
    _check_fn(fn, "map_fn")
    with name_scope(name, "map"):
        flat, n = _elems(elems, "map_fn")
        structure = dtype if dtype is not None else elems
        expected = [_dtypes.as_dtype(d) for d in _flatten_nested(dtype)] \
            if dtype is not None else [e.dtype for e in flat]

        def fn_of(i, state):
            i = 0 if i is None else i
            element = _pack_nested(elems, [gather(e, i) for e in flat]) \
                if _is_nested(elems) else gather(flat[0], i)
            result = fn(element)
            _assert_same_structure(structure, result)
            outs = [o if isinstance(o, Tensor) else convert_to_tensor(o)
                    for o in _flatten_nested(result)]
            for out, want in zip(outs, expected):
                if out.dtype != want:
                    raise TypeError("map_fn: fn returned a %s where %s expects a %s (give "
                                    "dtype= when fn's output differs from elems)"
                                    % (out.dtype.name, "dtype" if dtype is not None
                                       else "elems", want.name))
            return [], outs

        _, stacked = _loop(fn_of, n, [], False, parallel_iterations or 10, back_prop,
                           swap_memory, "map_fn")
        return _pack_nested(structure, stacked) if _is_nested(structure) else stacked[0]


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The accumulator after each element: a = fn(a, x) over elems (backwards with reverse),
    starting from initializer (else from the first element, which is then the first
    output), the values of a stacked."""
    from .array_ops import concat, expand_dims
    from .ops import gather
    _check_fn(fn, "scan")
    with name_scope(name, "scan"):
        flat, n = _elems(elems, "scan")
        element = (lambda i: _pack_nested(elems, [gather(e, i) for e in flat])
                   if _is_nested(elems) else gather(flat[0], i))
        if initializer is None:
            # The first element (the last with reverse) starts it and is the first output.
            structure = elems
            first = (n - 1) if reverse else 0
            if n == 0:
                raise ValueError("scan: elems has no element to start from (give an "
                                 "initializer)")
            state = [gather(e, first) for e in flat]
            rest_n = n - 1
        else:
            structure = initializer
            state = [s if isinstance(s, Tensor) else convert_to_tensor(s)
                     for s in _flatten_nested(initializer)]
            rest_n = n

        def fn_of(i, current):
            # Outside the loop: element 0, there whatever the length (the call is for shapes).
            index = 0 if i is None else i if initializer is not None or reverse else i + 1
            a = _pack_nested(structure, current) if _is_nested(structure) else current[0]
            result = fn(a, element(index))
            _assert_same_structure(structure, result)
            outs = [o if isinstance(o, Tensor) else convert_to_tensor(o)
                    for o in _flatten_nested(result)]
            return outs, outs

        _, stacked = _loop(fn_of, rest_n, state, reverse, parallel_iterations, back_prop,
                           swap_memory, "scan")
        if initializer is None:
            # The starting element is an output too: first (or last, with reverse).
            stacked = [concat([s, expand_dims(v, 0)], 0) if reverse
                       else concat([expand_dims(v, 0), s], 0)
                       for s, v in zip(stacked, state)]
            for out, v in zip(stacked, state):
                if v.shape.ndims is not None:
                    out.set_shape([n if isinstance(n, int) else None] + v.shape.as_list())
        return _pack_nested(structure, stacked) if _is_nested(structure) else stacked[0]


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse,
          what):
    from .ops import gather
    _check_fn(fn, what)
    with name_scope(name, what):
        flat, n = _elems(elems, what)
        element = (lambda i: _pack_nested(elems, [gather(e, i) for e in flat])
                   if _is_nested(elems) else gather(flat[0], i))
        if initializer is None:
            structure = elems
            if n == 0:
                raise ValueError("%s: elems has no element to start from (give an "
                                 "initializer)" % what)
            state = [gather(e, (n - 1) if reverse else 0) for e in flat]
            rest_n = n - 1
        else:
            structure = initializer
            state = [s if isinstance(s, Tensor) else convert_to_tensor(s)
                     for s in _flatten_nested(initializer)]
            rest_n = n

        def fn_of(i, current):
            # Outside the loop: element 0, there whatever the length (the call is for shapes).
            index = 0 if i is None else i if initializer is not None or reverse else i + 1
            a = _pack_nested(structure, current) if _is_nested(structure) else current[0]
            result = fn(a, element(index))
            _assert_same_structure(structure, result)
            outs = [o if isinstance(o, Tensor) else convert_to_tensor(o)
                    for o in _flatten_nested(result)]
            return outs, []

        final, _ = _loop(fn_of, rest_n, state, reverse, parallel_iterations, back_prop,
                         swap_memory, what, collect=False)
        return _pack_nested(structure, final) if _is_nested(structure) else final[0]


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """a = fn(a, x) over elems from the first: the last a. Without initializer, a starts as
    the first element."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 False, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """a = fn(a, x) over elems from the last: the last a. Without initializer, a starts as
    the last element."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 True, "foldr")
