"""tf.cond and tf.case, built as TensorFlow 1.x builds them from Switch and Merge
(graph/ops/control_flow_ops.hpp): the predicate switches a pivot into each branch, every op a
branch creates depends on its pivot, and Merge forwards the taken branch's results. Only the
taken branch's ops run (side effects included). Limits: the branches' ops and what uses their
results must run on one task (a dead value cannot cross devices yet), and there is no gradient
through a cond yet (tf.gradients raises naming the Merge)."""

from . import dtypes as _dtypes
from .framework import (Operation, Tensor, control_dependencies, convert_to_tensor,
                        get_default_graph, name_scope)
from .ops import _make, group, identity, no_op


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


def _branch(fn, pivot, what):
    graph = get_default_graph()
    with graph.control_dependencies([pivot.op]):
        result = fn()
        values, rebuild = _flatten(result)
        outputs = []
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
                    raise TypeError("cond: %s returned %r, which is not a Tensor" % (what, value))
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
        true_values, true_outputs, rebuild = _branch(true_fn, pivot_t, "true_fn")
        false_values, false_outputs, _ = _branch(false_fn, pivot_f, "false_fn")
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
            merged.append(result.op if isinstance(tv, Operation) else result)
        out = rebuild(merged)
        if not strict and isinstance(out, list) and len(out) == 1:
            return out[0]
        return out


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first pair whose predicate is true (else `default`, else the last
    pair's), as nested conds. exclusive=True (checking that at most one predicate holds) needs
    tf.Assert, which troupe does not have yet: it is ValueError."""
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
    if exclusive:
        raise ValueError("case(exclusive=True) is not supported by troupe yet (it needs "
                         "tf.Assert)")
    with name_scope(name, "case"):
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
