"""tf.nn: the neural-network ops troupe has kernels for."""

from . import _troupe
from . import dtypes as _dtypes
from .ops import _graph_of, _input, _scope, _t, sigmoid, tanh  # noqa: F401 - re-exported


def relu(features, name=None):
    g = _graph_of(features)
    return _t(_troupe.relu(_scope(g, name), _input(features, g, "relu features")), g)


def softmax(logits, axis=None, name=None):
    if axis not in (None, -1):
        raise ValueError("softmax: troupe computes softmax over the last axis only (axis=-1)")
    g = _graph_of(logits)
    return _t(_troupe.softmax(_scope(g, name), _input(logits, g, "softmax logits")), g)


def bias_add(value, bias, data_format=None, name=None):
    if data_format not in (None, "NHWC", "N...C"):
        raise ValueError("bias_add: troupe supports data_format NHWC only")
    g = _graph_of(value, bias)
    return _t(_troupe.bias_add(_scope(g, name), _input(value, g, "bias_add value"),
                               _input(bias, g, "bias_add bias")), g)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """The cross entropy of softmax(logits) against integer class labels, per example."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits: both labels and logits "
                         "are required")
    g = _graph_of(logits, labels)
    return _t(_troupe.sparse_softmax_cross_entropy_with_logits(
        _scope(g, name), _input(logits, g, "logits", _dtypes.float32),
        _input(labels, g, "labels", _dtypes.int64)), g)


def xw_plus_b(x, weights, biases, name=None):
    """tf.nn.xw_plus_b: matmul(x, weights) + biases."""
    from .framework import name_scope
    from .ops import matmul
    with name_scope(name or "xw_plus_b"):
        return bias_add(matmul(x, weights), biases)


def l2_loss(t, name=None):
    """tf.nn.l2_loss: sum(t ** 2) / 2."""
    from .framework import name_scope
    from .ops import multiply, reduce_sum, square
    with name_scope(name or "L2Loss"):
        return multiply(reduce_sum(square(t)), 0.5)


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1,
                                         name=None, axis=None):
    """The cross entropy of softmax(logits) against `labels` (a probability distribution per
    row), per example: -sum(labels * log_softmax(logits)), computed stably (the row's maximum
    subtracted first)."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits: labels and logits are required")
    if (axis if axis is not None else dim) not in (-1, None):
        raise ValueError("softmax_cross_entropy_with_logits: troupe supports the last axis only")
    from .framework import convert_to_tensor, name_scope
    from .ops import exp, log, multiply, reduce_max, reduce_sum, subtract
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    with name_scope(name or "softmax_cross_entropy_with_logits"):
        shifted = subtract(logits, reduce_max(logits, axis=-1, keepdims=True))
        log_softmax = subtract(shifted, log(reduce_sum(exp(shifted), axis=-1, keepdims=True)))
        return -reduce_sum(multiply(labels, log_softmax), axis=-1)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """As softmax_cross_entropy_with_logits_v2, but no gradient flows into labels (TensorFlow
    1.x's v1)."""
    if _sentinel is None and labels is not None and logits is not None:
        from .framework import convert_to_tensor
        from .ops import stop_gradient
        logits = convert_to_tensor(logits)
        labels = stop_gradient(convert_to_tensor(labels, dtype=logits.dtype))
    return softmax_cross_entropy_with_logits_v2(_sentinel, labels, logits, dim, name, axis)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per element, the cross entropy of sigmoid(logits) against labels (probabilities):
    max(x, 0) - x * z + log(1 + exp(-|x|)), which neither overflows nor loses digits."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits: both labels and logits are "
                         "required")
    from .framework import convert_to_tensor, name_scope
    from .ops import abs as _abs, exp, log1p, multiply, negative, subtract
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    if logits.shape.is_compatible_with(labels.shape) is False:
        raise ValueError("logits and labels must have the same shape (%s vs %s)"
                         % (logits.shape, labels.shape))
    with name_scope(name or "logistic_loss"):
        return log1p(exp(negative(_abs(logits)))) + subtract(relu(logits),
                                                              multiply(logits, labels))
