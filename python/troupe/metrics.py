"""tf.metrics: streaming metrics as TensorFlow 1.x computes them — each returns (value,
update_op); the running totals are local variables (LOCAL_VARIABLES and METRIC_VARIABLES,
initialised by tf.local_variables_initializer() or a monitored session's local init), so each
task keeps its own. update_op adds a batch and returns the new value; value reads the current
one. mean, accuracy, and mean_absolute_error/mean_squared_error/root_mean_squared_error are
here."""

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
