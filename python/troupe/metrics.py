"""tf.metrics: streaming metrics as TensorFlow 1.x computes them — each returns (value,
update_op); the running totals are local variables (LOCAL_VARIABLES and METRIC_VARIABLES,
initialised by tf.local_variables_initializer() or a monitored session's local init), so each
task keeps its own. update_op adds a batch and returns the new value; value reads the current
one. mean, accuracy, mean_absolute_error/mean_squared_error/root_mean_squared_error,
true_positives/false_positives/true_negatives/false_negatives, precision, recall, auc, mean_iou,
mean_per_class_accuracy, mean_cosine_distance, percentage_below, mean_relative_error,
mean_tensor, the confusion counts, precision and recall at thresholds, sensitivity_at_specificity,
specificity_at_sensitivity and the top-k metrics (precision_at_k, recall_at_k,
average_precision_at_k and their forms) are here."""

import numpy as np

from . import dtypes as _dtypes
from .framework import GraphKeys, Tensor, convert_to_tensor, name_scope


def _local_total(name, dtype):
    from .variables import Variable
    return Variable(np.zeros([], dtype.as_numpy_dtype), trainable=False, name=name,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _as_float(value, what):
    t = value if isinstance(value, Tensor) else convert_to_tensor(value)
    from .ops import cast
    return t if t.dtype == _dtypes.float32 else cast(t, _dtypes.float32)


def _collect(collections, value):
    if collections:
        from .framework import get_default_graph
        for key in collections:
            get_default_graph().add_to_collection(key, value)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every value seen: (total / count, update_op)."""
    from .ops import (assign_add, divide, group, identity, maximum, multiply, ones_like,
                      reduce_sum, where)
    with name_scope(name, "mean"):
        values = _as_float(values, "values")
        weights = ones_like(values) if weights is None else \
            multiply(ones_like(values), _as_float(weights, "weights"))
        total = _local_total("total", _dtypes.float32)
        count = _local_total("count", _dtypes.float32)
        add_total = assign_add(total, reduce_sum(multiply(values, weights)))
        add_count = assign_add(count, reduce_sum(weights))

        def safe_div(numerator, denominator, op_name):
            positive = denominator > 0.0
            return where(positive, divide(numerator, maximum(denominator, 1e-30)),
                         0.0 * numerator, name=op_name)
        value = safe_div(identity(total), identity(count), "value")
        from .framework import get_default_graph
        with get_default_graph().control_dependencies([group(add_total, add_count)]):
            update_op = safe_div(identity(total), identity(count), "update_op")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The fraction of predictions equal to their labels, over everything seen."""
    from .ops import cast, equal
    with name_scope(name, "accuracy"):
        labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
        predictions = predictions if isinstance(predictions, Tensor) else \
            convert_to_tensor(predictions)
        if labels.dtype != predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        labels, predictions = _remove_squeezable_dimensions(labels, predictions)
        right = cast(equal(predictions, labels), _dtypes.float32)
        return mean(right, weights, metrics_collections, updates_collections, name="mean")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    from .ops import abs as abs_, subtract
    with name_scope(name, "mean_absolute_error"):
        errors = abs_(subtract(_as_float(predictions, "predictions"),
                               _as_float(labels, "labels")))
        return mean(errors, weights, metrics_collections, updates_collections, name="mean")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    from .ops import squared_difference
    with name_scope(name, "mean_squared_error"):
        errors = squared_difference(_as_float(predictions, "predictions"),
                                    _as_float(labels, "labels"))
        return mean(errors, weights, metrics_collections, updates_collections, name="mean")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    from .ops import sqrt
    with name_scope(name, "root_mean_squared_error"):
        value, update_op = mean_squared_error(labels, predictions, weights, name="mse")
        rmse, update_rmse = sqrt(value), sqrt(update_op)
        _collect(metrics_collections, rmse)
        _collect(updates_collections, update_rmse)
        return rmse, update_rmse


# ---- counts of a binary classification, and the metrics made of them ----

def _bools(value, what):
    from .ops import cast, not_equal
    t = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if t.dtype == _dtypes.bool:
        return t
    return not_equal(t, cast(0, t.dtype)) if t.dtype != _dtypes.string else \
        cast(t, _dtypes.bool)


def _remove_squeezable_dimensions(labels, predictions):
    """As TensorFlow's: where one side has one dimension more than the other and it is of
    size 1 (labels [batch, 1] against predictions [batch]), that dimension is dropped."""
    from .array_ops import squeeze
    rank_labels, rank_predictions = labels.shape.ndims, predictions.shape.ndims
    if rank_labels is not None and rank_predictions is not None:
        if rank_labels == rank_predictions + 1 and labels.shape.as_list()[-1] in (1, None):
            labels = squeeze(labels, [-1])
        elif rank_predictions == rank_labels + 1 and \
                predictions.shape.as_list()[-1] in (1, None):
            predictions = squeeze(predictions, [-1])
    return labels, predictions


def _check_broadcastable(weights, values):
    """TensorFlow's assert_broadcastable, on static shapes: weights a scalar, or of values'
    rank with each dimension 1 or values'. ValueError with TensorFlow's message otherwise."""
    weights_shape, values_shape = weights.shape, values.shape
    if weights_shape.ndims in (None, 0) or values_shape.ndims is None:
        return
    message = ("weights can not be broadcast to values. values.rank=%s. weights.rank=%s. "
               "values.shape=%s. weights.shape=%s." % (values_shape.ndims, weights_shape.ndims,
                                                        values_shape, weights_shape))
    if weights_shape.ndims != values_shape.ndims:
        raise ValueError(message)
    for w, v in zip(weights_shape.as_list(), values_shape.as_list()):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(message)


def _weights_like(weights, values, squeeze=True):
    """weights (float32) broadcast to values' shape as TensorFlow's metrics broadcast them:
    where the ranks differ by one, a last dimension is dropped or added first
    (_remove_squeezable_dimensions; not with squeeze=False), then broadcast_weights."""
    from .array_ops import expand_dims
    from .array_ops import squeeze as squeeze_op
    from .ops import multiply, ones_like
    w = _as_float(weights, "weights")
    rank, values_rank = w.shape.ndims, values.shape.ndims
    if squeeze and rank not in (None, 0) and values_rank is not None:
        if rank - values_rank == 1:
            w = squeeze_op(w, [-1])
        elif values_rank - rank == 1:
            w = expand_dims(w, -1)
    _check_broadcastable(w, values)
    return multiply(w, ones_like(_as_float(values, "values")))


def _weighted_sum(condition, weights):
    """The sum of the weights (1 each if None) of the entries where condition holds."""
    from .ops import cast, multiply, reduce_sum
    counted = cast(condition, _dtypes.float32)
    if weights is not None:
        counted = multiply(counted, _weights_like(weights, counted))
    return reduce_sum(counted)


def _count(kind, labels, predictions, weights, metrics_collections, updates_collections,
           name):
    from .math_ops import logical_and
    from .ops import assign_add, identity, logical_not
    with name_scope(name, kind):
        labels, predictions = _remove_squeezable_dimensions(
            _bools(labels, "labels"), _bools(predictions, "predictions"))
        if labels.shape.is_fully_defined() and predictions.shape.is_fully_defined() and \
                labels.shape.as_list() != predictions.shape.as_list():
            raise ValueError("Shapes %s and %s are incompatible" % (labels.shape,
                                                                      predictions.shape))
        want_label = kind in ("true_positives", "false_negatives")
        want_prediction = kind in ("true_positives", "false_positives")
        condition = logical_and(labels if want_label else logical_not(labels),
                                predictions if want_prediction else logical_not(predictions))
        count = _local_total("count", _dtypes.float32)
        update_op = assign_add(count, _weighted_sum(condition, weights))
        value = identity(count)
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def true_positives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    """The (weighted) number of predictions true where the labels are."""
    return _count("true_positives", labels, predictions, weights, metrics_collections,
                  updates_collections, name)


def false_positives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    return _count("false_positives", labels, predictions, weights, metrics_collections,
                  updates_collections, name)


def true_negatives(labels, predictions, weights=None, metrics_collections=None,
                   updates_collections=None, name=None):
    return _count("true_negatives", labels, predictions, weights, metrics_collections,
                  updates_collections, name)


def false_negatives(labels, predictions, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    return _count("false_negatives", labels, predictions, weights, metrics_collections,
                  updates_collections, name)


def _ratio(numerator, denominator, name):
    """numerator / denominator, 0 where the denominator is not positive (TensorFlow's)."""
    from .ops import divide, maximum, where
    return where(denominator > 0.0, divide(numerator, maximum(denominator, 1e-30)),
                 0.0 * numerator, name=name)


def _pair(first, second, kind, labels, predictions, weights, metrics_collections,
          updates_collections, name):
    with name_scope(name, kind):
        a, update_a = first(labels, predictions, weights)
        b, update_b = second(labels, predictions, weights)
        value = _ratio(a, a + b, "value")
        update_op = _ratio(update_a, update_a + update_b, "update_op")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """true_positives / (true_positives + false_positives) over everything seen (0 before
    any positive prediction)."""
    return _pair(true_positives, false_positives, "precision", labels, predictions, weights,
                 metrics_collections, updates_collections, name)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """true_positives / (true_positives + false_negatives) over everything seen."""
    return _pair(true_positives, false_negatives, "recall", labels, predictions, weights,
                 metrics_collections, updates_collections, name)


_CONFUSION_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                   "fp": "false_positives"}


def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None,
                                    includes=("tp", "fn", "tn", "fp")):
    """TensorFlow's: for each threshold, the (weighted) counts of predictions above it (positive)
    or not, against the labels, summed over every batch in local variables of
    [len(thresholds)]. Returns ({key: variable}, {key: update op}) for the keys of `includes`.
    predictions must be in [0, 1] (a run with one outside fails the update)."""
    from .check_ops import assert_greater_equal, assert_less_equal
    from .framework import get_default_graph
    from .math_ops import logical_and
    from .ops import (assign_add, cast, constant, logical_not, multiply, ones_like, reduce_sum,
                      reshape)
    for key in includes:
        if key not in _CONFUSION_NAMES:
            raise ValueError("Invalid key: %s." % key)
    predictions = _as_float(predictions, "predictions")
    labels = _bools(labels, "labels")
    checks = [assert_greater_equal(predictions, 0.0, message="predictions must be in [0, 1]"),
              assert_less_equal(predictions, 1.0, message="predictions must be in [0, 1]")]
    with get_default_graph().control_dependencies(checks):
        flat_predictions = reshape(predictions, [1, -1])
    flat_labels = reshape(labels, [1, -1])
    above = flat_predictions > reshape(constant([float(t) for t in thresholds],
                                                dtype=_dtypes.float32), [-1, 1])
    weights_row = (reshape(_weights_like(weights, predictions), [1, -1])
                   if weights is not None else None)

    def counts(condition):
        c = cast(condition, _dtypes.float32)
        if weights_row is not None:
            c = multiply(c, weights_row)
        return reduce_sum(c, axis=1)

    conditions = {"tp": lambda: logical_and(above, flat_labels),
                  "fn": lambda: logical_and(logical_not(above), flat_labels),
                  "tn": lambda: logical_and(logical_not(above), logical_not(flat_labels)),
                  "fp": lambda: logical_and(above, logical_not(flat_labels))}
    values, update_ops = {}, {}
    for key in includes:
        values[key] = _metric_variable([len(thresholds)], _dtypes.float32, _CONFUSION_NAMES[key])
        update_ops[key] = assign_add(values[key], counts(conditions[key]()))
    return values, update_ops


