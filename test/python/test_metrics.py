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
    saved = np.load(tf.train.latest_checkpoint(str(tmp_path)) + ".npz")
    assert "global_step" in saved.files
    assert not any("accuracy" in name for name in saved.files)
    assert step.op.name == "global_step"
