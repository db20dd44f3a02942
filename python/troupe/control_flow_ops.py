"""tf.cond and tf.case, built as TensorFlow 1.x builds them from Switch and Merge
(graph/ops/control_flow_ops.hpp): the predicate switches a pivot into each branch, every op a
branch creates depends on its pivot, a tensor from outside a branch enters it through a Switch
on the predicate, and Merge forwards the taken branch's results. Only the taken branch's ops run
(side effects included). Gradients flow back as TensorFlow's do: a Merge's gradient is
switched into the branches, and each entering Switch's gradient is a Merge of its sides'.
A branch may run on other devices and tasks than its predicate: the untaken side's values cross
to them as dead values (devices/executor.hpp), so its ops never run. And tf.while_loop."""

from . import _troupe
from . import dtypes as _dtypes
from .framework import (Operation, Tensor, TensorShape, control_dependencies,
                        convert_to_tensor, get_default_graph, name_scope)
from .ops import _RANDOM_OPS, _make, group, identity, no_op


def _switch(data, pred):
    op = _make("Switch", [data, pred], {})
    return op.outputs[0], op.outputs[1]


def _merge(values):
    return _make("Merge", [list(values)], {}).outputs[0]


def _flatten(result):
    """(list of Tensors/Operations, rebuild function) of a branch's result."""
    if isinstance(result, (Tensor, Operation)) or hasattr(result, "_as_graph_element"):
        return [result], lambda values: values[0]
    if isinstance(result, (list, tuple)):
        kind = type(result)
        return list(result), lambda values: kind(values) if kind is tuple else list(values)
    if isinstance(result, dict):
        keys = sorted(result)
        return [result[k] for k in keys], lambda values: dict(zip(keys, values))
    raise TypeError("cond: a branch must return Tensors or Operations (or a list, tuple or dict "
                    "of them), got %r" % (result,))


class _CondContext:
    """One branch of a tf.cond while it is built (TensorFlow 1.x's CondContext): an op of the
    branch that uses a tensor from outside it (ops._input asks enter()) gets that tensor
    through a Switch on the predicate, made outside the branch's control dependencies, so that
    its gradient comes back through a Merge that always has one live input. A variable's
    reference stays a reference for the ops that change the variable (assign and the like);
    other ops read it outside the branch and get the read through the Switch."""

    def __init__(self, graph, pred, branch):
        self.graph = graph
        self.pred = pred
        self.branch = branch  # the Switch output this branch takes: 0 false, 1 true
        self.outer = graph._cond_context
        self.entry_scope = graph._scope
        self.first_id = graph._root.num_nodes()
        self.entered = {}  # outer Output -> the Tensor that enters

    def inside(self, tensor):
        return tensor.op._op.id >= self.first_id

    def enter(self, tensor):
        key = tensor._output
        if key not in self.entered:
            graph = self.graph
            graph._cond_context = self.outer  # the Switch's own inputs enter the outer branch
            try:
                # The Switch (and a variable's read) lives with the tensor, as TensorFlow's:
                # only the branch that takes it moves it to the branch's device.
                with graph._push(self.entry_scope), graph.colocate_with(tensor.op):
                    value = identity(tensor) if key.is_ref else tensor
                    switch = _make("Switch", [value, self.pred], {})
                self.entered[key] = switch.outputs[self.branch]
            finally:
                graph._cond_context = self
        return self.entered[key]


