"""tf.metrics' top-k metrics: precision_at_k, precision_at_top_k, recall_at_k, recall_at_top_k,
average_precision_at_k (and their sparse_ names) — TensorFlow 1.x's metrics_test cases for
them, ported: labels dense or sparse, of one dimension or two, class_id, weights, ids out of
range, NaN while nothing counts."""

import math

import numpy as np
import pytest

import troupe as tf

NAN = float("nan")


def _sparse_2d(indicators):
    """TensorFlow's _binary_2d_label_to_2d_sparse_value: the columns set in each row."""
    indices, values = [], []
    for row, labels in enumerate(indicators):
        column = 0
        for class_id, on in enumerate(labels):
            if on:
                indices.append([row, column])
                values.append(class_id)
                column += 1
    shape = [len(indicators), max(sum(1 for x in r if x) for r in indicators)]
    return tf.SparseTensorValue(np.array(indices, np.int64), np.array(values, np.int64),
                                np.array(shape, np.int64))


def _sparse_1d(indicators):
    """TensorFlow's _binary_2d_label_to_1d_sparse_value: one label per row."""
    values = [row.index(1) for row in [list(r) for r in indicators]]
    return tf.SparseTensorValue(np.array([[i] for i in range(len(values))], np.int64),
                                np.array(values, np.int64), np.array([len(values)], np.int64))


def _check(metric_fn, expected, **kwargs):
    with tf.Graph().as_default():
        if kwargs.get("weights") is not None:
            kwargs["weights"] = tf.constant(kwargs["weights"], tf.float32)
        for key, dtype in (("predictions", tf.float32), ("predictions_idx", tf.int32)):
            if key in kwargs:
                kwargs[key] = tf.constant(kwargs[key], dtype)
        metric, update = metric_fn(**kwargs)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.OpError):
                sess.run(metric)  # fails before the local variables are initialised
            sess.run(tf.variables_initializer(tf.local_variables()))
            got_update, got_metric = sess.run(update), sess.run(metric)
    if math.isnan(expected):
        assert math.isnan(got_update) and math.isnan(got_metric), (got_update, got_metric)
    else:
        assert got_update == pytest.approx(expected, abs=1e-12)
        assert got_metric == pytest.approx(expected, abs=1e-12)


def _precision_at_k(predictions, labels, k, expected, class_id=None, weights=None):
    _check(tf.metrics.precision_at_k, expected, labels=labels, k=k, class_id=class_id,
           weights=weights, predictions=predictions)


def _precision_at_top_k(predictions_idx, labels, k, expected, class_id=None, weights=None):
    _check(tf.metrics.precision_at_top_k, expected, labels=labels, k=k, class_id=class_id,
           weights=weights, predictions_idx=predictions_idx)


def _recall_at_k(predictions, labels, k, expected, class_id=None, weights=None):
    _check(tf.metrics.recall_at_k, expected, labels=labels, k=k, class_id=class_id,
           weights=weights, predictions=predictions)


def _recall_at_top_k(predictions_idx, labels, k, expected, class_id=None, weights=None):
    _check(tf.metrics.recall_at_top_k, expected, labels=labels, k=k, class_id=class_id,
           weights=weights, predictions_idx=predictions_idx)


def _average_precision_at_k(predictions, labels, k, expected, weights=None):
    _check(tf.metrics.average_precision_at_k, expected, labels=labels, k=k, weights=weights,
           predictions=predictions)


# SingleLabelPrecisionAtKTest: sparse vs dense and 1d vs 2d labels handled the same.
SINGLE_PREDICTIONS = ((0.1, 0.3, 0.2, 0.4), (0.1, 0.2, 0.3, 0.4))
SINGLE_PREDICTIONS_IDX = [[3], [3]]
SINGLE_INDICATORS = ((0, 0, 0, 1), (0, 0, 1, 0))
SINGLE_LABELS = (_sparse_1d(SINGLE_INDICATORS), _sparse_2d(SINGLE_INDICATORS),
                 np.array((3, 2), np.int64), np.array([[3], [2]], np.int64))


