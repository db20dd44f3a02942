"""Normalization and the reductions built from other ops: tf.nn.moments,
batch_normalization, l2_normalize, log_softmax, tf.layers.batch_normalization (training with
UPDATE_OPS, inference from the moving averages), reduce_any, reduce_all and argmin — values
against numpy, gradients against finite differences (float64), errors."""

import numpy as np
import pytest

import troupe as tf

from conftest import check_gradient

RNG = np.random.default_rng(9)


def run(fetches, feed_dict=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_moments_normalization_and_log_softmax_against_numpy():
    x = RNG.normal(size=(4, 3, 2)) * 3 + 1
    mean, variance = run(tf.nn.moments(x, [0, 1]))
    np.testing.assert_allclose(mean, x.mean((0, 1)))
    np.testing.assert_allclose(variance, x.var((0, 1)))
    kept = run(tf.nn.moments(x, [0], keep_dims=True)[0])
    assert kept.shape == (1, 3, 2)
    offset, scale = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    normalized = run(tf.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3))
    np.testing.assert_allclose(normalized, (x - mean) / np.sqrt(variance + 1e-3) * scale + offset)
    np.testing.assert_allclose(run(tf.nn.l2_normalize(x, axis=2)),
                               x / np.sqrt(np.sum(x ** 2, axis=2, keepdims=True)))
    logits = np.array([[1000.0, 0.0], [1.0, 2.0]])
    expected = logits - np.log(np.sum(np.exp(logits - logits.max(1, keepdims=True)), 1,
                                      keepdims=True)) - logits.max(1, keepdims=True)
    np.testing.assert_allclose(run(tf.nn.log_softmax(logits)), expected)


def test_any_all_and_argmin():
    flags = np.array([[True, False], [False, False]])
    np.testing.assert_array_equal(run(tf.reduce_any(flags, 1)), [True, False])
    np.testing.assert_array_equal(run(tf.reduce_all(flags, 0)), [False, False])
    assert run(tf.reduce_any(flags)) and not run(tf.reduce_all(flags))
    values = np.array([[3, 1, 1], [0, 5, np.iinfo(np.int32).min]], np.int32)
    np.testing.assert_array_equal(run(tf.argmin(values, 1)), [1, 2])
    np.testing.assert_array_equal(run(tf.argmin(np.array([2.0, -1.0, 4.0]))), 1)
    with pytest.raises(TypeError, match="argmin"):
        tf.argmin(np.array([True]))


def test_batch_normalization_layer_trains_moving_averages_and_infers_with_them():
    x = tf.placeholder(tf.float64, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, momentum=0.5, training=training)
    names = [v.op.name for v in tf.global_variables()]
    assert names == ["batch_normalization/gamma", "batch_normalization/beta",
                     "batch_normalization/moving_mean", "batch_normalization/moving_variance"]
    assert [v.op.name for v in tf.trainable_variables()] == names[:2]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    batch = RNG.normal(size=(16, 3)) * 2 + 5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        trained = sess.run(y, {x: batch, training: True})
        np.testing.assert_allclose(trained.mean(0), 0, atol=1e-9)
        np.testing.assert_allclose(trained.std(0), np.sqrt(batch.var(0) / (batch.var(0) + 1e-3)))
        sess.run(updates, {x: batch, training: True})
        moving_mean, moving_variance = sess.run(tf.global_variables()[2:])
        np.testing.assert_allclose(moving_mean, 0.5 * batch.mean(0))
        np.testing.assert_allclose(moving_variance, 0.5 + 0.5 * batch.var(0))
        inferred = sess.run(y, {x: batch, training: False})
        np.testing.assert_allclose(inferred, (batch - moving_mean) /
                                   np.sqrt(moving_variance + 1e-3))
        # Updates in an inference step leave the averages as they are.
        sess.run(updates, {x: batch, training: False})
        np.testing.assert_allclose(sess.run(tf.global_variables()[2]), moving_mean)
    images = tf.placeholder(tf.float32, [None, 4, 4, 2])
    tf.layers.batch_normalization(images, axis=1, training=True)
    with pytest.raises(ValueError, match="Invalid axis"):
        tf.layers.batch_normalization(images, axis=4)
    with pytest.raises(ValueError, match="renorm is not supported"):
        tf.layers.batch_normalization(images, renorm=True)