def _branch(fn, pivot, what, pred=None, branch=None):
    graph = get_default_graph()
    context = _CondContext(graph, pred, branch) if pred is not None else None
    with graph.control_dependencies([pivot.op]):
        if context is not None:
            graph._cond_context = context
        try:
            result = fn()
            values, rebuild = _flatten(result)
            outputs = []
            # Made inside the branch: a result from outside it (`lambda: x`) enters through
            # a Switch too, so that its gradient comes back through a Merge.
            for value in values:
                if hasattr(value, "_as_graph_element") and not isinstance(value, (Tensor,
                                                                                    Operation)):
                    value = value._as_graph_element()
                if isinstance(value, Operation):
                    # An op as a result: a tensor that exists once it has run.
                    with graph.control_dependencies([value]):
                        outputs.append(identity(pivot))
                elif isinstance(value, Tensor):
                    outputs.append(identity(value))
                else:
                    try:
                        outputs.append(identity(convert_to_tensor(value)))
                    except (TypeError, ValueError):
                        raise TypeError("cond: %s returned %r, which is not a Tensor"
                                        % (what, value))
        finally:
            if context is not None:
                graph._cond_context = context.outer
    return values, outputs, rebuild


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """true_fn()'s results when pred is true, else false_fn()'s; only that branch runs. Both
    must return the same structure; a branch that returns one-element list gives its element
    unless strict."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): true_fn and fn1 may not be set simultaneously.")
        true_fn = fn1
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): false_fn and fn2 may not be set simultaneously.")
        false_fn = fn2
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    with name_scope(name, "cond"):
        pred = pred if isinstance(pred, Tensor) else convert_to_tensor(pred, dtype=_dtypes.bool)
        if pred.dtype != _dtypes.bool:
            raise TypeError("cond: pred must be a bool scalar, got %s" % pred.dtype.name)
        if pred.shape.ndims not in (None, 0):
            raise ValueError("cond: pred must be a scalar, got shape %s" % pred.shape)
        switch_f, switch_t = _switch(pred, pred)
        pivot_t = identity(switch_t, name="switch_t")
        pivot_f = identity(switch_f, name="switch_f")
        true_values, true_outputs, rebuild = _branch(true_fn, pivot_t, "true_fn", pred, 1)
        false_values, false_outputs, _ = _branch(false_fn, pivot_f, "false_fn", pred, 0)
        if len(true_outputs) != len(false_outputs):
            raise ValueError("Outputs of true_fn and false_fn must have the same structure: %d "
                             "and %d results" % (len(true_outputs), len(false_outputs)))
        merged = []
        for t, f, tv, fv in zip(true_outputs, false_outputs, true_values, false_values):
            if isinstance(tv, Operation) != isinstance(fv, Operation):
                raise TypeError("Outputs of true_fn and false_fn must have the same type(s): "
                                "%r and %r" % (tv, fv))
            if t.dtype != f.dtype:
                raise ValueError("Outputs of true_fn and false_fn must have the same type: "
                                 "%s, %s" % (t.dtype.name, f.dtype.name))
            result = _merge([t, f])
            get_default_graph()._cond_merges[result.op.name] = pred
            merged.append(result.op if isinstance(tv, Operation) else result)
        out = rebuild(merged)
        if not strict and isinstance(out, list) and len(out) == 1:
            return out[0]
        return out


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first pair whose predicate is true (else `default`, else the last
    pair's), as nested conds. With exclusive=True the step fails with InvalidArgumentError when
    more than one predicate holds (TensorFlow's message)."""
    if isinstance(pred_fn_pairs, dict):
        pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, (list, tuple)):
        pairs = list(pred_fn_pairs)
    else:
        raise TypeError("pred_fn_pairs must be a list or a dict, got %r" % (pred_fn_pairs,))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple of a predicate and a "
                            "callable, got %r" % (pair,))
    if default is None:
        if not pairs:
            raise ValueError("case: no predicates and no default")
        *pairs, (_, default) = pairs
    with name_scope(name, "case"):
        checks = []
        if exclusive and pairs:
            from .ops import cast, constant, less, reduce_sum, stack
            predicates = [convert_to_tensor(p, dtype=_dtypes.bool) for p, _ in pairs]
            values = stack(predicates, name="preds_c")
            count = reduce_sum(cast(values, _dtypes.int32), name="num_true_conds")
            checks.append(Assert(
                less(count, constant(2, name="two_true_conds")),
                ["More than one condition evaluated as True but exclusive=True. Conditions: "
                 "(%s), Values:" % ", ".join(p.name for p in predicates), values],
                summarize=len(predicates)))
            pairs = list(zip(predicates, [fn for _, fn in pairs]))
        with control_dependencies(checks):
            result = default
            for pred, fn in reversed(pairs):
                result = (lambda p, f, rest: (lambda: cond(p, f, rest, strict=strict)))(
                    pred, fn, result)
            return result()


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """An op that fails the step with InvalidArgumentError "assertion failed: [data...]" when
    `condition` (a bool scalar) is false; run it, or make what follows depend on it."""
    with name_scope(name, "Assert", [condition, data]):
        condition = convert_to_tensor(condition, dtype=_dtypes.bool)
        values = [convert_to_tensor(d) for d in data]
        return _make("Assert", [condition, values],
                     {"summarize": 3 if summarize is None else int(summarize)}, name="Assert")


def tuple_(tensors, name=None, control_inputs=None):
    """tf.tuple: the tensors, each released only once all of them (and `control_inputs`) are
    computed (an Operation among them: a no-op after them). Exported as `tuple`."""
    with name_scope(name, "tuple", [t for t in tensors if t is not None]):
        gating = [t if isinstance(t, Operation) else t.op for t in tensors if t is not None]
        if control_inputs:
            gating += list(control_inputs)
        gate = group(*gating)
        out = []
        for t in tensors:
            if t is None:
                out.append(None)
                continue
            with control_dependencies([gate]):
                out.append(no_op() if isinstance(t, Operation) else identity(t))
        return out


# --- tf.while_loop ---
#
# A loop is one While node whose condition and body are functions of the graph (traced as
# Dataset.map's are: python/troupe/function_graph.py), run by the device one call after the
# other. Its gradient runs the loop again recording every iteration's loop variables, then a
# second While runs the body's gradient backwards over them, summing the gradients of the
# tensors the body captures (_while_grad).


def _is_nested(value):
    return isinstance(value, (list, tuple, dict))


def _flatten_nested(structure):
    """The leaves of lists, tuples (namedtuples included) and dicts (by sorted key); a
    TensorArray is two leaves, its elements and its size (tensor_array_ops.py)."""
    from .tensor_array_ops import TensorArray, _flat
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in _flatten_nested(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten_nested(item)]
    if isinstance(structure, TensorArray):
        return _flat(structure)
    return [structure]


