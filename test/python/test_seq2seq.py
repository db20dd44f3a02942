"""tf.contrib.seq2seq.sequence_loss and tf.div_no_nan: TensorFlow 1.x's loss_test cases for
sequence_loss (the function; not the Keras SequenceLoss class), ported."""

import numpy as np
import pytest

import troupe as tf

BATCH, STEPS, CLASSES = 2, 3, 5
EXPECTED = 1.60944  # the cross entropy of [0.5] * 5 (and 1.5, 2.5) at classes 0, 1, 2


def _inputs(last_weight=1.0):
    logits = tf.stack([tf.constant(i + 0.5, shape=[BATCH, CLASSES]) for i in range(STEPS)], 1)
    targets = tf.stack([tf.constant(i, tf.int32, shape=[BATCH]) for i in range(STEPS)], 1)
    weights = tf.stack([tf.constant(1.0 if i < STEPS - 1 else last_weight, shape=[BATCH])
                        for i in range(STEPS)], 1)
    return logits, targets, weights


def _loss(**kwargs):
    logits, targets, weights = _inputs(kwargs.pop("last_weight", 1.0))
    with tf.Session() as sess:
        return sess.run(tf.contrib.seq2seq.sequence_loss(logits, targets, weights, **kwargs))


def test_sequence_loss_averages():
    np.testing.assert_allclose(_loss(), EXPECTED, rtol=1e-5)
    np.testing.assert_allclose(_loss(average_across_timesteps=False),
                               np.full(STEPS, EXPECTED), rtol=1e-5)
    np.testing.assert_allclose(_loss(average_across_batch=False),
                               np.full(BATCH, EXPECTED), rtol=1e-5)
    np.testing.assert_allclose(_loss(average_across_timesteps=False, average_across_batch=False),
                               np.full((BATCH, STEPS), EXPECTED), rtol=1e-5)


def test_sequence_loss_sums_divided_by_the_non_zero_weights():
    off = dict(average_across_timesteps=False, average_across_batch=False)
    np.testing.assert_allclose(_loss(sum_over_timesteps=True, sum_over_batch=True, **off),
                               EXPECTED, rtol=1e-5)
    np.testing.assert_allclose(_loss(sum_over_batch=True, **off), np.full(STEPS, EXPECTED),
                               rtol=1e-5)
    np.testing.assert_allclose(_loss(sum_over_timesteps=True, **off), np.full(BATCH, EXPECTED),
                               rtol=1e-5)
    # TensorFlow's testWeightedSumReduction: the last step weighs 0.
    np.testing.assert_allclose(
        _loss(sum_over_timesteps=True, sum_over_batch=True, last_weight=0.0, **off),
        EXPECTED, rtol=1e-5)
    np.testing.assert_allclose(_loss(sum_over_batch=True, last_weight=0.0, **off),
                               [EXPECTED, EXPECTED, 0.0], rtol=1e-5)
    np.testing.assert_allclose(_loss(sum_over_timesteps=True, last_weight=0.0, **off),
                               np.full(BATCH, EXPECTED), rtol=1e-5)


def test_sequence_loss_zero_weights_give_zero_and_bad_arguments():
    logits, targets, _ = _inputs()
    zero = tf.zeros([BATCH, STEPS])
    with tf.Session() as sess:
        assert sess.run(tf.contrib.seq2seq.sequence_loss(logits, targets, zero)) == 0.0
    with pytest.raises(ValueError, match="Logits must be a"):
        tf.contrib.seq2seq.sequence_loss(tf.zeros([2, 3]), targets, zero)
    with pytest.raises(ValueError, match="Targets must be a"):
        tf.contrib.seq2seq.sequence_loss(logits, tf.zeros([2], tf.int32), zero)
    with pytest.raises(ValueError, match="cannot be set to True at same time"):
        tf.contrib.seq2seq.sequence_loss(logits, targets, zero, sum_over_timesteps=True)


def test_div_no_nan_and_its_gradient():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([2.0, 0.0, 4.0])
    q = tf.div_no_nan(x, y)
    gx, gy = tf.gradients(tf.reduce_sum(q), [x, y])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(q), [0.5, 0.0, 0.75])
        np.testing.assert_allclose(sess.run(gx), [0.5, 0.0, 0.25])
        np.testing.assert_allclose(sess.run(gy), [-0.25, 0.0, -3.0 / 16])
    assert tf.math.div_no_nan is tf.div_no_nan
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.div_no_nan(tf.ones([2, 2]), [0.0, 2.0])),
                                   [[0.0, 0.5], [0.0, 0.5]])
