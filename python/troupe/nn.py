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