def _pack_nested(structure, flat):
    """`flat` (as _flatten_nested gives) in the shape of `structure`."""
    from .tensor_array_ops import TensorArray
    leaves = iter(flat)

    def pack(s):
        if isinstance(s, dict):
            return type(s)((key, pack(s[key])) for key in sorted(s))
        if isinstance(s, (list, tuple)):
            items = [pack(item) for item in s]
            if hasattr(s, "_fields"):
                return type(s)(*items)
            return type(s)(items)
        if isinstance(s, TensorArray):
            elements = next(leaves)
            return s._with(elements, next(leaves))
        return next(leaves)

    return pack(structure)


def _tensor_arrays(structure):
    """The TensorArrays among the leaves of `structure`, in _flatten_nested's order."""
    from .tensor_array_ops import TensorArray
    if isinstance(structure, dict):
        return [ta for key in sorted(structure) for ta in _tensor_arrays(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [ta for item in structure for ta in _tensor_arrays(item)]
    return [structure] if isinstance(structure, TensorArray) else []


def _same_structure(a, b):
    from .tensor_array_ops import TensorArray
    if isinstance(a, TensorArray) or isinstance(b, TensorArray):
        return isinstance(a, TensorArray) and isinstance(b, TensorArray)
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and \
            all(_same_structure(a[k], b[k]) for k in a)
    if _is_nested(a) or _is_nested(b):
        return _is_nested(a) and _is_nested(b) and len(a) == len(b) and \
            all(_same_structure(x, y) for x, y in zip(a, b))
    return True


class _Loop:
    """What the gradient of a While needs to know: its body as a function of flat tensors."""

    def __init__(self, flat_body, num_vars, attrs, unstacked=()):
        self.flat_body = flat_body
        self.num_vars = num_vars
        self.attrs = attrs
        # Loop variables whose values the body's gradient does not read: not recorded.
        self.unstacked = list(unstacked)
        # The variable scope the body was built in: its gradient runs the body again there,
        # reusing its variables (get_variable in the body finds them, whatever scope is
        # current when tf.gradients is called).
        from .variables import get_variable_scope
        self.variable_scope = get_variable_scope()
        self.captures = []  # what the traced body captured (the op's inputs may be switched)
        # Loop variables that are the elements of a dynamic_size TensorArray the body reads:
        # their gradient cannot be taken (set by while_loop).
        self.growing_read = []
        # The body's random ops, in the order the body makes them: (op type, indices of
        # their outputs in `drawn`); `drawn` and `drawn_shapes` are the While's outputs
        # recording each draw of every iteration (flat, and its size and shape in each), which
        # the gradient replays; `drawn_static` their static shapes (set by _build_while).
        self.draw_ops = []
        self.drawn = []
        self.drawn_shapes = []
        self.drawn_static = []
        # What the gradient cannot replay: random ops in a function nested in the body (a
        # loop's), or in the condition (the number of iterations would be drawn again).
        self.nested_draws = None
        self.cond_draws = None
        self.types = []
        self.invariants = []


class _DrawReplay:
    """The random draws of a loop's first run, standing for the random ops its body makes
    when traced again for the gradient: the i-th random op made gets the i-th op's draws in
    iteration `iteration` (a tensor of the graph being traced)."""

    def __init__(self, loop, loop_name, records, iteration):
        self.loop = loop
        self.loop_name = loop_name
        self.records = records  # per draw: (flat values, [size, shape...] rows, offsets)
        self.iteration = iteration
        self.position = 0

    @staticmethod
    def records_of(loop):
        """Per draw of the loop's record: its values, sizes and shapes, and where each
        iteration's values start (built where the gradient is, once for every iteration)."""
        from .math_ops import cumsum
        return [(flat, shapes, cumsum(shapes[:, 0], exclusive=True))
                for flat, shapes in zip(loop.drawn, loop.drawn_shapes)]

    def _draw(self, i):
        from .ops import gather, reshape
        from .array_ops import slice as slice_
        flat, shapes, offsets = self.records[i]
        row = gather(shapes, self.iteration)
        begin = reshape(gather(offsets, self.iteration), [1])
        value = reshape(slice_(flat, begin, row[0:1]), row[1:])
        value.set_shape(self.loop.drawn_static[i])
        return value

    def next(self, op_type, name):
        ops = self.loop.draw_ops
        if self.position >= len(ops) or ops[self.position][0] != op_type:
            raise ValueError(
                "the gradient of %s: its body, traced again for the gradient, made the random "
                "op %s (%s) where its first tracing made %s; a loop body must make the same "
                "ops each time it is called" % (
                    self.loop_name, self.position + 1, op_type,
                    ops[self.position][0] if self.position < len(ops) else "no more"))
        indices = ops[self.position][1]
        self.position += 1
        with name_scope(name or op_type):
            return _ReplayedDraw(op_type, [self._draw(i) for i in indices])

    def finish(self):
        if self.position != len(self.loop.draw_ops):
            raise ValueError(
                "the gradient of %s: its body, traced again for the gradient, made %d random "
                "ops where its first tracing made %d; a loop body must make the same ops each "
                "time it is called" % (self.loop_name, self.position, len(self.loop.draw_ops)))


class _ReplayedDraw:
    """What a random op's maker gets back in a replayed body: its outputs, first drawn."""

    def __init__(self, op_type, outputs):
        self.type = op_type
        self.outputs = outputs
        self.name = outputs[0].op.name


def _trace_function(fn, outer, types, shapes):
    """Traces fn(*args) on one argument per loop variable: (graph, flat results)."""
    from .function_graph import FunctionGraph
    graph = FunctionGraph(outer, len(types))
    with graph.as_default():
        args = [graph.arg(i, t, s, "loop_var_%d" % i) for i, (t, s) in enumerate(zip(types,
                                                                                    shapes))]
        results = fn(args)
    return graph, results


def _as_tensor_in(graph, value, what):
    from .framework import IndexedSlices
    if isinstance(value, IndexedSlices):
        raise TypeError("while_loop: %s is IndexedSlices, which troupe's loops do not carry "
                        "yet" % what)
    if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
        value = value._as_graph_element()
    if isinstance(value, Operation):
        raise TypeError("while_loop: %s is the Operation %r; expected a Tensor" % (what,
                                                                                    value.name))
    tensor = convert_to_tensor(value)
    if tensor.graph is not graph:
        tensor = graph._capture(tensor)
    return tensor


def _build_while(cond_fn, body_fn, flat_vars, invariants, parallel_iterations, loop=None):
    """One While node for flat loop variables: the node."""
    from .function_graph import shape_attr
    outer = get_default_graph()
    types = [v.dtype for v in flat_vars]

    def traced_cond(args):
        verdict = cond_fn(args)
        return [verdict]

    cond_graph, verdict = _trace_function(traced_cond, outer, types, invariants)
    with cond_graph.as_default():
        verdict = _as_tensor_in(cond_graph, verdict[0], "the result of cond")
        if verdict.dtype != _dtypes.bool:
            raise TypeError("while_loop: cond must return a boolean scalar, got %s"
                            % verdict.dtype.name)
        if verdict.shape.ndims not in (None, 0):
            raise ValueError("while_loop: cond must return a scalar, got shape %s"
                             % verdict.shape)
        cond_graph.retval(verdict, 0)

    body_graph, results = _trace_function(body_fn, outer, types, invariants)
    # Its random draws, recorded for the gradient (which replays them: _DrawReplay).
    draws = [] if loop is None else [
        body_op for body_op in body_graph.get_operations() if body_op.type in _RANDOM_OPS]
    if loop is not None:
        loop.nested_draws = body_graph._nested_draws
        loop.cond_draws = cond_graph._nested_draws or next(
            (cond_op.type for cond_op in cond_graph.get_operations()
             if cond_op.type in _RANDOM_OPS), None)
    with body_graph.as_default():
        tensors = []
        for i, (value, var, invariant) in enumerate(zip(results, flat_vars, invariants)):
            tensor = _as_tensor_in(body_graph, value, "loop variable %d returned by body" % i)
            if tensor.dtype != var.dtype:
                raise TypeError("while_loop: body returned %s for loop variable %d (%s), which "
                                "is %s" % (tensor.dtype.name, i, var.name, var.dtype.name))
            if not invariant.is_compatible_with(tensor.shape):
                raise ValueError(
                    "Input tensor '%s' enters the loop with shape %s, but has shape %s after "
                    "one iteration. To allow the shape to vary across iterations, use the "
                    "`shape_invariants` argument of tf.while_loop to specify a less-specific "
                    "shape." % (var.name, invariant, tensor.shape))
            tensors.append(tensor)
        for i, tensor in enumerate(tensors):
            body_graph.retval(tensor, i)
        drawn = [out for body_op in draws for out in body_op.outputs]
        for j, tensor in enumerate(drawn):
            body_graph.retval(tensor, len(tensors) + j, allow_dead=True)

    attrs = {"T": [t.as_datatype_enum for t in types],
             "Tcond": [t.dtype.as_datatype_enum for t in cond_graph._captures],
             "Tbody": [t.dtype.as_datatype_enum for t in body_graph._captures],
             "cond": cond_graph.serialize(), "body": body_graph.serialize(),
             "output_shapes": [shape_attr(s) for s in invariants],
             "parallel_iterations": int(parallel_iterations)}
    if drawn:
        attrs["Tdrawn"] = [t.dtype.as_datatype_enum for t in drawn]
        attrs["Ndrawn"] = len(drawn)
        attrs["drawn_from"] = [body_op.name for body_op in draws for _ in body_op.outputs]
    op = _make("While", [list(flat_vars), list(cond_graph._captures),
                         list(body_graph._captures)], attrs, name="While")
    if loop is not None:
        loop.attrs = attrs
        loop.captures = list(body_graph._captures)
        loop.types = types
        loop.invariants = list(invariants)
        n = len(flat_vars)
        loop.drawn = op.outputs[n:n + len(drawn)]
        loop.drawn_shapes = op.outputs[n + len(drawn):n + 2 * len(drawn)]
        loop.drawn_static = [tensor.shape for tensor in drawn]
        first = 0
        for body_op in draws:
            count = len(body_op.outputs)
            loop.draw_ops.append((body_op.type, list(range(first, first + count))))
            first += count
        outer._while_loops[op.name] = loop
    return op


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False, _unstacked=()):
    """Repeats body while cond is true, as TensorFlow 1.x's tf.while_loop: cond(*loop_vars)
    is a boolean scalar, body(*loop_vars) gives loop variables of the same structure, dtypes
    and shapes (or shapes compatible with `shape_invariants`). Returns the loop variables
    after the last iteration (the single tensor when there is one loop variable, unless
    return_same_structure). Gradients flow through it to the loop variables and to the tensors
    the body uses. Loop variables are Tensors (and values convertible to them) and
    TensorArrays (tensor_array_ops.py); IndexedSlices and SparseTensor loop variables are not
    supported. (`_unstacked`, troupe's
    own: flat indices of loop variables whose values the body's gradient never reads, such as
    an accumulator written with tensor_scatter_update; the gradient does not record them.)"""
    from .framework import TensorShape
    if _unstacked and maximum_iterations is not None:
        raise ValueError("while_loop: _unstacked with maximum_iterations is not supported")
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, int) or \
            parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if loop_vars is None or (_is_nested(loop_vars) and not _tensor_arrays(loop_vars) and
                             not _flatten_nested(loop_vars)):
        raise ValueError("No loop variables provided")
    with name_scope(name, "while"):
        if maximum_iterations is not None:
            maximum = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum.shape.ndims not in (None, 0):
                raise ValueError("maximum_iterations must be a scalar, saw shape: %s"
                                 % maximum.shape)
            from .ops import constant, less
            from .math_ops import logical_and
            counter = constant(0, dtype=maximum.dtype, name="iteration_counter")
            single = _is_nested(loop_vars) and len(loop_vars) == 1 and \
                not return_same_structure
            inner_vars = loop_vars[0] if single else loop_vars
            unpack = (lambda lv: (lv,)) if single or not _is_nested(inner_vars) else \
                (lambda lv: tuple(lv))
            user_cond, user_body = cond, body
            cond = lambda i, lv: logical_and(less(i, maximum), user_cond(*unpack(lv)))  # noqa
            body = lambda i, lv: (i + 1, user_body(*unpack(lv)))  # noqa: E731
            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants[0] if single
                                    else shape_invariants)
            result = while_loop(cond, body, (counter, inner_vars), shape_invariants,
                                parallel_iterations, back_prop, swap_memory,
                                return_same_structure=True)
            return result[1]

        structure = loop_vars if _is_nested(loop_vars) else [loop_vars]
        structure = _allocate_tensor_arrays(structure, body, loop_vars)
        flat_vars = []
        for i, value in enumerate(_flatten_nested(structure)):
            if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
                value = value._as_graph_element()
            if not isinstance(value, Tensor):
                try:
                    value = convert_to_tensor(value, name="loop_var_%d" % i)
                except (TypeError, ValueError) as e:
                    raise TypeError("while_loop: loop variable %d (%r) is not a Tensor: %s"
                                    % (i, value, e)) from None
            flat_vars.append(value)
        if shape_invariants is None:
            invariants = [v.shape for v in flat_vars]
        else:
            given = shape_invariants if _is_nested(loop_vars) else [shape_invariants]
            # A TensorArray's place takes any invariant: its own shapes are used (below).
            given = _replace_tensor_arrays(structure, given)
            if not _same_structure(structure, given):
                raise ValueError("The two structures don't have the same nested structure.\n\n"
                                 "First structure: %s\n\nSecond structure: %s"
                                 % (structure, given))
            invariants = [s if isinstance(s, TensorShape) else
                          TensorShape(None) if s is _ARRAY_PLACE else TensorShape(s)
                          for s in _flatten_nested(_array_places(given))]
            for var, invariant in zip(flat_vars, invariants):
                if not invariant.is_compatible_with(var.shape):
                    raise ValueError(
                        "The shape invariant specified for %s is not compatible with the "
                        "initial shape of the loop variable. It enters the loop with shape %s, "
                        "but the specified shape invariant is %s." % (var.name, var.shape,
                                                                      invariant))
        # A TensorArray's elements may grow (dynamic_size) and their first write may give
        # their element shape: only its rank is kept, and its size is a scalar.
        for index, ta in zip(_tensor_array_elements(structure), _tensor_arrays(structure)):
            elements = flat_vars[index].shape
            if elements.ndims is not None:
                first = None if ta._dynamic_size else elements.as_list()[0]
                rest = ta._element_shape.as_list() if ta._element_shape.ndims is not None \
                    else [None] * (elements.ndims - 1)
                invariants[index] = TensorShape([first] + rest)
            else:
                invariants[index] = TensorShape(None)
            invariants[index + 1] = TensorShape([])

        def flat_cond(args):
            return cond(*_pack_nested(structure, args))

        reads = []  # per TensorArray loop variable: a log of the body's reads of it

        def flat_body(args):
            packed = _pack_nested(structure, args)
            del reads[:]
            for ta in _tensor_arrays(packed):
                ta._reads = []
                reads.append(ta._reads)
            result = body(*packed)
            if not _is_nested(loop_vars):
                result = [result] if not _is_nested(result) or len(result) != 1 else result
            elif not _is_nested(result):
                result = [result]
            if not _same_structure(list(structure), list(result)):
                raise ValueError("The two structures don't have the same nested structure.\n\n"
                                 "First structure: %s\n\nSecond structure: %s"
                                 % (list(structure), list(result)))
            return _flatten_nested(list(result))

        loop = _Loop(flat_body, len(flat_vars), None, _unstacked) if back_prop else None
        op = _build_while(flat_cond, flat_body, flat_vars, invariants, parallel_iterations,
                          loop=loop)
        arrays = _tensor_arrays(structure)
        for ta, log in zip(arrays, reads):
            # Reads in this loop are reads of the enclosing loop's array too (a nested loop).
            if log and ta._reads is not None:
                ta._reads.extend(log)
        if loop is not None:
            # A TensorArray the body only writes: its gradient does not read the elements,
            # so the loop's gradient does not record them (as map_fn's results).
            elements = _tensor_array_elements(structure)
            loop.unstacked += [index for index, log in zip(elements, reads) if not log]
            # One the body reads and grows (dynamic_size) cannot be recorded: its elements
            # change shape from one iteration to the next.
            loop.growing_read = [index for index, ta, log in zip(elements, arrays, reads)
                                 if log and ta._dynamic_size]
        outputs = op.outputs[:len(flat_vars)]
        if len(outputs) == 1 and not return_same_structure:
            return outputs[0]
        packed = _pack_nested(structure, outputs)
        if not return_same_structure and len(packed) == 1 and not _is_nested(packed[0]):
            return packed[0]  # one loop variable (a TensorArray): itself, as TensorFlow's
        return packed


