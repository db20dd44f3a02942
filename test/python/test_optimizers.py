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


def test_rmsprop_plain_and_centered():
    for centered in (False, True):
        w, _, _ = train(tf.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5,
                                                  centered=centered), 3)
        expected = W0.astype(np.float64)
        ms, mg, mom = np.ones_like(expected), np.zeros_like(expected), np.zeros_like(expected)
        for _ in range(3):
            g = gradient(expected)
            ms = 0.9 * ms + 0.1 * g * g
            mg = 0.9 * mg + 0.1 * g
            denominator = ms - mg * mg if centered else ms
            mom = 0.5 * mom + 0.01 * g / np.sqrt(denominator + 1e-10)
            expected = expected - mom
        np.testing.assert_allclose(w, expected, rtol=1e-4, err_msg="centered=%s" % centered)


def test_adadelta():
    w, _, _ = train(tf.train.AdadeltaOptimizer(1.0, rho=0.95, epsilon=1e-6), 3)
    expected = W0.astype(np.float64)
    accum, accum_update = np.zeros_like(expected), np.zeros_like(expected)
    for _ in range(3):
        g = gradient(expected)
        accum = 0.95 * accum + 0.05 * g * g
        update = np.sqrt(accum_update + 1e-6) / np.sqrt(accum + 1e-6) * g
        accum_update = 0.95 * accum_update + 0.05 * update * update
        expected = expected - update
    np.testing.assert_allclose(w, expected, rtol=1e-4)


def test_ftrl():
    w, _, _ = train(tf.train.FtrlOptimizer(0.05, l1_regularization_strength=0.5,
                                           l2_regularization_strength=0.1), 3)
    expected = W0.astype(np.float64)
    accum, linear = np.full_like(expected, 0.1), np.zeros_like(expected)
    for _ in range(3):
        g = gradient(expected)
        new_accum = accum + g * g
        linear = linear + g - (np.sqrt(new_accum) - np.sqrt(accum)) / 0.05 * expected
        quadratic = np.sqrt(new_accum) / 0.05 + 2 * 0.1
        expected = np.where(np.abs(linear) > 0.5, (np.sign(linear) * 0.5 - linear) / quadratic,
                            0.0)
        accum = new_accum
    np.testing.assert_allclose(w, expected, rtol=1e-4, atol=1e-7)


def test_proximal_gradient_descent_and_adagrad():
    w, _, _ = train(tf.train.ProximalGradientDescentOptimizer(
        0.01, l1_regularization_strength=0.5, l2_regularization_strength=0.2), 3)
    expected = W0.astype(np.float64)
    for _ in range(3):
        prox = expected - 0.01 * gradient(expected)
        expected = np.sign(prox) * np.maximum(np.abs(prox) - 0.01 * 0.5, 0) / (1 + 0.01 * 0.2)
    np.testing.assert_allclose(w, expected, rtol=1e-4)
    w, _, _ = train(tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.5), 3)
    expected, accum = W0.astype(np.float64), np.full_like(W0, 0.1, np.float64)
    for _ in range(3):
        g = gradient(expected)
        accum = accum + g * g
        rate = 0.1 / np.sqrt(accum)
        prox = expected - rate * g
        expected = np.sign(prox) * np.maximum(np.abs(prox) - rate * 0.5, 0)
    np.testing.assert_allclose(w, expected, rtol=1e-4)


def test_learning_rates_may_be_tensors_variables_or_callables():
    rate = tf.placeholder(tf.float32, [], name="rate")
    w, loss = model()
    train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss)
    held = tf.Variable(0.01, name="held", trainable=False)
    train_held = tf.train.MomentumOptimizer(held, lambda: 0.0).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {rate: 0.01})
        sess.run(train_op, {rate: 0.0})
        expected = W0 - 0.01 * gradient(W0.astype(np.float64))
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-5)
        sess.run(train_held)
        np.testing.assert_allclose(sess.run(w), expected - 0.01 * gradient(expected), rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="learning_rate must be a scalar"):
        tf.train.GradientDescentOptimizer(tf.constant([0.1, 0.2])).minimize(loss)


def test_learning_rate_schedules_against_their_formulas():
    step = tf.placeholder(tf.int64, [], name="step")
    schedules = {
        "exp": tf.train.exponential_decay(0.1, step, 10, 0.96),
        "exp_stair": tf.train.exponential_decay(0.1, step, 10, 0.96, staircase=True),
        "natural": tf.train.natural_exp_decay(0.1, step, 10, 0.5),
        "inverse": tf.train.inverse_time_decay(0.1, step, 10, 0.5),
        "poly": tf.train.polynomial_decay(0.1, step, 20, end_learning_rate=0.01, power=2.0),
        "poly_cycle": tf.train.polynomial_decay(0.1, step, 20, 0.01, cycle=True),
        "cosine": tf.train.cosine_decay(0.1, step, 20, alpha=0.1),
        "piecewise": tf.train.piecewise_constant(step, [10, 20], [1.0, 0.5, 0.1]),
    }
    assert schedules["exp"].dtype == tf.float32
    assert schedules["exp"].op.name.startswith("ExponentialDecay")
    with tf.Session() as sess:
        for t in (0, 5, 10, 15, 20, 30):
            v = sess.run(schedules, {step: t})
            cycle_steps = 20 * max(1.0, np.ceil(t / 20))
            want = {
                "exp": 0.1 * 0.96 ** (t / 10), "exp_stair": 0.1 * 0.96 ** (t // 10),
                "natural": 0.1 * np.exp(-0.5 * t / 10), "inverse": 0.1 / (1 + 0.5 * t / 10),
                "poly": 0.09 * (1 - min(t, 20) / 20) ** 2 + 0.01,
                "poly_cycle": 0.09 * (1 - t / cycle_steps) + 0.01,
                "cosine": 0.1 * (0.9 * 0.5 * (1 + np.cos(np.pi * min(t, 20) / 20)) + 0.1),
                "piecewise": 1.0 if t <= 10 else 0.5 if t <= 20 else 0.1,
            }
            for name, expected in want.items():
                np.testing.assert_allclose(v[name], expected, rtol=1e-5,
                                           err_msg="%s at %d" % (name, t))
    with pytest.raises(ValueError, match="global_step is required for exponential_decay"):
        tf.train.exponential_decay(0.1, None, 10, 0.9)
    with pytest.raises(ValueError, match="boundaries should be 1 less than the length"):
        tf.train.piecewise_constant(step, [1, 2], [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="decay_steps must be > 0"):
        tf.train.cosine_decay(0.1, step, 0)


def test_a_decayed_learning_rate_trains_with_the_global_step():
    w, loss = model()
    step = tf.train.get_or_create_global_step()
    rate = tf.train.exponential_decay(0.01, step, 1, 0.5, staircase=True)
    train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train_op)
        expected = W0.astype(np.float64)
        for t in range(3):
            expected = expected - 0.01 * 0.5 ** t * gradient(expected)
        np.testing.assert_allclose(sess.run(w), expected, rtol=1e-5)
        assert sess.run(rate) == np.float32(0.01 * 0.5 ** 3)


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
    with pytest.raises(TypeError, match="beta1: troupe's optimizers take a Python number here"):
        tf.train.AdamOptimizer(0.1, beta1=tf.constant(0.9))
    with pytest.raises(ValueError, match="learning_rate_power 0.500000 needs to be negative"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength -1.000000 needs to be "
                                         "positive or zero"):
        tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=-1)
    with pytest.raises(ValueError, match="accum_name and linear_name are not supported"):
        tf.train.FtrlOptimizer(0.1, accum_name="a")
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
