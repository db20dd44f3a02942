"""tf.losses: TensorFlow 1.x's loss functions, their weights and reductions, and the LOSSES
collection. Each loss computes per-element losses from ops, weights them (a scalar, or a tensor
broadcastable to the losses), reduces them as `reduction` says (by default the sum divided by the
number of non-zero weights), adds the result to `loss_collection` and returns it."""

from . import dtypes as _dtypes
from .framework import GraphKeys, Tensor, convert_to_tensor, get_default_graph, name_scope
from . import nn as _nn
from . import ops as _ops


class Reduction(object):
    """How compute_weighted_loss reduces weighted losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % key)


def _float(x, what):
    if x is None:
        raise ValueError("%s must not be None." % what)
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if x.dtype not in (_dtypes.float32, _dtypes.float64):
        x = _ops.cast(x, _dtypes.float32)
    return x


def _check_shapes(labels, predictions):
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError("Shapes %s and %s are incompatible" % (predictions.shape, labels.shape))


def _safe_div(numerator, denominator):
    """numerator / denominator, and 0 where the denominator is 0 (TensorFlow's div_no_nan)."""
    zero = _ops.zeros_like(denominator)
    nonzero = _ops.not_equal(denominator, zero)
    safe = _ops.where(nonzero, denominator, _ops.ones_like(denominator))
    return _ops.where(nonzero, _ops.divide(numerator, safe), zero)


def _num_present(losses, weights):
    """How many losses have a non-zero weight (weights broadcast to the losses' shape)."""
    present = _ops.cast(_ops.not_equal(weights, _ops.zeros_like(weights)), losses.dtype)
    return _ops.reduce_sum(_ops.multiply(present, _ops.ones_like(losses)))


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """losses * weights, reduced as `reduction` says; added to `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope or "weighted_loss"):
        losses = _float(losses, "losses")
        weights = _ops.cast(_float(weights, "weights"), losses.dtype)
        if (losses.shape.ndims is not None and weights.shape.ndims is not None and
                weights.shape.ndims > losses.shape.ndims):
            raise ValueError("weights can not be broadcast to values. values.rank=%d. "
                             "weights.rank=%d." % (losses.shape.ndims, weights.shape.ndims))
        weighted = _ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = _ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(loss, _ops.reduce_sum(
                    _ops.multiply(_ops.ones_like(losses), weights)))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, _ops.cast(_ops.size(losses), losses.dtype))
        add_loss(loss, loss_collection)
        return loss


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "absolute_difference"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        losses = _ops.abs(_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "mean_squared_error"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        losses = _ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """For each example, the mean over pairs (i, j) of its elements of
    ((pred_i - pred_j) - (label_i - label_j))^2, weighted per example and summed (TensorFlow
    1.15's formula: 2 * sum(d^2) / (n - 1) - 2 * sum(d)^2 / (n (n - 1)) for the n present
    elements); 0 when nothing is present."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "mean_pairwise_squared_error"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        weights = _ops.cast(_float(weights, "weights"), predictions.dtype)
        diffs = _ops.subtract(predictions, labels)
        rank = diffs.shape.ndims
        if rank is None or rank < 2:
            raise ValueError("mean_pairwise_squared_error: predictions must be [batch, ...] of "
                             "known rank >= 2, got shape %s" % (diffs.shape,))
        axis = list(range(1, rank))
        if weights.shape.ndims == 1:  # one weight per example
            weights = _ops.reshape(weights, [-1] + [1] * (rank - 1))
        present = _ops.cast(_ops.not_equal(weights, _ops.zeros_like(weights)), diffs.dtype)
        num_present = _ops.reduce_sum(_ops.multiply(present, _ops.ones_like(diffs)), axis,
                                      keepdims=True)
        sum_squares = _ops.reduce_sum(_ops.square(diffs), axis, keepdims=True)
        term1 = 2.0 * _safe_div(sum_squares, _ops.maximum(num_present - 1.0, 0.0))
        sum_diff = _ops.reduce_sum(diffs, axis, keepdims=True)
        term2 = 2.0 * _safe_div(_ops.square(sum_diff),
                                _ops.maximum(num_present * (num_present - 1.0), 0.0))
        loss = _ops.reduce_sum(_ops.multiply(term1 - term2, weights))
        mean_loss = _ops.where(_ops.greater(_ops.reduce_sum(num_present), 0.0), loss,
                               _ops.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 * error^2 where |error| <= delta, else delta * (|error| - 0.5 * delta)."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "huber_loss"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        error = _ops.abs(_ops.subtract(predictions, labels))
        quadratic = _ops.minimum(error, delta)
        linear = _ops.subtract(error, quadratic)
        losses = _ops.add(_ops.multiply(_ops.square(quadratic), 0.5),
                          _ops.multiply(linear, float(delta)))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "log_loss"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        losses = _ops.subtract(
            _ops.negative(_ops.multiply(labels, _ops.log(predictions + epsilon))),
            _ops.multiply(1.0 - labels, _ops.log(1.0 - predictions + epsilon)))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2 * labels - 1) * logits), labels being 0 or 1."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with name_scope(scope or "hinge_loss"):
        logits = _float(logits, "logits")
        labels = _ops.cast(_float(labels, "labels"), logits.dtype)
        _check_shapes(labels, logits)
        signs = _ops.subtract(_ops.multiply(labels, 2.0), 1.0)
        losses = _nn.relu(_ops.subtract(1.0, _ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions) along `axis` (both unit-normalized by the caller)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError("predictions must not be None.")
    with name_scope(scope or "cosine_distance_loss"):
        predictions = _float(predictions, "predictions")
        labels = _float(labels, "labels")
        _check_shapes(labels, predictions)
        losses = _ops.subtract(1.0, _ops.reduce_sum(_ops.multiply(predictions, labels),
                                                    axis=axis, keepdims=True))
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Sigmoid cross entropy; label_smoothing moves labels toward 1/2:
    labels * (1 - s) + 0.5 * s."""
    if multi_class_labels is None:
        raise ValueError("multi_class_labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with name_scope(scope or "sigmoid_cross_entropy_loss"):
        logits = _float(logits, "logits")
        labels = _ops.cast(_float(multi_class_labels, "multi_class_labels"), logits.dtype)
        _check_shapes(labels, logits)
        if label_smoothing > 0:
            labels = _ops.add(_ops.multiply(labels, 1.0 - label_smoothing),
                              0.5 * label_smoothing)
        losses = _nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                        name="xentropy")
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross entropy of [batch, classes] logits against one-hot (or probability)
    labels; label_smoothing: labels * (1 - s) + s / classes. No gradient flows into labels."""
    if onehot_labels is None:
        raise ValueError("onehot_labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with name_scope(scope or "softmax_cross_entropy_loss"):
        logits = _float(logits, "logits")
        labels = _ops.cast(_float(onehot_labels, "onehot_labels"), logits.dtype)
        _check_shapes(labels, logits)
        if label_smoothing > 0:
            classes = _ops.reduce_sum(_ops.ones_like(labels), axis=-1, keepdims=True)
            labels = _ops.add(_ops.multiply(labels, 1.0 - label_smoothing),
                              _ops.divide(float(label_smoothing), classes))
        losses = _nn.softmax_cross_entropy_with_logits_v2(
            labels=_ops.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross entropy of logits against integer class labels (int32 or int64)."""
    if labels is None:
        raise ValueError("labels must not be None.")
    if logits is None:
        raise ValueError("logits must not be None.")
    with name_scope(scope or "sparse_softmax_cross_entropy_loss"):
        labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels,
                                                                           dtype=_dtypes.int64)
        if labels.dtype == _dtypes.int32:
            labels = _ops.cast(labels, _dtypes.int64)
        losses = _nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                               name="xentropy")
        return compute_weighted_loss(losses, weights, None, loss_collection, reduction)


# --- the LOSSES collection ---

def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds `loss` to `loss_collection` (nothing when that is None)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return _ops.add_n(losses, name=name)
    return _ops.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES collection (and the regularization losses); ValueError when there
    are none."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found in collection.")
    return _ops.add_n(losses, name=name)