def _even_thresholds(num_thresholds, last_epsilon=1e-7):
    """num_thresholds thresholds evenly over [0, 1], the first just below 0 and the last just
    above 1 (below, for specificity_at_sensitivity: TensorFlow's)."""
    if isinstance(num_thresholds, bool) or not isinstance(num_thresholds, int) or \
            num_thresholds < 2:
        raise ValueError("num_thresholds must be > 1.")
    kepsilon = 1e-7
    return ([0.0 - kepsilon] + [(i + 1) * 1.0 / (num_thresholds - 1)
                                for i in range(num_thresholds - 2)] + [1.0 + last_epsilon])


def _check_thresholds(thresholds, what):
    if not isinstance(thresholds, (list, tuple)) or not thresholds or not all(
            isinstance(t, (int, float, np.floating, np.integer)) and not isinstance(t, bool)
            for t in thresholds):
        raise ValueError("%s: thresholds must be a non-empty list of numbers, got %r"
                         % (what, thresholds))


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal"):
    """The area under the ROC or PR curve, approximated as TensorFlow 1.x does: the
    confusion counts at num_thresholds thresholds evenly spaced over [0, 1] (the first just
    below 0, the last just above 1), summed over every batch seen, and the curve's area by
    the trapezoidal rule (or "minoring"/"majoring": the lower or upper rectangles).
    predictions must be in [0, 1]."""
    from .framework import get_default_graph
    from .ops import group, identity, maximum, minimum, multiply, reduce_sum
    if curve not in ("ROC", "PR"):
        raise ValueError("curve must be either ROC or PR, %s unknown" % (curve,))
    if summation_method == "careful_interpolation" and curve == "ROC":
        summation_method = "trapezoidal"  # TensorFlow's: the same rule for ROC
    if summation_method not in ("trapezoidal", "minoring", "majoring"):
        raise ValueError("Invalid summation_method: %s (troupe computes trapezoidal, minoring "
                         "and majoring, and careful_interpolation for ROC, where it is "
                         "trapezoidal; not careful_interpolation of a PR curve)"
                         % (summation_method,))
    thresholds = _even_thresholds(num_thresholds)
    with name_scope(name, "auc"):
        totals, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                          weights)

        def area(tp, fn, tn, fp, op_name):
            epsilon = 1.0e-6
            if curve == "ROC":
                x = fp / (fp + tn + epsilon)  # false positive rate
                y = (tp + epsilon) / (tp + fn + epsilon)  # recall
            else:
                x = (tp + epsilon) / (tp + fn + epsilon)  # recall
                y = (tp + epsilon) / (tp + fp + epsilon)  # precision
            x_left, x_right = x[:num_thresholds - 1], x[1:]
            y_left, y_right = y[:num_thresholds - 1], y[1:]
            if summation_method == "trapezoidal":
                heights = (y_left + y_right) / 2.0
            elif summation_method == "minoring":
                heights = minimum(y_left, y_right)
            else:
                heights = maximum(y_left, y_right)
            return reduce_sum(multiply(x_left - x_right, heights), name=op_name)

        value = area(*(identity(totals[k]) for k in ("tp", "fn", "tn", "fp")), "value")
        with get_default_graph().control_dependencies([group(*updates.values())]):
            update_op = area(*(identity(totals[k]) for k in ("tp", "fn", "tn", "fp")),
                             "update_op")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def _value_and_update(compute, values, update_ops, metrics_collections, updates_collections):
    """A metric computed by compute(counts, op_name) from the running totals (its value) and
    from their update ops (its update_op), each put in the collections asked for."""
    value = compute(values, "value")
    update_op = compute(update_ops, "update_op")
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def _count_at_thresholds(key, scope, labels, predictions, thresholds, weights,
                         metrics_collections, updates_collections, name):
    from .ops import identity
    _check_thresholds(thresholds, scope + "_at_thresholds")
    with name_scope(name, scope):
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                             weights, includes=(key,))
        value = identity(values[key])
        _collect(metrics_collections, value)
        _collect(updates_collections, update_ops[key])
        return value, update_ops[key]


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    """For each threshold, the (weighted) count of predictions above it whose label is
    true."""
    return _count_at_thresholds("tp", "true_positives", labels, predictions, thresholds,
                                weights, metrics_collections, updates_collections, name)


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    return _count_at_thresholds("fp", "false_positives", labels, predictions, thresholds,
                                weights, metrics_collections, updates_collections, name)


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                 metrics_collections=None, updates_collections=None, name=None):
    return _count_at_thresholds("tn", "true_negatives", labels, predictions, thresholds,
                                weights, metrics_collections, updates_collections, name)


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None,
                                  metrics_collections=None, updates_collections=None, name=None):
    return _count_at_thresholds("fn", "false_negatives", labels, predictions, thresholds,
                                weights, metrics_collections, updates_collections, name)