@pytest.mark.parametrize("labels", SINGLE_LABELS, ids=["sparse1d", "sparse2d", "1d", "2d"])
def test_single_label_precision_and_recall(labels):
    for class_id in (-1, 0, 1, 2, 4):  # no predictions of these classes
        _precision_at_k(SINGLE_PREDICTIONS, labels, 1, NAN, class_id=class_id)
        _precision_at_top_k(SINGLE_PREDICTIONS_IDX, labels, 1, NAN, class_id=class_id)
    # Class 3: 1 label, 2 predictions, 1 correct.
    _precision_at_k(SINGLE_PREDICTIONS, labels, 1, 1.0 / 2, class_id=3)
    _precision_at_top_k(SINGLE_PREDICTIONS_IDX, labels, 1, 1.0 / 2, class_id=3)
    # All classes: 2 labels, 2 predictions, 1 correct.
    _precision_at_k(SINGLE_PREDICTIONS, labels, 1, 1.0 / 2)
    _precision_at_top_k(SINGLE_PREDICTIONS_IDX, labels, 1, 1.0 / 2)
    _average_precision_at_k(SINGLE_PREDICTIONS, labels, 1, 1.0 / 2)
    # SingleLabelRecallAtKTest: class 2: 1 label, no correct prediction; class 3: 1 of 1.
    _recall_at_k(SINGLE_PREDICTIONS, labels, 1, 0.0, class_id=2)
    _recall_at_k(SINGLE_PREDICTIONS, labels, 1, 1.0, class_id=3)
    _recall_at_k(SINGLE_PREDICTIONS, labels, 1, 1.0 / 2)
    _recall_at_top_k(SINGLE_PREDICTIONS_IDX, labels, 1, 1.0 / 2)
    for class_id in (-1, 0, 1, 4):  # no labels of these classes
        _recall_at_k(SINGLE_PREDICTIONS, labels, 1, NAN, class_id=class_id)


def test_average_precision_as_the_fastml_examples():
    labels_ex1 = (0, 1, 2, 3, 4)
    predictions_ex1 = (0.2, 0.1, 0.0, 0.4, 0.0, 0.5, 0.3)
    predictions_idx_ex1 = (5, 3, 6, 0, 1)
    precision_ex1 = (0.0 / 1, 1.0 / 2, 1.0 / 3, 2.0 / 4)
    avg_precision_ex1 = (0.0 / 1, precision_ex1[1] / 2, precision_ex1[1] / 3,
                         (precision_ex1[1] + precision_ex1[3]) / 4)
    labels_ex2 = (0, 2, 4, 5, 6)
    predictions_ex2 = (0.3, 0.5, 0.0, 0.4, 0.0, 0.1, 0.2)
    predictions_idx_ex2 = (1, 3, 0, 6, 5)
    precision_ex2 = (0.0 / 1, 0.0 / 2, 1.0 / 3, 2.0 / 4)
    avg_precision_ex2 = (0.0 / 1, 0.0 / 2, precision_ex2[2] / 3,
                         (precision_ex2[2] + precision_ex2[3]) / 4)
    for i in range(4):
        k = i + 1
        for labels, predictions, idx, precision, average in (
                (labels_ex1, predictions_ex1, predictions_idx_ex1, precision_ex1,
                 avg_precision_ex1),
                (labels_ex2, predictions_ex2, predictions_idx_ex2, precision_ex2,
                 avg_precision_ex2)):
            labels = np.array([labels], np.int64)
            _precision_at_k((predictions,), labels, k, precision[i])
            _precision_at_top_k((idx[:k],), labels, k, precision[i])
            _average_precision_at_k((predictions,), labels, k, average[i])
        # Both examples: the mean of the two; weighted: the weighted mean.
        labels = np.array([labels_ex1, labels_ex2], np.int64)
        predictions = (predictions_ex1, predictions_ex2)
        _precision_at_k(predictions, labels, k, (precision_ex1[i] + precision_ex2[i]) / 2)
        _precision_at_top_k((predictions_idx_ex1[:k], predictions_idx_ex2[:k]), labels, k,
                            (precision_ex1[i] + precision_ex2[i]) / 2)
        _average_precision_at_k(predictions, labels, k,
                                (avg_precision_ex1[i] + avg_precision_ex2[i]) / 2)
        _average_precision_at_k(predictions, labels, k,
                                (0.3 * avg_precision_ex1[i] + 0.6 * avg_precision_ex2[i]) / 0.9,
                                weights=(0.3, 0.6))


def test_average_precision_ignores_labels_out_of_range():
    labels = np.array([(-1, 0, 1, 2, 3, 4, 7)], np.int64)
    predictions = ((0.2, 0.1, 0.0, 0.4, 0.0, 0.5, 0.3),)
    precision = (0.0 / 1, 1.0 / 2, 1.0 / 3, 2.0 / 4)
    average = (0.0 / 1, precision[1] / 2, precision[1] / 3, (precision[1] + precision[3]) / 4)
    for i in range(4):
        _precision_at_k(predictions, labels, i + 1, precision[i])
        _average_precision_at_k(predictions, labels, i + 1, average[i])


def test_average_precision_with_different_numbers_of_labels():
    predictions = [[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]]
    sparse_labels = _sparse_2d([[0, 0, 1, 1], [0, 0, 0, 1]])
    dense_labels = np.array([[2, 3], [3, -1]], np.int64)
    predictions_idx = np.array(((0, 1, 2, 3), (3, 2, 1, 0)))
    precision = np.mean(((0.0 / 1, 0.0 / 2, 1.0 / 3, 2.0 / 4),
                         (1.0 / 1, 1.0 / 2, 1.0 / 3, 1.0 / 4)), axis=0)
    average = np.mean(((0.0 / 1, 0.0 / 2, 1.0 / 3 / 2, (1.0 / 3 + 2.0 / 4) / 2),
                       (1.0 / 1, 1.0 / 1, 1.0 / 1, 1.0 / 1)), axis=0)
    for labels in (sparse_labels, dense_labels):
        for i in range(4):
            k = i + 1
            _precision_at_k(predictions, labels, k, precision[i])
            _precision_at_top_k(predictions_idx[:, :k], labels, k, precision[i])
            _average_precision_at_k(predictions, labels, k, average[i])


