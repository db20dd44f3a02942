"""tf.gradients: symbolic derivatives, added to the graph (graph/gradients.hpp)."""

import threading

from . import _troupe
from .framework import Tensor, _wrap_gradient

# The graphs gradients() is building in, innermost last: gradient functions written in Python
# (tf.while_loop's) wrap the extension's ops in the graph on top, or, for gradients an optimizer
# asks the extension for, in the default graph.
_building = threading.local()


def _building_graph():
    from .framework import get_default_graph
    graphs = getattr(_building, "graphs", None)
    return graphs[-1] if graphs else get_default_graph()


def _tensors(values, what, allow_none=False):
    if values is None:
        return [], True
    single = not isinstance(values, (list, tuple))
    values = [values] if single else list(values)
    out = []
    for v in values:
        if v is None and allow_none:
            out.append(None)
            continue
        if hasattr(v, "_as_graph_element"):
            v = v._as_graph_element()
        if not isinstance(v, Tensor):
            raise TypeError("gradients: %s must be Tensors or Variables, got %r" % (what, v))
        out.append(v)
    return out, single


def _grad_y(value, y):
    """grad_ys' entry for y: a Tensor, else `value` converted to y's dtype (ones if None)."""
    from .framework import convert_to_tensor
    from .ops import ones_like
    if hasattr(value, "_as_graph_element"):
        value = value._as_graph_element()
    if isinstance(value, Tensor):
        return value
    with y.graph.as_default():
        if value is None:
            return ones_like(y)
        try:
            return convert_to_tensor(value, dtype=y.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError("gradients: grad_ys for %s must be a Tensor or a value of its dtype "
                            "%s: %s" % (y.name, y.dtype.name, e)) from None


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None):
    """d(sum(ys))/d(x) for each x (None where ys do not depend on x), weighted by grad_ys
    (tensors or values of ys' shapes; None entries stand for ones, as TensorFlow's). The
    tensors of stop_gradients are constants for it: no gradient flows through them."""
    ys, _ = _tensors(ys, "ys")
    xs, _ = _tensors(xs, "xs")
    if grad_ys is not None:
        grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
        if len(grad_ys) != len(ys):
            raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
        grad_ys = [_grad_y(d, y) for d, y in zip(grad_ys, ys)]
    else:
        grad_ys = []
    stops = _tensors(stop_gradients, "stop_gradients")[0] if stop_gradients is not None \
        else []
    if not ys:
        raise ValueError("gradients: ys is empty")
    g = ys[0].graph
    g._check_not_finalized()
    for t in ys + xs + grad_ys + stops:
        if t.graph is not g:
            raise ValueError("gradients: %s is from another graph than %s" % (t.name, ys[0].name))
    scope = g._scope
    if not hasattr(_building, "graphs"):
        _building.graphs = []
    _building.graphs.append(g)
    try:
        result = _troupe.gradients(scope, [y._output for y in ys], [x._output for x in xs],
                                   [d._output for d in grad_ys], [s._output for s in stops])
    finally:
        _building.graphs.pop()
    return [_wrap_gradient(r, g) for r in result]