def _rate_at_thresholds(kind, other, labels, predictions, thresholds, weights,
                        metrics_collections, updates_collections, name):
    """tp / (epsilon + tp + other) per threshold (TensorFlow's precision_ and
    recall_at_thresholds)."""
    from .ops import divide
    _check_thresholds(thresholds, kind)
    epsilon = 1e-7
    with name_scope(name, kind):
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                             weights, includes=("tp", other))
        short = kind.split("_")[0]

        def rate(counts, op_name):
            return divide(counts["tp"], epsilon + counts["tp"] + counts[other],
                          name="%s_%s" % (short, op_name))

        return _value_and_update(rate, values, update_ops, metrics_collections,
                                 updates_collections)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """For each threshold, the precision of "prediction above it": tp / (tp + fp)."""
    return _rate_at_thresholds("precision_at_thresholds", "fp", labels, predictions, thresholds,
                               weights, metrics_collections, updates_collections, name)


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """For each threshold, the recall of "prediction above it": tp / (tp + fn)."""
    return _rate_at_thresholds("recall_at_thresholds", "fn", labels, predictions, thresholds,
                               weights, metrics_collections, updates_collections, name)


def _check_rate(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or value < 0 or value > 1:
        raise ValueError("`%s` must be in the range [0, 1]." % what)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The sensitivity (recall) at the threshold whose specificity is nearest `specificity`
    (the first of equals), over num_thresholds thresholds as auc's."""
    from .math_ops import argmin
    from .ops import abs as abs_, cast, divide, gather
    _check_rate(specificity, "specificity")
    thresholds = _even_thresholds(num_thresholds)
    kepsilon = 1e-7
    with name_scope(name, "sensitivity_at_specificity"):
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                             weights)

        def compute(counts, op_name):
            specificities = divide(counts["tn"], counts["tn"] + counts["fp"] + kepsilon)
            index = cast(argmin(abs_(specificities - specificity), 0), _dtypes.int32)
            tp_at, fn_at = gather(counts["tp"], index), gather(counts["fn"], index)
            return divide(tp_at, tp_at + fn_at + kepsilon, name=op_name)

        return _value_and_update(compute, values, update_ops, metrics_collections,
                                 updates_collections)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is nearest `sensitivity` (the last
    of equals), over TensorFlow's thresholds for it (the last just below 1)."""
    from .math_ops import cumsum
    from .ops import abs as abs_, argmax, cast, divide, equal, gather, reduce_min
    _check_rate(sensitivity, "sensitivity")
    kepsilon = 1e-7
    thresholds = _even_thresholds(num_thresholds, last_epsilon=-kepsilon)
    with name_scope(name, "specificity_at_sensitivity"):
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds,
                                                             weights)

        def compute(counts, op_name):
            distance = abs_(divide(counts["tp"], counts["tp"] + counts["fn"] + kepsilon) -
                            sensitivity)
            at_min = cumsum(cast(equal(distance, reduce_min(distance)), _dtypes.int64))
            index = cast(argmax(at_min, 0), _dtypes.int32)
            tn_at, fp_at = gather(counts["tn"], index), gather(counts["fp"], index)
            return divide(tn_at, tn_at + fp_at + kepsilon, name=op_name)

        return _value_and_update(compute, values, update_ops, metrics_collections,
                                 updates_collections)


