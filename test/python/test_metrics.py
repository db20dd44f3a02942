"""tf.metrics: streaming values over batches, kept in local variables (each task's own, not
saved, initialised by the local init of a monitored session)."""

import numpy as np
import pytest

import troupe as tf


def test_accuracy_and_mean_accumulate_over_batches():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    accuracy, update = tf.metrics.accuracy(labels, predictions)
    values = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    mean, update_mean = tf.metrics.mean(values, weights)
    rmse, update_rmse = tf.metrics.root_mean_squared_error(labels, predictions)
    names = [v.op.name for v in tf.local_variables()]
    assert "accuracy/mean/total" in names and "accuracy/mean/count" in names
    assert tf.global_variables() == []
    assert len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)) == len(names)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(accuracy) == 0.0  # nothing seen yet
        assert sess.run(update, {labels: [1, 2, 3], predictions: [1, 2, 0]}) == \
            pytest.approx(2 / 3)
        assert sess.run(update, {labels: [1], predictions: [0]}) == pytest.approx(0.5)
        assert sess.run(accuracy) == pytest.approx(0.5)
        sess.run(update_mean, {values: [1.0, 3.0], weights: [1.0, 3.0]})
        assert sess.run(mean) == pytest.approx(2.5)
        sess.run(update_rmse, {labels: [0, 0], predictions: [3, 4]})
        assert sess.run(rmse) == pytest.approx(np.sqrt(12.5))
        # Initialising again starts over.
        sess.run(tf.local_variables_initializer())
        assert sess.run(accuracy) == 0.0


def test_metrics_in_a_monitored_session_are_local_and_not_saved(tmp_path):
    step = tf.train.get_or_create_global_step()
    correct = tf.placeholder(tf.int64, [None])
    accuracy, update = tf.metrics.accuracy(correct, tf.zeros_like(correct))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
        sess.run(update, {correct: [0, 0, 1, 1]})
        assert sess.run(accuracy) == pytest.approx(0.5)
    saved = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(tmp_path)))
    assert saved.has_tensor("global_step")
    assert not any("accuracy" in name for name in saved.get_variable_to_shape_map())
    assert step.op.name == "global_step"


# --- confusion counts, precision, recall, auc (metrics_test's cases, rewritten) ---

def _stream(metric_pair, batches, feed):
    """The metric's value after running its update op on each batch of feeds."""
    value, update = metric_pair
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(value) == 0.0 or np.all(np.asarray(sess.run(value)) == 0)
        updates = [sess.run(update, dict(zip(feed, batch))) for batch in batches]
        return updates, sess.run(value)


def test_confusion_counts_with_weights():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    weights = tf.placeholder(tf.float32, [None])
    batches = [([1, 0, 1, 0], [1, 1, 0, 0], [1.0, 2.0, 3.0, 4.0]),
               ([1, 1], [1, 0], [0.5, 0.25])]
    expected = {"true_positives": 1.5, "false_positives": 2.0, "true_negatives": 4.0,
                "false_negatives": 3.25}
    for name, value in expected.items():
        pair = getattr(tf.metrics, name)(labels, predictions, weights=weights)
        _, final = _stream(pair, batches, [labels, predictions, weights])
        assert final == pytest.approx(value), name
    unweighted = tf.metrics.true_positives([True, False, True], [True, True, True])
    _, final = _stream(unweighted, [()], [])
    assert final == 2.0


def test_precision_and_recall_accumulate_and_are_zero_before_any():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    batches = [([1, 0, 1, 0], [1, 1, 0, 0]), ([1, 1, 0], [1, 1, 1])]
    updates, final = _stream(tf.metrics.precision(labels, predictions), batches,
                             [labels, predictions])
    assert updates[0] == pytest.approx(0.5) and final == pytest.approx(3 / 5)
    updates, final = _stream(tf.metrics.recall(labels, predictions), batches,
                             [labels, predictions])
    assert updates[0] == pytest.approx(0.5) and final == pytest.approx(3 / 4)
    _, none = _stream(tf.metrics.precision(labels, predictions), [([1, 0], [0, 0])],
                      [labels, predictions])
    assert none == 0.0