@pytest.mark.parametrize("name, build, shape", [
    ("moments", lambda x: tf.reduce_sum(tf.nn.moments(x, [0])[1] * [1.0, 2.0, 3.0]), (4, 3)),
    ("batch_normalization", lambda x: tf.reduce_sum(tf.square(tf.nn.batch_normalization(
        x, *tf.nn.moments(x, [0]), offset=np.ones(3), scale=np.arange(1.0, 4.0),
        variance_epsilon=1e-3)) * np.arange(12.0).reshape(4, 3)), (4, 3)),
    ("l2_normalize", lambda x: tf.reduce_sum(tf.nn.l2_normalize(x, 1) * [1.0, -2.0, 0.5]),
     (2, 3)),
    ("log_softmax", lambda x: tf.reduce_sum(tf.nn.log_softmax(x) * [1.0, 0.0, 2.0]), (2, 3)),
])
def test_gradient_matches_finite_differences(name, build, shape):
    check_gradient(build, shape)


# TensorFlow 1.x's lrn_op_test: the op against the formula in numpy, for random radii, biases,
# alphas and betas; the gradient against finite differences; a 3-D input refused.
def _lrn_reference(x, radius, bias, alpha, beta):
    out = np.empty_like(x)
    depth = x.shape[-1]
    for j in range(depth):
        window = x[..., max(0, j - radius):min(depth, j + radius + 1)]
        out[..., j] = x[..., j] / (bias + alpha * np.sum(window ** 2, axis=-1)) ** beta
    return out


def test_lrn_matches_the_formula_and_differentiates():
    rng = np.random.RandomState(5)
    for _ in range(5):
        shape = rng.randint(1, 5, size=4)
        shape[3] = rng.randint(1, 12)
        x = rng.rand(*shape).astype(np.float32)
        radius, bias = int(rng.randint(1, min(8, shape[3]) + 1)), 1.0 + rng.rand()
        alpha, beta = 2.0 * rng.rand(), 2.0 * rng.rand()
        with tf.Session() as sess:
            got = sess.run(tf.nn.lrn(x, radius, bias, alpha, beta))
        np.testing.assert_allclose(got, _lrn_reference(x, radius, bias, alpha, beta),
                                   rtol=1e-5, atol=1e-6)
    check_gradient(lambda x: tf.reduce_sum(tf.sin(tf.nn.local_response_normalization(
        x, depth_radius=2, bias=1.5, alpha=0.7, beta=0.75))), [2, 3, 2, 7])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 4-dimensional"):
        tf.nn.lrn(np.ones([2, 3, 4], np.float32))


# TensorFlow 1.x's nn_fused_batchnorm_test, on the CPU: training and inference against numpy
# (NHWC and NCHW), the variance it returns Bessel-corrected, gradients by finite differences.
def test_fused_batch_norm_training_and_inference():
    rng = np.random.RandomState(7)
    x = rng.randn(2, 3, 4, 5).astype(np.float32)
    scale = rng.rand(5).astype(np.float32) + 0.5
    offset = rng.randn(5).astype(np.float32)
    mean_ref = x.mean(axis=(0, 1, 2))
    var_ref = x.var(axis=(0, 1, 2))
    y_ref = (x - mean_ref) / np.sqrt(var_ref + 0.001) * scale + offset
    y, m, v = tf.nn.fused_batch_norm(x, scale, offset)
    yc, mc, vc = tf.nn.fused_batch_norm(np.transpose(x, [0, 3, 1, 2]), scale, offset,
                                        data_format="NCHW")
    yi, mi, vi = tf.nn.fused_batch_norm(x, scale, offset, mean=mean_ref, variance=var_ref,
                                        is_training=False)
    with tf.Session() as sess:
        got = sess.run([y, m, v, yc, mc, vc, yi, mi, vi])
    np.testing.assert_allclose(got[0], y_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[1], mean_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], var_ref * 24 / 23, rtol=1e-4)
    np.testing.assert_allclose(got[3], np.transpose(y_ref, [0, 3, 1, 2]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[5], var_ref * 24 / 23, rtol=1e-4)
    np.testing.assert_allclose(got[6], y_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[8], var_ref)
    for training in (True, False):
        def build(t, training=training):
            out, _, _ = tf.nn.fused_batch_norm(
                t, np.float64([1.5, 0.5]), np.float64([0.1, -0.2]),
                mean=None if training else np.float64([0.3, -0.1]),
                variance=None if training else np.float64([1.2, 0.8]), is_training=training)
            return tf.reduce_sum(tf.sin(out))
        check_gradient(build, [2, 2, 3, 2])
    with pytest.raises(ValueError, match="Both 'mean' and 'variance' must be a 1D tensor"):
        tf.nn.fused_batch_norm(x, scale, offset, is_training=False)
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.fused_batch_norm(x[0], scale, offset)