def _metric_variable(shape, dtype, name):
    from .variables import Variable
    return Variable(np.zeros(shape, dtype.as_numpy_dtype), trainable=False, name=name,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _safe_div(numerator, denominator, name):
    """numerator / denominator where denominator > 0, else 0 (TensorFlow's _safe_div)."""
    from .ops import divide, maximum, where, zeros_like
    return where(denominator > 0, divide(numerator, maximum(denominator, 1e-30)),
                 zeros_like(numerator), name=name)


def _num_classes(num_classes, what):
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or \
            num_classes < 1:
        raise ValueError("%s: num_classes must be an int >= 1, got %r" % (what, num_classes))
    return int(num_classes)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The mean over classes of intersection over union, tp / (tp + fp + fn), from a
    confusion matrix accumulated over every batch (a float64 local variable
    total_confusion_matrix); classes never seen nor predicted are left out of the mean.
    update_op adds the batch and returns the confusion matrix, as TensorFlow's."""
    from .array_ops import diag_part
    from .math_ops import confusion_matrix
    from .ops import (assign_add, cast, greater, identity, not_equal, ones_like, reduce_sum,
                      reshape, where)
    num_classes = _num_classes(num_classes, "mean_iou")
    with name_scope(name, "mean_iou"):
        predictions = reshape(convert_to_tensor(predictions), [-1])
        labels = reshape(convert_to_tensor(labels), [-1])
        if weights is not None:
            weights = reshape(_as_float(weights, "weights"), [-1])
        total_cm = _metric_variable([num_classes, num_classes], _dtypes.float64,
                                    "total_confusion_matrix")
        current = confusion_matrix(labels, predictions, num_classes, weights=weights,
                                   dtype=_dtypes.float64)
        update_op = assign_add(total_cm, current)

        def compute(cm, op_name):
            cm = cast(cm, _dtypes.float32)
            sum_over_row = reduce_sum(cm, 0)
            sum_over_col = reduce_sum(cm, 1)
            diagonal = diag_part(cm)
            denominator = sum_over_row + sum_over_col - diagonal
            valid = reduce_sum(cast(not_equal(denominator, 0.0), _dtypes.float32))
            denominator = where(greater(denominator, 0.0), denominator, ones_like(denominator))
            iou = diagonal / denominator
            return where(greater(valid, 0.0), reduce_sum(iou) / valid, 0.0, name=op_name)

        value = compute(identity(total_cm), "mean_iou")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """The mean over classes of each class's accuracy (the weight of its examples predicted
    right over the weight of its examples); update_op adds the batch and returns the
    per-class accuracies, as TensorFlow's."""
    from .ops import cast, equal, ones_like, reduce_mean, reshape
    from .sparse_ops import scatter_add
    num_classes = _num_classes(num_classes, "mean_per_class_accuracy")
    with name_scope(name, "mean_accuracy"):
        labels = reshape(cast(convert_to_tensor(labels), _dtypes.int64), [-1])
        predictions = reshape(cast(convert_to_tensor(predictions), _dtypes.int64), [-1])
        total = _metric_variable([num_classes], _dtypes.float32, "total")
        count = _metric_variable([num_classes], _dtypes.float32, "count")
        ones = ones_like(labels, dtype=_dtypes.float32)
        is_correct = cast(equal(predictions, labels), _dtypes.float32)
        if weights is not None:
            weights = reshape(_as_float(weights, "weights"), [-1])
            ones = ones * weights
            is_correct = is_correct * weights
        update_total = scatter_add(total, labels, ones)
        update_count = scatter_add(count, labels, is_correct)
        from .ops import identity
        value = reduce_mean(_safe_div(identity(count), identity(total), "per_class"),
                            name="mean_accuracy")
        update_op = _safe_div(update_count, update_total, "update_op")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """1 - the mean of sum(labels * predictions) along `dim` (both unit-normalised, as
    TensorFlow expects them)."""
    from .ops import multiply, reduce_sum, subtract
    labels, predictions = _as_float(labels, "labels"), _as_float(predictions, "predictions")
    radial = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    value, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    value, update_op = subtract(1.0, value), subtract(1.0, update_op)
    _collect(metrics_collections, value)
    _collect(updates_collections, update_op)
    return value, update_op


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """The (weighted) fraction of values below `threshold`."""
    from .ops import cast, less
    below = cast(less(_as_float(values, "values"), threshold), _dtypes.float32)
    return mean(below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The mean of |labels - predictions| / normalizer (0 where normalizer is 0)."""
    from .ops import abs as abs_, divide, equal, where, zeros_like
    labels, predictions = _as_float(labels, "labels"), _as_float(predictions, "predictions")
    normalizer = _as_float(normalizer, "normalizer")
    relative = where(equal(normalizer, 0.0), zeros_like(labels),
                     divide(abs_(labels - predictions), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """The element-wise (weighted) mean of every tensor seen: (total / count, update_op), of
    values' shape, which must be fully known."""
    from .ops import assign_add, identity, multiply, ones_like
    with name_scope(name, "mean"):
        values = _as_float(values, "values")
        if not values.shape.is_fully_defined():
            raise ValueError("mean_tensor: values must have a fully known shape, got %s"
                             % values.shape)
        shape = values.shape.as_list()
        weights = ones_like(values) if weights is None else \
            multiply(ones_like(values), _as_float(weights, "weights"))
        total = _metric_variable(shape, _dtypes.float32, "total_tensor")
        count = _metric_variable(shape, _dtypes.float32, "count_tensor")
        add_total = assign_add(total, multiply(values, weights))
        add_count = assign_add(count, weights)
        value = _safe_div(identity(total), identity(count), "mean")
        update_op = _safe_div(add_total, add_count, "update_op")
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


# ---- top-k metrics: labels as sets of class ids against the k highest predictions ----

# Fills the empty places of a SparseTensor's rows once made dense: it matches no id and is not
# counted as a label.
_NO_LABEL = -(2 ** 62)


def _at_k_name(name, k=None, class_id=None):
    name = "%s_at_%d" % (name, k) if k is not None else "%s_at_k" % name
    return name if class_id is None else "%s_class%d" % (name, class_id)


def _label_sets(labels, predictions_idx):
    """labels (int Tensor or SparseTensor) as a dense int64 tensor [D1..DN, num_labels], one
    set of ids per row (a SparseTensor's empty places _NO_LABEL), with a last dimension added
    when labels have one dimension fewer than predictions_idx (TensorFlow's
    _maybe_expand_labels). Returns (sets, was_sparse)."""
    from .array_ops import expand_dims
    from .ops import cast
    from .sparse_ops import sparse_tensor_to_dense
    from .sparse_tensor import SparseTensor, SparseTensorValue
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor.from_value(labels)
    sparse = isinstance(labels, SparseTensor)
    if sparse:
        values = labels.values
        if not values.dtype.is_integer:
            raise TypeError("labels: expected integer class ids, got %s" % values.dtype.name)
        dense = sparse_tensor_to_dense(
            SparseTensor(labels.indices, cast(values, _dtypes.int64), labels.dense_shape),
            default_value=_NO_LABEL)
    else:
        t = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
        if not t.dtype.is_integer:
            raise TypeError("labels: expected integer class ids, got %s" % t.dtype.name)
        dense = cast(t, _dtypes.int64)
    rank, predictions_rank = dense.shape.ndims, predictions_idx.shape.ndims
    if rank is not None and predictions_rank is not None and rank == predictions_rank - 1:
        dense = expand_dims(dense, -1)
    return dense, sparse


def _in_set(ids, sets):
    """For each id of ids [..., n], whether its row of sets [..., m] holds it."""
    from .array_ops import expand_dims
    from .math_ops import reduce_any
    from .ops import equal
    return reduce_any(equal(expand_dims(ids, -1), expand_dims(sets, -2)), axis=-1)


def _first_occurrences(ids):
    """For each id of ids [..., n], whether it is the first of its value in its row (and not
    _NO_LABEL): a row's set, each value once."""
    from .array_ops import expand_dims, matrix_band_part
    from .math_ops import logical_and, reduce_any
    from .ops import cast, equal, logical_not, not_equal, ones_like
    same = equal(expand_dims(ids, -1), expand_dims(ids, -2))  # [..., n, n]: ids[i] == ids[j]
    ones = ones_like(cast(same, _dtypes.int32))
    earlier = cast(matrix_band_part(ones, -1, 0) - matrix_band_part(ones, 0, 0), _dtypes.bool)
    repeated = reduce_any(logical_and(same, earlier), axis=-1)
    return logical_and(logical_not(repeated), not_equal(ids, _NO_LABEL))


def _per_row(condition):
    from .ops import cast, reduce_sum
    return reduce_sum(cast(condition, _dtypes.float64), axis=-1)


def _set_counts(label_sets, predictions_idx, class_id):
    """Per row: (true positives, false positives, false negatives) of the predicted set
    against the label set, as TensorFlow's set operations count them; with class_id, of
    those sets restricted to that class."""
    from .math_ops import logical_and, reduce_any
    from .ops import cast, equal, logical_not
    if class_id is not None:
        predicted = reduce_any(equal(predictions_idx, class_id), axis=-1)
        labelled = reduce_any(equal(label_sets, class_id), axis=-1)
        return tuple(cast(c, _dtypes.float64) for c in (
            logical_and(predicted, labelled), logical_and(predicted, logical_not(labelled)),
            logical_and(labelled, logical_not(predicted))))
    predicted_first = _first_occurrences(predictions_idx)
    predicted_in_labels = _in_set(predictions_idx, label_sets)
    return (_per_row(logical_and(predicted_first, predicted_in_labels)),
            _per_row(logical_and(predicted_first, logical_not(predicted_in_labels))),
            _per_row(logical_and(_first_occurrences(label_sets),
                                 logical_not(_in_set(label_sets, predictions_idx)))))


def _check_k(k, what):
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError("%s: Invalid k=%s." % (what, k))


def _streaming_ratio(kind, other_kind, labels, predictions_idx, k, class_id, weights,
                     metrics_collections, updates_collections, name):
    """tp / (tp + other) over every batch: precision (other: false positives) or recall
    (false negatives) of the top-k sets, NaN while nothing counts (TensorFlow's)."""
    from .ops import assign_add, cast, divide, multiply, reduce_sum
    with name_scope(name, _at_k_name(kind, k, class_id)):
        if not isinstance(predictions_idx, Tensor):
            predictions_idx = convert_to_tensor(predictions_idx)
        predictions_idx = cast(predictions_idx, _dtypes.int64)
        label_sets, _ = _label_sets(labels, predictions_idx)
        tp, fp, fn = _set_counts(label_sets, predictions_idx, class_id)
        other = fp if other_kind == "false_positive" else fn
        if weights is not None:
            w = cast(weights if isinstance(weights, Tensor) else convert_to_tensor(weights),
                     _dtypes.float64)
            _check_broadcastable(w, tp)
            tp, other = multiply(tp, w), multiply(other, w)
        tp_var = _metric_variable([], _dtypes.float64, _at_k_name("true_positive", k, class_id))
        other_var = _metric_variable([], _dtypes.float64, _at_k_name(other_kind, k, class_id))
        tp_update = assign_add(tp_var, reduce_sum(tp))
        other_update = assign_add(other_var, reduce_sum(other))
        value = divide(tp_var, tp_var + other_var, name="value")
        update = divide(tp_update, tp_update + other_update, name="update")
        _collect(metrics_collections, value)
        _collect(updates_collections, update)
        return value, update


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Recall of the predicted ids predictions_idx [D1..DN, k] against the label sets:
    true positives / (true positives + false negatives), summed over every batch."""
    _check_k(k, "recall_at_top_k")
    return _streaming_ratio("recall", "false_negative", labels, predictions_idx, k, class_id,
                            weights, metrics_collections, updates_collections, name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """recall_at_top_k of the k highest predictions [D1..DN, num_classes]. labels: int ids
    [D1..DN, num_labels] or [D1..DN], or a SparseTensor; an id outside [0, num_classes) is
    always a false negative."""
    from .nn import top_k
    _check_k(k, "recall_at_k")
    with name_scope(name, _at_k_name("recall", k, class_id)) as scope:
        _, top_k_idx = top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                               updates_collections, name=scope)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Precision of the predicted ids predictions_idx [D1..DN, k] against the label sets:
    true positives / (true positives + false positives), summed over every batch."""
    _check_k(k, "precision_at_top_k")
    return _streaming_ratio("precision", "false_positive", labels, predictions_idx, k,
                            class_id, weights, metrics_collections, updates_collections, name)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """precision_at_top_k of the k highest predictions [D1..DN, num_classes]."""
    from .nn import top_k
    _check_k(k, "precision_at_k")
    with name_scope(name, _at_k_name("precision", k, class_id)) as scope:
        _, top_k_idx = top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                                  updates_collections, name=scope)


sparse_precision_at_k = precision_at_k  # TensorFlow's deprecated name for it


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """The mean over rows of the average precision of the k highest predictions: the
    precision at each rank that retrieves a label, summed and divided by min(k, number of
    labels); labels outside [0, num_classes) retrieve nothing and, dense, are not counted."""
    from .math_ops import cumsum, logical_and
    from .nn import top_k
    from .ops import (assign_add, cast, divide, greater_equal, minimum, multiply, ones_like,
                      reduce_sum, shape, size, where)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError("Invalid k=%s." % (k,))
    with name_scope(name, _at_k_name("average_precision", k)):
        _, predictions_idx = top_k(predictions, k)
        predictions_idx = cast(predictions_idx, _dtypes.int64)
        label_sets, sparse = _label_sets(labels, predictions_idx)
        num_classes = cast(shape(predictions)[-1], _dtypes.int64)
        # TensorFlow's _clean_out_of_range_indices: ids >= num_classes become -1.
        label_sets = where(logical_and(greater_equal(label_sets, num_classes),
                                       greater_equal(label_sets, 0)),
                           -1 * ones_like(label_sets), label_sets)
        relevant = cast(_in_set(predictions_idx, label_sets), _dtypes.float64)
        retrieved = cumsum(ones_like(relevant), axis=-1)
        precision_sum = reduce_sum(divide(cumsum(relevant, axis=-1), retrieved) * relevant,
                                   axis=-1)
        if sparse:
            labels_per_row = _per_row(_first_occurrences(label_sets))
        else:
            labels_per_row = _per_row(greater_equal(label_sets, 0))
        average_precision = divide(precision_sum,
                                   minimum(labels_per_row, cast(k, _dtypes.float64)))
        if weights is not None:
            given = cast(weights if isinstance(weights, Tensor) else convert_to_tensor(weights),
                         _dtypes.float64)
            _check_broadcastable(given, average_precision)
            w = multiply(ones_like(average_precision), given)
            average_precision = multiply(average_precision, w)
            batch_max = reduce_sum(w)
        else:
            batch_max = cast(size(average_precision), _dtypes.float64)
        max_var = _metric_variable([], _dtypes.float64, "max")
        total_var = _metric_variable([], _dtypes.float64, "total")
        max_update = assign_add(max_var, batch_max)
        total_update = assign_add(total_var, reduce_sum(average_precision))
        value = _safe_div(total_var, max_var, "mean")
        update = _safe_div(total_update, max_update, "update")
        _collect(metrics_collections, value)
        _collect(updates_collections, update)
        return value, update


sparse_average_precision_at_k = average_precision_at_k  # TensorFlow's deprecated name