THREE_PREDICTIONS = [[0.5, 0.1, 0.6, 0.3, 0.8, 0.0, 0.7, 0.2, 0.4, 0.9],
                     [0.3, 0.0, 0.7, 0.2, 0.4, 0.9, 0.5, 0.8, 0.1, 0.6]]
THREE_PREDICTIONS_IDX = [[9, 4, 6, 2, 0], [5, 7, 2, 9, 6]]
THREE_LABELS = (_sparse_2d([[0, 0, 1, 0, 0, 0, 0, 1, 1, 0], [0, 1, 1, 0, 0, 1, 0, 0, 0, 0]]),
                np.array([[2, 7, 8], [1, 2, 5]], np.int64))


@pytest.mark.parametrize("labels", THREE_LABELS, ids=["sparse", "dense"])
def test_three_labels_at_k5(labels):
    for class_id in (-1, 1, 3, 8, 10):  # no predictions of these classes
        _precision_at_k(THREE_PREDICTIONS, labels, 5, NAN, class_id=class_id)
        _precision_at_top_k(THREE_PREDICTIONS_IDX, labels, 5, NAN, class_id=class_id)
    for class_id in (0, 4, 6, 9):  # no labels of these, predicted
        _precision_at_k(THREE_PREDICTIONS, labels, 5, 0.0, class_id=class_id)
        _precision_at_top_k(THREE_PREDICTIONS_IDX, labels, 5, 0.0, class_id=class_id)
    # Class 2: 2 labels, 2 correct predictions.
    _precision_at_k(THREE_PREDICTIONS, labels, 5, 2.0 / 2, class_id=2)
    _precision_at_top_k(THREE_PREDICTIONS_IDX, labels, 5, 2.0 / 2, class_id=2)
    # Class 5: 1 label, 1 correct prediction.
    _precision_at_k(THREE_PREDICTIONS, labels, 5, 1.0 / 1, class_id=5)
    # Class 7: 1 label, 1 incorrect prediction.
    _precision_at_k(THREE_PREDICTIONS, labels, 5, 0.0 / 1, class_id=7)
    # All classes: 10 predictions, 3 correct.
    _precision_at_k(THREE_PREDICTIONS, labels, 5, 3.0 / 10)
    _precision_at_top_k(THREE_PREDICTIONS_IDX, labels, 5, 3.0 / 10)
    # Recall: 6 labels, 3 found; class 7: 1 label, not found; class 2: 2 labels, both found.
    _recall_at_k(THREE_PREDICTIONS, labels, 5, 3.0 / 6)
    _recall_at_top_k(THREE_PREDICTIONS_IDX, labels, 5, 3.0 / 6)
    _recall_at_k(THREE_PREDICTIONS, labels, 5, 0.0 / 1, class_id=7)
    _recall_at_k(THREE_PREDICTIONS, labels, 5, 2.0 / 2, class_id=2)


def test_streaming_over_batches_and_bad_arguments():
    predictions = tf.placeholder(tf.float32, [2, 4])
    labels = tf.placeholder(tf.int64, [2])
    precision, update = tf.metrics.sparse_precision_at_k(labels, predictions, k=1)
    recall, recall_update = tf.metrics.recall_at_k(labels, predictions, k=2)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        feeds = [({predictions: SINGLE_PREDICTIONS, labels: [3, 2]}, 1, 2),  # 1 of 2 at k=1
                 ({predictions: SINGLE_PREDICTIONS, labels: [3, 3]}, 2, 2)]  # 2 of 2
        for feed, _, _ in feeds:
            sess.run([update, recall_update], feed)
        assert sess.run(precision) == pytest.approx(3.0 / 4)
        assert sess.run(recall) == pytest.approx(4.0 / 4)
    with pytest.raises(ValueError, match="Invalid k=0"):
        tf.metrics.average_precision_at_k(labels, predictions, k=0)
    with pytest.raises(ValueError, match="Invalid k=0"):
        tf.metrics.precision_at_k(labels, predictions, k=0)
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.metrics.precision_at_k(labels, predictions, k=1, weights=tf.ones([2, 1]))
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.metrics.average_precision_at_k(labels, predictions, k=1, weights=tf.ones([2, 1]))
    with tf.Graph().as_default():
        value, _ = tf.metrics.precision_at_k(tf.constant([1, 2], tf.int64),
                                             tf.ones([2, 4]), k=1)
        assert value.op.name.startswith("precision_at_1/")  # TensorFlow's scope, not nested
    with pytest.raises(TypeError, match="expected integer class ids, got float32"):
        tf.metrics.recall_at_k(tf.constant([1.0, 2.0]), predictions, k=1)
