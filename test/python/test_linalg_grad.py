"""tf.matrix_triangular_solve (tf.linalg.triangular_solve) and the gradients of it and of
tf.qr: values against numpy, gradients against finite differences in float64, as TensorFlow
1.x's linalg_grad_test checks them, and the errors."""

import numpy as np
import pytest

import troupe as tf


def _numeric_gradient(f, x, eps=1e-6):
    """d sum(f(x) * weights) / dx by central differences (f maps numpy to numpy)."""
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def _check_gradient(build, x0, rtol=1e-5, atol=1e-6):
    """build(x) -> a scalar tensor; its gradient at x0 against central differences."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        y = build(x)
        (g,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            analytic = sess.run(g, {x: x0})
            numeric = _numeric_gradient(lambda v: sess.run(y, {x: v}), x0)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)


RNG = np.random.RandomState(7)
WEIGHTS = RNG.uniform(-1, 1, (2, 4, 3))


def _triangle(lower, shape=(2, 4, 4)):
    a = RNG.uniform(-1, 1, shape) + 4 * np.eye(shape[-1])  # well conditioned
    return np.tril(a) if lower else np.triu(a)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_triangular_solve_values_and_gradients(lower, adjoint):
    a = _triangle(lower)
    b = RNG.uniform(-1, 1, (2, 4, 3))
    # Only the triangle is read: junk in the other half changes nothing.
    junk = a + (np.triu(np.ones((4, 4)), 1) if lower else np.tril(np.ones((4, 4)), -1))
    with tf.Session() as sess:
        x = sess.run(tf.matrix_triangular_solve(junk, b, lower=lower, adjoint=adjoint))
    system = np.swapaxes(a, -1, -2) if adjoint else a
    np.testing.assert_allclose(x, np.linalg.solve(system, b), rtol=1e-10)

    def through_a(m):
        t = tf.linalg.band_part(m, -1, 0) if lower else tf.linalg.band_part(m, 0, -1)
        return tf.reduce_sum(tf.linalg.triangular_solve(t, b, lower=lower, adjoint=adjoint) *
                             WEIGHTS)
    _check_gradient(through_a, a)
    _check_gradient(lambda v: tf.reduce_sum(tf.matrix_triangular_solve(
        a, v, lower=lower, adjoint=adjoint) * WEIGHTS), b)


@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 3), (4, 4)])
def test_qr_gradient(shape):
    a = RNG.uniform(-1, 1, shape)
    q_weights = RNG.uniform(-1, 1, (shape[:-1] + (min(shape[-2:]),)))
    r_weights = RNG.uniform(-1, 1, (shape[:-2] + (min(shape[-2:]), shape[-1])))

    def loss(x):
        q, r = tf.qr(x)
        return tf.reduce_sum(q * q_weights) + tf.reduce_sum(r * r_weights)
    _check_gradient(loss, a, rtol=1e-4, atol=1e-6)
    _check_gradient(lambda x: tf.reduce_sum(tf.qr(x).r * r_weights), a, rtol=1e-4, atol=1e-6)


def test_errors():
    singular = np.array([[1.0, 0.0], [2.0, 0.0]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix is not invertible"):
            sess.run(tf.matrix_triangular_solve(singular, np.ones((2, 1))))
    with pytest.raises(ValueError, match="matrix must be square"):
        tf.matrix_triangular_solve(tf.ones([2, 3]), tf.ones([2, 1]))
    with pytest.raises(ValueError, match="the same number of rows"):
        tf.matrix_triangular_solve(tf.ones([2, 2]), tf.ones([3, 1]))
    with pytest.raises(NotImplementedError, match="QrGrad not implemented when ncols > nrows"):
        tall = tf.ones([4, 2])
        tf.gradients(tf.reduce_sum(tf.qr(tall, full_matrices=True).r), [tall])