def _numpy_auc(labels, predictions, num_thresholds, curve, method="trapezoidal",
               weights=None):
    kepsilon, epsilon = 1e-7, 1e-6
    thresholds = [0.0 - kepsilon] + [(i + 1) / (num_thresholds - 1)
                                     for i in range(num_thresholds - 2)] + [1.0 + kepsilon]
    labels, predictions = np.asarray(labels, bool), np.asarray(predictions, np.float32)
    w = np.ones_like(predictions) if weights is None else np.asarray(weights, np.float32)
    tp = np.array([w[(predictions > t) & labels].sum() for t in thresholds])
    fp = np.array([w[(predictions > t) & ~labels].sum() for t in thresholds])
    fn = np.array([w[(predictions <= t) & labels].sum() for t in thresholds])
    tn = np.array([w[(predictions <= t) & ~labels].sum() for t in thresholds])
    recall = (tp + epsilon) / (tp + fn + epsilon)
    if curve == "ROC":
        x, y = fp / (fp + tn + epsilon), recall
    else:
        x, y = recall, (tp + epsilon) / (tp + fp + epsilon)
    heights = {"trapezoidal": (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
               "majoring": np.maximum(y[:-1], y[1:])}[method]
    return np.sum((x[:-1] - x[1:]) * heights)


@pytest.mark.parametrize("curve,method", [("ROC", "trapezoidal"), ("PR", "trapezoidal"),
                                          ("ROC", "minoring"), ("PR", "majoring")])
def test_auc_matches_tensorflows_approximation(curve, method):
    rng = np.random.default_rng(3)
    labels_all = rng.integers(0, 2, 60)
    scores = np.clip(labels_all * 0.3 + rng.random(60) * 0.7, 0, 1).astype(np.float32)
    weights_all = rng.random(60).astype(np.float32)
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    pair = tf.metrics.auc(labels, predictions, weights=weights, num_thresholds=50, curve=curve,
                          summation_method=method)
    batches = [(labels_all[:25], scores[:25], weights_all[:25]),
               (labels_all[25:], scores[25:], weights_all[25:])]
    updates, final = _stream(pair, batches, [labels, predictions, weights])
    assert updates[0] == pytest.approx(_numpy_auc(labels_all[:25], scores[:25], 50, curve,
                                                  method, weights_all[:25]), abs=1e-5)
    assert final == pytest.approx(_numpy_auc(labels_all, scores, 50, curve, method,
                                             weights_all), abs=1e-5)


def test_auc_of_perfect_and_reversed_scores_and_bad_arguments():
    perfect = tf.metrics.auc([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9])
    reversed_ = tf.metrics.auc([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1])
    (_, good), (_, bad) = _stream(perfect, [()], []), _stream(reversed_, [()], [])
    assert good == pytest.approx(1.0, abs=1e-3) and bad == pytest.approx(0.0, abs=1e-3)
    with pytest.raises(ValueError, match="curve must be either ROC or PR"):
        tf.metrics.auc([0], [0.5], curve="XY")
    with pytest.raises(ValueError, match="num_thresholds must be > 1"):
        tf.metrics.auc([0], [0.5], num_thresholds=1)
    with pytest.raises(ValueError, match="careful_interpolation"):
        tf.metrics.auc([0], [0.5], curve="PR", summation_method="careful_interpolation")
    careful = tf.metrics.auc([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9],
                             summation_method="careful_interpolation")  # ROC: trapezoidal
    assert _stream(careful, [()], [])[1] == pytest.approx(1.0, abs=1e-3)
    # Labels [batch, 1] against predictions [batch]: the size-1 dimension is dropped.
    _, squeezed = _stream(tf.metrics.precision(tf.constant([[1], [0], [1]]), [1, 1, 0]), [()],
                          [])
    assert squeezed == pytest.approx(0.5)
    out_of_range = tf.metrics.auc([0, 1], [0.5, 1.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
        _stream(out_of_range, [()], [])


# --- mean_iou, mean_per_class_accuracy and the mean-based metrics (metrics_test.py's cases,
# rewritten) ---

def _streamed(value, update_op, feeds):
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        updates = [sess.run(update_op, feed) for feed in feeds]
        return sess.run(value), updates


def test_mean_iou_over_two_batches():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    value, update_op = tf.metrics.mean_iou(labels, predictions, num_classes=3)
    assert [v.name for v in tf.local_variables()] == ["mean_iou/total_confusion_matrix:0"]
    result, updates = _streamed(value, update_op,
                                [{labels: [0, 1], predictions: [0, 1]},
                                 {labels: [2, 2], predictions: [1, 2]}])
    # Confusion [[1,0,0],[0,1,0],[0,1,1]]: IoU 1, 1/2, 1/2.
    np.testing.assert_allclose(result, 2.0 / 3.0, rtol=1e-6)
    np.testing.assert_array_equal(updates[1], [[1, 0, 0], [0, 1, 0], [0, 1, 1]])
    with pytest.raises(ValueError, match="num_classes must be an int >= 1"):
        tf.metrics.mean_iou(labels, predictions, num_classes=0)


def test_mean_iou_leaves_out_classes_never_seen_and_takes_weights():
    value, update_op = tf.metrics.mean_iou([0, 0, 1], [0, 1, 1], num_classes=4,
                                           weights=[1.0, 0.0, 1.0])
    result, _ = _streamed(value, update_op, [None])
    np.testing.assert_allclose(result, 1.0)  # the weight-0 miss does not count


def test_mean_per_class_accuracy():
    value, update_op = tf.metrics.mean_per_class_accuracy([0, 0, 1, 1], [0, 1, 1, 1],
                                                          num_classes=3)
    result, updates = _streamed(value, update_op, [None])
    np.testing.assert_allclose(updates[0], [0.5, 1.0, 0.0])
    np.testing.assert_allclose(result, 0.5)  # (0.5 + 1 + 0) / 3, as TensorFlow's


def test_mean_cosine_distance_percentage_below_relative_error_and_mean_tensor():
    cosine = tf.metrics.mean_cosine_distance([[1.0, 0.0], [0.0, 1.0]],
                                             [[1.0, 0.0], [1.0, 0.0]], dim=1)
    below = tf.metrics.percentage_below([1.0, 2.0, 3.0, 4.0], threshold=3.0)
    relative = tf.metrics.mean_relative_error([1.0, 2.0], [2.0, 2.0], normalizer=[2.0, 0.0])
    values = tf.placeholder(tf.float32, [2])
    tensor_mean = tf.metrics.mean_tensor(values)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run([cosine[1], below[1], relative[1]])
        sess.run(tensor_mean[1], {values: [1.0, 2.0]})
        sess.run(tensor_mean[1], {values: [3.0, 4.0]})
        got = sess.run([cosine[0], below[0], relative[0], tensor_mean[0]])
    np.testing.assert_allclose(got[:3], [0.5, 0.5, 0.25])
    np.testing.assert_allclose(got[3], [2.0, 3.0])
    with pytest.raises(ValueError, match="fully known shape"):
        tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None]))
