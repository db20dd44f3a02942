"""tf.losses against numpy: every loss with scalar and per-element weights, every reduction,
label smoothing, the LOSSES collection and get_total_loss, gradients (none into softmax labels),
and the argument errors TensorFlow 1.x gives."""

import numpy as np
import pytest

import troupe as tf

RNG = np.random.default_rng(7)
LABELS = RNG.uniform(size=(4, 3)).astype(np.float32)
PREDICTIONS = RNG.uniform(size=(4, 3)).astype(np.float32)
WEIGHTS = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)  # per row, broadcast to columns


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def by_nonzero_weights(losses, weights):
    weights = np.broadcast_to(weights, losses.shape)
    return (losses * weights).sum() / np.count_nonzero(weights)


def test_regression_losses_with_weights():
    error = PREDICTIONS - LABELS
    huber_delta = 0.3
    quadratic = np.minimum(np.abs(error), huber_delta)
    expected = {
        "absolute_difference": np.abs(error),
        "mean_squared_error": error ** 2,
        "huber_loss": 0.5 * quadratic ** 2 + huber_delta * (np.abs(error) - quadratic),
        "log_loss": -LABELS * np.log(PREDICTIONS + 1e-7) -
                    (1 - LABELS) * np.log(1 - PREDICTIONS + 1e-7),
    }
    built = {
        "absolute_difference": tf.losses.absolute_difference(LABELS, PREDICTIONS, WEIGHTS),
        "mean_squared_error": tf.losses.mean_squared_error(LABELS, PREDICTIONS, WEIGHTS),
        "huber_loss": tf.losses.huber_loss(LABELS, PREDICTIONS, WEIGHTS, delta=huber_delta),
        "log_loss": tf.losses.log_loss(LABELS, PREDICTIONS, WEIGHTS),
    }
    values = run(built)
    for name, losses in expected.items():
        np.testing.assert_allclose(values[name], by_nonzero_weights(losses, WEIGHTS), rtol=1e-5,
                                   err_msg=name)
    assert len(tf.losses.get_losses()) == 4
    total = run(tf.losses.get_total_loss())
    np.testing.assert_allclose(total, sum(values.values()), rtol=1e-5)


def test_every_reduction():
    losses = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    weights = np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)
    r = tf.losses.Reduction
    values = run({key: tf.losses.compute_weighted_loss(losses, weights, reduction=key)
                  for key in r.all()})
    np.testing.assert_array_equal(values[r.NONE], losses * weights)
    assert values[r.SUM] == 8.0
    assert values[r.MEAN] == np.float32(8.0 / 3.0)
    assert values[r.SUM_OVER_BATCH_SIZE] == 2.0
    assert values[r.SUM_BY_NONZERO_WEIGHTS] == 4.0
    # All weights zero: 0, not NaN.
    assert run(tf.losses.compute_weighted_loss(losses, 0.0)) == 0.0
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.losses.compute_weighted_loss(losses, reduction="average")
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.losses.compute_weighted_loss(np.ones(3, np.float32), np.ones((2, 3), np.float32))


def test_classification_losses_and_label_smoothing():
    logits = RNG.normal(size=(4, 3)).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
    binary = (LABELS > 0.5).astype(np.float32)
    values = run({
        "softmax": tf.losses.softmax_cross_entropy(onehot, logits),
        "smoothed": tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.3),
        "sparse": tf.losses.sparse_softmax_cross_entropy(np.array([0, 2, 1, 2]), logits,
                                                         weights=WEIGHTS[:, 0]),
        "sigmoid": tf.losses.sigmoid_cross_entropy(binary, logits, label_smoothing=0.2),
        "hinge": tf.losses.hinge_loss(binary, logits),
        "cosine": tf.losses.cosine_distance(onehot, tf.nn.softmax(logits), axis=1),
    })
    log_softmax = logits - logits.max(1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
    np.testing.assert_allclose(values["softmax"], -(onehot * log_softmax).sum(1).mean(),
                               rtol=1e-5)
    smooth = onehot * 0.7 + 0.1
    np.testing.assert_allclose(values["smoothed"], -(smooth * log_softmax).sum(1).mean(),
                               rtol=1e-5)
    per_example = -log_softmax[np.arange(4), [0, 2, 1, 2]]
    np.testing.assert_allclose(values["sparse"], by_nonzero_weights(per_example, WEIGHTS[:, 0]),
                               rtol=1e-5)
    z = binary * 0.8 + 0.1
    sigmoid_xent = np.maximum(logits, 0) - logits * z + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(values["sigmoid"], sigmoid_xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(values["hinge"],
                               np.maximum(0, 1 - (2 * binary - 1) * logits).mean(), rtol=1e-5)
    softmax = np.exp(log_softmax)
    np.testing.assert_allclose(values["cosine"], (1 - (onehot * softmax).sum(1)).mean(),
                               rtol=1e-5)


def test_gradients_reach_logits_but_not_softmax_labels():
    logits = tf.constant(RNG.normal(size=(2, 3)).astype(np.float32))
    labels = tf.constant(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], np.float32))
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    grad_logits, grad_labels = tf.gradients(loss, [logits, labels])
    assert grad_labels is None
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert tf.gradients(tf.reduce_sum(v1), [labels])[0] is None
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert tf.gradients(tf.reduce_sum(v2), [labels])[0] is not None
    values = run({"grad": grad_logits, "softmax": tf.nn.softmax(logits), "labels": labels})
    np.testing.assert_allclose(values["grad"], (values["softmax"] - values["labels"]) / 2,
                               atol=1e-6)


def test_loss_argument_errors():
    with pytest.raises(ValueError, match="labels must not be None"):
        tf.losses.mean_squared_error(None, PREDICTIONS)
    with pytest.raises(ValueError, match="Shapes .* are incompatible"):
        tf.losses.mean_squared_error(LABELS, PREDICTIONS[:, :2])
    with pytest.raises(ValueError, match="You must specify 'axis'"):
        tf.losses.cosine_distance(LABELS, PREDICTIONS)
    with pytest.raises(ValueError, match="No losses found in collection"):
        tf.losses.get_total_loss()
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.sigmoid_cross_entropy_with_logits(LABELS, PREDICTIONS)
    loss = tf.losses.absolute_difference(LABELS, PREDICTIONS, loss_collection=None)
    assert tf.losses.get_losses() == [] and loss is not None


def test_mean_pairwise_squared_error_averages_over_pairs():
    labels = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    predictions = np.array([[4.0, 8.0, 12.0], [1.0, 2.0, 4.0]])
    expected = []
    for l, p in zip(labels, predictions):
        d = p - l
        expected.append(np.mean([(d[i] - d[j]) ** 2 for i in range(3) for j in range(i + 1, 3)]))
    with tf.Session() as sess:
        loss = tf.losses.mean_pairwise_squared_error(labels, predictions)
        np.testing.assert_allclose(sess.run(loss), sum(expected))
        weighted = tf.losses.mean_pairwise_squared_error(labels, predictions, weights=[2.0, 0.0])
        np.testing.assert_allclose(sess.run(weighted), 2 * expected[0])
        nothing = tf.losses.mean_pairwise_squared_error(labels, predictions, weights=0.0)
        assert sess.run(nothing) == 0.0
    assert loss in tf.losses.get_losses()
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.losses.mean_pairwise_squared_error([1.0, 2.0], [1.0, 3.0])