_ARRAY_PLACE = object()  # a shape invariant's stand-in for a TensorArray's two tensors


def _array_places(given):
    """`given` with each TensorArray made a pair of _ARRAY_PLACE (its flat tensors' places)."""
    from .tensor_array_ops import TensorArray
    if isinstance(given, TensorArray):
        return [_ARRAY_PLACE, _ARRAY_PLACE]
    if isinstance(given, dict):
        return type(given)((key, _array_places(given[key])) for key in given)
    if isinstance(given, (list, tuple)):
        items = [_array_places(item) for item in given]
        return type(given)(*items) if hasattr(given, "_fields") else type(given)(items)
    return given


def _replace_tensor_arrays(structure, given):
    """`given` (shape invariants of `structure`'s form) with each TensorArray's place made the
    TensorArray itself, whatever was given there."""
    from .tensor_array_ops import TensorArray
    if isinstance(structure, TensorArray):
        return structure
    if isinstance(structure, dict) and isinstance(given, dict):
        return type(given)((key, _replace_tensor_arrays(structure[key], given[key])
                            if key in structure else given[key]) for key in given)
    if isinstance(structure, (list, tuple)) and isinstance(given, (list, tuple)) and \
            len(structure) == len(given):
        items = [_replace_tensor_arrays(s, g) for s, g in zip(structure, given)]
        return type(given)(*items) if hasattr(given, "_fields") else type(given)(items)
    return given


