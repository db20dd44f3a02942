"""Each optimizer's update against its formula in numpy, minimize() with a global step, and
the optimizers' argument errors."""

import numpy as np
import pytest

import troupe as tf

W0 = np.array([[0.5, -0.3], [0.2, 0.8]], np.float32)
X = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)


def model():
    w = tf.Variable(W0, name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(X), w)))
    return w, loss


def gradient(w):
    return 2 * X.T @ (X @ w)


def train(optimizer, steps):
    w, loss = model()
    step = tf.train.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(steps):
            losses.append(sess.run(loss))
            sess.run(train_op)
        return sess.run(w), sess.run(step), losses


def test_gradient_descent():
    w, step, _ = train(tf.train.GradientDescentOptimizer(0.01), 3)
    expected = W0.astype(np.float64)
    for _ in range(3):
        expected = expected - 0.01 * gradient(expected)
    np.testing.assert_allclose(w, expected, rtol=1e-5)
    assert step == 3


def test_momentum():
    w, _, _ = train(tf.train.MomentumOptimizer(0.01, 0.9), 3)
    expected, accum = W0.astype(np.float64), np.zeros_like(W0, np.float64)
    for _ in range(3):
        accum = 0.9 * accum + gradient(expected)
        expected = expected - 0.01 * accum
    np.testing.assert_allclose(w, expected, rtol=1e-5)


def test_adagrad():
    w, _, _ = train(tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.1), 3)
    expected, accum = W0.astype(np.float64), np.full_like(W0, 0.1, np.float64)
    for _ in range(3):
        g = gradient(expected)
        accum = accum + g * g
        expected = expected - 0.1 * g / np.sqrt(accum)
    np.testing.assert_allclose(w, expected, rtol=1e-5)


def test_adam():
    w, _, _ = train(tf.train.AdamOptimizer(0.01), 3)
    expected = W0.astype(np.float64)
    m, v = np.zeros_like(expected), np.zeros_like(expected)
    for t in range(1, 4):
        g = gradient(expected)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        expected = expected - lr * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(w, expected, rtol=1e-4)


def test_compute_and_apply_gradients():
    w, loss = model()
    opt = tf.train.GradientDescentOptimizer(0.01)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w]
    apply = opt.apply_gradients(grads_and_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g = sess.run(grads_and_vars[0][0])
        np.testing.assert_allclose(g, gradient(W0.astype(np.float64)), rtol=1e-5)
        sess.run(apply)
        np.testing.assert_allclose(sess.run(w), W0 - 0.01 * g, rtol=1e-5)


def test_optimizer_argument_errors():
    with pytest.raises(TypeError, match="learning_rate: expected a Python number"):
        tf.train.GradientDescentOptimizer("fast")
    with pytest.raises(TypeError, match="not a Tensor"):
        tf.train.AdamOptimizer(tf.constant(0.1))
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    _, loss = model()
    with pytest.raises(TypeError, match="loss: expected a Tensor"):
        tf.train.GradientDescentOptimizer(0.1).minimize(3.0)
    with pytest.raises(TypeError, match="var_list: expected Variables"):
        tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[loss])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(tf.constant([1.0])))
    with pytest.raises(ValueError, match="replicas_to_aggregate"):
        tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 0)