def _tensor_array_elements(structure):
    """The flat indices of the elements of each TensorArray of `structure`."""
    from .tensor_array_ops import TensorArray
    indices, position = [], 0

    def walk(s):
        nonlocal position
        if isinstance(s, dict):
            for key in sorted(s):
                walk(s[key])
        elif isinstance(s, (list, tuple)):
            for item in s:
                walk(item)
        elif isinstance(s, TensorArray):
            indices.append(position)
            position += 2
        else:
            position += 1

    walk(structure)
    return indices


_SAMPLE_COLLECTIONS = ("summaries", "update_ops", "losses", "regularization_losses")


def _allocate_tensor_arrays(structure, body, loop_vars):
    """`structure` with elements for each TensorArray that has none yet (its element shape is
    not fully known). The body is first traced in a function graph that is then dropped: where
    that shows the element shape each writes, the elements are zeros of it, and nothing else is
    added to the graph. Otherwise (a shape only known when the step runs) the body is called
    once outside the loop, and the elements it writes there size the loop's (that call's ops
    stay in the graph and run once more when the step does)."""
    from .function_graph import FunctionGraph
    from .ops import zeros_like
    from .tensor_array_ops import TensorArray
    if all(ta._elements is not None for ta in _tensor_arrays(structure)):
        return structure
    single = not _is_nested(loop_vars)

    def call(values):
        result = body(values[0]) if single else body(*values)
        result = [result] if single or not _is_nested(result) else list(result)
        if not _same_structure(list(structure), result):
            raise ValueError("The two structures don't have the same nested structure.\n\n"
                             "First structure: %s\n\nSecond structure: %s"
                             % (list(structure), result))
        return _tensor_arrays(result)

    def leaves_of(s, leaf):
        if isinstance(s, dict):
            return type(s)((key, leaves_of(s[key], leaf)) for key in sorted(s))
        if isinstance(s, (list, tuple)):
            items = [leaves_of(item, leaf) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return s if isinstance(s, TensorArray) else leaf(s)

    outer = get_default_graph()
    counts = dict(outer.__dict__.get("_layer_name_counts", {}))
    scratch = FunctionGraph(outer, 0)
    index = [0]

    def as_arg(value):
        tensor = value if isinstance(value, Tensor) else convert_to_tensor(value)
        index[0] += 1
        return scratch.arg(index[0] - 1, tensor.dtype, tensor.shape, "loop_var_%d" % index[0])

    with scratch.as_default():
        traced = call(list(leaves_of(structure, as_arg)))
    outer._layer_name_counts = counts  # the layers the trace named are named again in the loop
    shapes = [made._element_shape for made in traced]
    sample = None
    if not all(ta._elements is not None or shape.is_fully_defined()
               for ta, shape in zip(_tensor_arrays(structure), shapes)):
        # What this call adds to the collections a body's ops join (a summary, an update op, a
        # loss) belongs to the loop, not to the call: they are put back as they were.
        kept = {name: list(outer.get_collection_ref(name)) for name in _SAMPLE_COLLECTIONS}
        sample = call(list(leaves_of(structure, lambda v: v)))
        for name, values in kept.items():
            outer.get_collection_ref(name)[:] = values
    written = iter(range(len(shapes)))

    def allocate(ta):
        i = next(written)
        if ta._elements is not None:
            return ta
        if shapes[i].is_fully_defined():
            allocated = ta._with(None, ta._size)
            allocated._element_shape = shapes[i]
            allocated._elements = allocated._zeros(shapes[i].as_list())
            return allocated
        made = sample[i]
        if made._elements is None:
            raise ValueError("while_loop: a TensorArray loop variable is never written by the "
                             "body and its element shape %s is not fully known (give "
                             "element_shape)" % ta._element_shape)
        allocated = ta._with(zeros_like(made._elements), ta._size)
        allocated._element_shape = made._element_shape
        allocated._shaped(allocated._elements)
        return allocated

    def rebuild(s):
        if isinstance(s, dict):
            return type(s)((key, rebuild(s[key])) for key in sorted(s))
        if isinstance(s, (list, tuple)):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return allocate(s) if isinstance(s, TensorArray) else s

    return rebuild(structure)


def _while_grad(native_op, native_grads):
    """The gradient of a While built by while_loop (called by tf.gradients through the
    extension): one gradient or None per input of the op."""
    from .gradients import _building_graph, gradients
    from .framework import Operation as _Operation
    from .ops import _t, add, constant, gather, less, zeros_like
    graph = _building_graph()
    op = _Operation(native_op, graph)
    loop = graph._while_loops.get(op.name)
    if loop is None:
        raise LookupError("No gradient defined for the loop %s: it was built with "
                          "back_prop=False, or not by tf.while_loop in this program" % op.name)
    n = loop.num_vars
    if loop.growing_read:
        raise ValueError("the gradient of %s: its body reads a TensorArray with dynamic_size=True "
                         "that it writes (loop variable %d), whose elements change shape from "
                         "one iteration to the next; troupe cannot record them for the "
                         "gradient: give the TensorArray a fixed size"
                         % (op.name, loop.growing_read[0]))
    if loop.nested_draws or loop.cond_draws:
        where = ("a function nested in its body (a loop's) makes the random op %s"
                 % loop.nested_draws) if loop.nested_draws else \
            "its condition makes the random op %s" % loop.cond_draws
        raise NotImplementedError(
            "the gradient of %s: %s; troupe replays the draws of a loop's own body for its "
            "gradient, not those of a loop nested in it or of its condition, which it would "
            "draw again" % (op.name, where))
    grads = [None if g is None else _t(g, graph) for g in native_grads]
    inputs = list(op.inputs)
    num_cond = len(loop.attrs["Tcond"])
    variables, body_captured = inputs[:n], inputs[n + num_cond:]
    floating = [j for j in range(n) if variables[j].dtype.is_floating]
    floating_captured = [c for c, t in enumerate(body_captured) if t.dtype.is_floating]
    result = [None] * len(inputs)
    if not floating:
        return [None if r is None else r._output for r in result]
    with name_scope(op.name + "_grad"):
        attrs = dict(loop.attrs, Tstacked=loop.attrs["T"], unstacked=loop.unstacked)
        if loop.draw_ops:
            records = _DrawReplay.records_of(loop)
            recorded = _replaying_forward(loop, op.name, records, attrs, variables,
                                          inputs[n:n + num_cond])
        else:
            recorded = _make("While", [variables, inputs[n:n + num_cond], body_captured],
                             attrs, name="forward")
        stacked = recorded.outputs[n:2 * n]
        iterations = recorded.outputs[2 * n]
        dvars = [grads[j] if grads[j] is not None else zeros_like(op.outputs[j])
                 for j in floating]
        dcaptured = [zeros_like(body_captured[c]) for c in floating_captured]
        # An unrecorded variable's value is not read by the body's gradient: zeros stand in.
        stand_ins = {j: zeros_like(op.outputs[j]) for j in loop.unstacked}

        def backward_cond(k, dv, dc):
            return less(constant(-1, dtype=k.dtype), k)

        def backward_body(k, dv, dc):
            here = get_default_graph()
            xs = [here._capture(stand_ins[j]) if j in stand_ins else gather(stacked[j], k)
                  for j in range(n)]
            from .variables import variable_scope
            if loop.draw_ops:
                here._replay = _DrawReplay(loop, op.name, records, k)
            with variable_scope(loop.variable_scope, reuse=True):
                ys = loop.flat_body(xs)
            if loop.draw_ops:
                here._replay.finish()
                here._replay = None
            ys = [_as_tensor_in(here, ys[j], "loop variable %d" % j) for j in floating]
            captured = [here._capture(loop.captures[c]) for c in floating_captured]
            partial = gradients(ys, [xs[j] for j in floating] + captured,
                                           grad_ys=list(dv))
            new_dv = [g if g is not None else zeros_like(xs[j])
                      for g, j in zip(partial[:len(floating)], floating)]
            new_dc = [d if g is None else _accumulate(d, g)
                      for d, g in zip(dc, partial[len(floating):])]
            return k - 1, [_dense(g) for g in new_dv], new_dc

        _, dvars, dcaptured = while_loop(backward_cond, backward_body,
                                         (iterations - 1, dvars, dcaptured),
                                         back_prop=False, name="backward")
    for j, d in zip(floating, dvars):
        result[j] = d
    for c, d in zip(floating_captured, dcaptured):
        result[n + num_cond + c] = d
    return [None if r is None else r._output for r in result]


def _replaying_forward(loop, loop_name, records, attrs, variables, cond_captured):
    """The loop run again for its gradient, recording its variables, with a body that takes
    each random draw from the first run's record instead of drawing again (the While gives
    the body its iteration's number: body_takes_iteration)."""
    from .function_graph import FunctionGraph
    from .variables import variable_scope
    n = loop.num_vars
    graph = FunctionGraph(get_default_graph(), n + 1)
    with graph.as_default():
        args = [graph.arg(i, t, s, "loop_var_%d" % i)
                for i, (t, s) in enumerate(zip(loop.types, loop.invariants))]
        iteration = graph.arg(n, _dtypes.int32, TensorShape([]), "iteration")
        graph._replay = _DrawReplay(loop, loop_name, records, iteration)
        with variable_scope(loop.variable_scope, reuse=True):
            results = loop.flat_body(args)
        graph._replay.finish()
        graph._replay = None
        for i, value in enumerate(results):
            graph.retval(_as_tensor_in(graph, value, "loop variable %d" % i), i)
    attrs = dict(attrs, body=graph.serialize(), Tdrawn=[], Ndrawn=0, drawn_from=[],
                 Tbody=[t.dtype.as_datatype_enum for t in graph._captures],
                 body_takes_iteration=True)
    return _make("While", [variables, cond_captured, list(graph._captures)], attrs,
                 name="forward")


def _accumulate(total, gradient):
    """total + gradient; rows of IndexedSlices (a gather of a captured tensor, as each step of
    dynamic_rnn reads its input) are added where they belong, not densified: O(rows), not
    O(the tensor), per iteration."""
    from .framework import IndexedSlices
    from .ops import add, reshape
    if isinstance(gradient, IndexedSlices):
        from .sparse_ops import tensor_scatter_add
        return tensor_scatter_add(total, reshape(gradient.indices, [-1, 1]), gradient.values)
    return add(total, gradient)


def _dense(gradient):
    from .framework import IndexedSlices
    return gradient._dense() if isinstance(gradient, IndexedSlices) else gradient


def _merge_grad(native_op, native_grads):
    """The gradient of a tf.cond's Merge: switched on the cond's predicate into the branches
    (the true branch's result is the Merge's input 0)."""
    from .framework import Operation as _Operation
    from .gradients import _building_graph
    from .ops import _t
    graph = _building_graph()
    op = _Operation(native_op, graph)
    pred = graph._cond_merges.get(op.name)
    if pred is None:
        raise LookupError("No gradient defined for the Merge %s: it was not built by tf.cond in "
                          "this program" % op.name)
    if native_grads[0] is None:
        return [None] * len(op.inputs)
    saved = graph._cond_context
    graph._cond_context = None
    try:
        false_side, true_side = _switch(_t(native_grads[0], graph), pred)
    finally:
        graph._cond_context = saved
    return [true_side._output, false_side._output]


_troupe.set_python_gradient("While", _while_grad)
_troupe.set_python_gradient("Merge", _merge_grad)
