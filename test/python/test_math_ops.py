"""The math functions beyond the basics: floordiv/floormod (and `//`, `%`), the logical ops
(and `&`, `|`, `^`, `~`), erf, the activations (relu6, elu, selu, softplus, softsign,
leaky_relu), batched matmul, clip_by_norm, global_norm, clip_by_global_norm,
reduce_logsumexp and tensordot: values against numpy and TensorFlow's formulas, gradients
against finite differences (float64), and their errors."""

import math

import numpy as np
import pytest

import troupe as tf

from conftest import check_gradient

RNG = np.random.default_rng(3)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_floor_division_and_remainder_as_python():
    a = np.array([7, -7, 7, -7, 0, 5], np.int32)
    b = np.array([2, 2, -2, -2, 3, 1], np.int32)
    x, y = tf.constant(a), tf.constant(b)
    quotient, remainder = run([x // y, x % y])
    np.testing.assert_array_equal(quotient, a // b)
    np.testing.assert_array_equal(remainder, a % b)
    f = RNG.normal(size=8) * 10
    g = RNG.normal(size=8)
    np.testing.assert_allclose(run(tf.floordiv(f, g)), np.floor_divide(f, g))
    np.testing.assert_allclose(run(tf.floormod(f, g)), np.mod(f, g), atol=1e-12)
    np.testing.assert_array_equal(run(7 // tf.constant(2)), 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="integer division by zero"):
        run(tf.constant(1) // tf.constant(0))


def test_logical_ops_and_their_operators():
    p = tf.constant([True, True, False, False])
    q = tf.constant([True, False, True, False])
    values = run([p & q, p | q, p ^ q, ~p, tf.logical_and(p, [True] * 4)])
    np.testing.assert_array_equal(values[0], [True, False, False, False])
    np.testing.assert_array_equal(values[1], [True, True, True, False])
    np.testing.assert_array_equal(values[2], [False, True, True, False])
    np.testing.assert_array_equal(values[3], [False, False, True, True])
    np.testing.assert_array_equal(values[4], [True, True, False, False])
    with pytest.raises(TypeError, match="bool tensors"):
        ~tf.constant([1, 2])


def test_activations_and_erf_against_their_formulas():
    x = np.linspace(-8, 8, 33)
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    expected = {
        "relu6": np.clip(x, 0, 6),
        "elu": np.where(x > 0, x, np.expm1(x)),
        "selu": scale * np.where(x > 0, x, alpha * np.expm1(x)),
        "softplus": np.log1p(np.exp(x)),
        "softsign": x / (1 + np.abs(x)),
        "leaky_relu": np.where(x > 0, x, 0.2 * x),
    }
    for name, want in expected.items():
        np.testing.assert_allclose(run(getattr(tf.nn, name)(x)), want, rtol=1e-12, atol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(run(tf.erf(x)), [math.erf(v) for v in x], rtol=1e-12)
    big = run(tf.nn.softplus(np.float32([100.0, -100.0])))
    np.testing.assert_allclose(big, [100.0, 0.0], atol=1e-30)


def test_batched_matmul_and_tensordot_against_numpy():
    a = RNG.normal(size=(2, 3, 4, 5))
    b = RNG.normal(size=(2, 3, 5, 2))
    np.testing.assert_allclose(run(tf.matmul(a, b)), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(run(tf.matmul(b, a, transpose_a=True, transpose_b=True)),
                               np.matmul(np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2)),
                               rtol=1e-12)
    np.testing.assert_allclose(run(tf.constant(a) @ b), np.matmul(a, b), rtol=1e-12)
    x = RNG.normal(size=(3, 4, 5))
    y = RNG.normal(size=(5, 4, 2))
    np.testing.assert_allclose(run(tf.tensordot(x, y, [[1, 2], [1, 0]])),
                               np.tensordot(x, y, [[1, 2], [1, 0]]), rtol=1e-12)
    np.testing.assert_allclose(run(tf.tensordot(x, RNG.normal(size=(5, 6)), 1)).shape, (3, 4, 6))
    unknown = tf.placeholder(tf.float64, [None, 5])
    dotted = tf.tensordot(unknown, np.ones((5, 2)), 1)
    assert run(dotted, {unknown: np.ones((3, 5))}).shape == (3, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch dimensions must be equal"):
        tf.matmul(a, RNG.normal(size=(2, 4, 5, 2)))
    with pytest.raises(ValueError, match="Different number of contraction axes"):
        tf.tensordot(x, y, [[1], [0, 1]])


def test_clipping_and_norms_as_tensorflow():
    t1, t2 = np.array([3.0, 4.0]), np.array([[0.0, 12.0]])
    np.testing.assert_allclose(run(tf.global_norm([t1, None, t2])), 13.0)
    clipped, norm = run(tf.clip_by_global_norm([t1, t2], 6.5))
    np.testing.assert_allclose(norm, 13.0)
    np.testing.assert_allclose(clipped[0], t1 / 2)
    np.testing.assert_allclose(clipped[1], t2 / 2)
    unchanged, _ = run(tf.clip_by_global_norm([t1], 100.0))
    np.testing.assert_allclose(unchanged[0], t1)
    np.testing.assert_allclose(run(tf.clip_by_norm(t1, 1.0)), [0.6, 0.8])
    np.testing.assert_allclose(run(tf.clip_by_norm(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0,
                                                   axes=[1])), [[0.6, 0.8], [0.3, 0.4]])
    np.testing.assert_allclose(run(tf.clip_by_norm(np.zeros(3), 1.0)), np.zeros(3))
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        tf.global_norm(tf.constant(t1))


def test_reduce_logsumexp_is_stable():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [0.0, np.log(3.0)]])
    np.testing.assert_allclose(run(tf.reduce_logsumexp(x, 1)),
                               [1000 + np.log(2), -1000 + np.log(2), np.log(4.0)])
    assert run(tf.reduce_logsumexp(x, 1, keepdims=True)).shape == (3, 1)
    np.testing.assert_allclose(run(tf.reduce_logsumexp(np.array([1.0, 2.0]))),
                               np.log(np.exp(1) + np.exp(2)))
    np.testing.assert_array_equal(run(tf.reduce_logsumexp(np.array([-np.inf, -np.inf]))),
                                  -np.inf)


W = RNG.normal(size=(3, 4))


@pytest.mark.parametrize("name, build, shape", [
    ("relu6", lambda x: tf.reduce_sum(tf.nn.relu6(x * 4.0) * W[:2, :3]), (2, 3)),
    ("elu", lambda x: tf.reduce_sum(tf.square(tf.nn.elu(x))), (3, 3)),
    ("selu", lambda x: tf.reduce_sum(tf.square(tf.nn.selu(x))), (3, 3)),
    ("softplus", lambda x: tf.reduce_sum(tf.nn.softplus(x) * W[:2, :3]), (2, 3)),
    ("softsign", lambda x: tf.reduce_sum(tf.square(tf.nn.softsign(x))), (2, 3)),
    ("leaky_relu", lambda x: tf.reduce_sum(tf.nn.leaky_relu(x) * W[:2, :3]), (2, 3)),
    ("erf", lambda x: tf.reduce_sum(tf.erf(x) * W[:2, :3]), (2, 3)),
    ("floormod", lambda x: tf.reduce_sum(tf.floormod(x, 0.7) * W[:2, :3]), (2, 3)),
    ("batch_matmul", lambda x: tf.reduce_sum(tf.square(tf.matmul(x, np.ones((2, 4, 3))))),
     (2, 3, 4)),
    ("batch_matmul_adjoint", lambda x: tf.reduce_sum(tf.square(
        tf.matmul(np.ones((2, 4, 3)), x, adjoint_a=True, adjoint_b=True))), (2, 5, 4)),
    ("tensordot", lambda x: tf.reduce_sum(tf.square(tf.tensordot(x, W, [[1], [0]]))), (2, 3)),
    ("logsumexp", lambda x: tf.reduce_sum(tf.reduce_logsumexp(x, 1) * [1.0, 2.0]), (2, 3)),
    ("clip_by_norm", lambda x: tf.reduce_sum(tf.clip_by_norm(x, 0.5) * W[:2, :3]), (2, 3)),
    ("global_norm", lambda x: tf.global_norm([x, x * 2.0]), (2, 3)),
])
def test_gradient_matches_finite_differences(name, build, shape):
    check_gradient(build, shape)


def test_cumulative_sums_products_and_top_k():
    x = RNG.normal(size=(2, 4, 3))
    np.testing.assert_allclose(run(tf.cumsum(x, 1)), np.cumsum(x, 1))
    np.testing.assert_allclose(run(tf.cumprod(x, -1)), np.cumprod(x, -1))
    np.testing.assert_allclose(run(tf.cumsum([1.0, 2.0, 3.0], exclusive=True)), [0, 1, 3])
    np.testing.assert_allclose(run(tf.cumsum([1.0, 2.0, 3.0], reverse=True)), [6, 5, 3])
    np.testing.assert_allclose(run(tf.cumprod([2.0, 3.0, 4.0], exclusive=True, reverse=True)),
                               [12, 4, 1])
    values, indices = run(tf.nn.top_k([[1.0, 5.0, 3.0, 5.0], [0.0, -1.0, 2.0, 1.0]], k=2))
    np.testing.assert_array_equal(values, [[5, 5], [2, 1]])
    np.testing.assert_array_equal(indices, [[1, 3], [2, 3]])
    assert indices.dtype == np.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k=5 columns"):
        tf.nn.top_k(np.zeros((2, 4)), k=5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.cumsum(np.zeros(3), axis=1)


@pytest.mark.parametrize("name, build, shape", [
    ("cumsum", lambda x: tf.reduce_sum(tf.cumsum(x, 1, exclusive=True) * W[:2, :3]), (2, 3)),
    ("cumsum_reverse", lambda x: tf.reduce_sum(tf.square(tf.cumsum(x, 0, reverse=True))),
     (3, 2)),
    ("cumprod", lambda x: tf.reduce_sum(tf.cumprod(x + 3.0, 1) * W[:2, :3]), (2, 3)),
    ("top_k", lambda x: tf.reduce_sum(tf.square(tf.nn.top_k(x, 2).values) * [1.0, 3.0]),
     (3, 4)),
])
def test_scan_and_top_k_gradients(name, build, shape):
    check_gradient(build, shape)


def test_reduce_prod_and_its_gradient_with_zeros():
    x = RNG.normal(size=(2, 3, 4))
    np.testing.assert_allclose(run(tf.reduce_prod(x, [0, 2])), np.prod(x, (0, 2)))
    np.testing.assert_allclose(run(tf.reduce_prod(x, 1, keepdims=True)),
                               np.prod(x, 1, keepdims=True))
    np.testing.assert_array_equal(run(tf.reduce_prod(np.array([[2, 3], [4, 0]], np.int32), 1)),
                                  [6, 0])
    assert run(tf.reduce_prod(np.zeros((0,)))) == 1.0
    # The gradient is exact where an element is 0 (the product of the others).
    v = tf.constant([[2.0, 0.0, 3.0]])
    (grad,) = tf.gradients(tf.reduce_prod(v, 1), [v])
    np.testing.assert_allclose(run(grad), [[0.0, 6.0, 0.0]])


@pytest.mark.parametrize("name, build, shape", [
    ("prod_all", lambda x: tf.reduce_prod(x), (2, 3)),
    ("prod_axes", lambda x: tf.reduce_sum(tf.reduce_prod(x, [0, 2]) * [1.0, -2.0, 0.5]),
     (2, 3, 2)),
])
def test_reduce_prod_gradient(name, build, shape):
    check_gradient(build, shape)


# TensorFlow 1.x's qr_op_test (shapes, reconstruction, orthonormal Q, triangular R, batches,
# full_matrices) and init_ops_test's OrthogonalInitializerTest.
def test_qr_decomposes_batches_of_matrices():
    rng = np.random.RandomState(4)
    for shape in [(5, 3), (3, 5), (2, 4, 4), (1, 0, 3)]:
        a = rng.randn(*shape)
        for full in (False, True):
            q, r = tf.qr(a, full_matrices=full)
            m, n = shape[-2:]
            k = m if full else min(m, n)
            assert q.shape.as_list() == list(shape[:-2]) + [m, k]
            assert r.shape.as_list() == list(shape[:-2]) + [k, n]
            with tf.Session() as sess:
                qv, rv = sess.run([q, r])
            np.testing.assert_allclose(qv @ rv, a, atol=1e-12)
            np.testing.assert_allclose(np.swapaxes(qv, -1, -2) @ qv,
                                       np.broadcast_to(np.eye(k), qv.shape[:-2] + (k, k)),
                                       atol=1e-12)
            np.testing.assert_array_equal(np.triu(rv), rv)
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 2"):
        tf.qr(np.float32([1, 2]))


def test_orthogonal_initializer():
    def values(shape, **kwargs):
        graph = tf.Graph()
        with graph.as_default():
            v = tf.get_variable("v", shape, dtype=kwargs.get("dtype", tf.float32),
                                initializer=tf.orthogonal_initializer(**kwargs))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run(v)

    # Same seed, same values; another seed, others.
    np.testing.assert_array_equal(values([10, 10], seed=1), values([10, 10], seed=1))
    assert not np.allclose(values([10, 10], seed=1), values([10, 10], seed=2))
    for shape in [(10, 10), (10, 9, 8), (100, 20), (20, 100)]:
        t = values(list(shape), seed=3, gain=3.14, dtype=tf.float64)
        flat = t.reshape(-1, shape[-1])
        small = min(flat.shape)
        product = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
        np.testing.assert_allclose(product, 3.14 ** 2 * np.eye(small), atol=1e-9)
    with pytest.raises(ValueError, match="Expected floating point type"):
        tf.orthogonal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        values([5])


def test_division_follows_python_3_as_tensorflow():
    """TensorFlow 1.x's math_ops_test DivAndModTest: / of integers is true division in
    float64, tf.div of integers floor division, of floats true division."""
    ints = tf.constant([7, -7, 8])
    twos = tf.constant([2, 2, 3])
    quotient = ints / twos
    assert quotient.dtype == tf.float64
    assert tf.truediv(tf.constant([7], tf.int64), 2).dtype == tf.float64
    assert tf.divide(ints, twos).dtype == tf.float64
    floats = tf.constant([7.0, -7.0]) / 2.0
    assert floats.dtype == tf.float32
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(quotient), [3.5, -3.5, 8 / 3])
        np.testing.assert_allclose(sess.run(7 / tf.constant(2)), 3.5)
        np.testing.assert_array_equal(sess.run(tf.div(ints, twos)), [3, -4, 2])
        np.testing.assert_allclose(sess.run(tf.div(tf.constant([7.0, -7.0]), 2.0)), [3.5, -3.5])
        np.testing.assert_allclose(sess.run(floats), [3.5, -3.5])
        np.testing.assert_array_equal(sess.run(ints // twos), [3, -4, 2])


def test_division_of_variables_and_mismatched_dtypes():
    v, w = tf.Variable(7), tf.Variable(2)
    quotients = [tf.divide(v, 2), v / w, tf.constant([7, 8]) / w]
    with pytest.raises(TypeError, match="x and y must have the same dtype"):
        tf.constant(7) / tf.constant(2.0)
    with pytest.raises(TypeError, match="expected int32"):
        tf.constant(7) / 2.5
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(quotients)
    assert got[0] == 3.5 and got[1] == 3.5
    np.testing.assert_allclose(got[2], [3.5, 4.0])


def test_softmax_log_softmax_and_cross_entropy_along_any_axis():
    x = np.random.RandomState(0).randn(2, 3, 4)
    e = np.exp(x)
    labels = np.eye(3)[[0, 2]].reshape(2, 3, 1) * np.ones((1, 1, 4))
    with tf.Session() as sess:
        for axis in (0, 1, -1, 2, -3):
            np.testing.assert_allclose(sess.run(tf.nn.softmax(x, axis=axis)),
                                       e / e.sum(axis, keepdims=True), rtol=1e-12)
            np.testing.assert_allclose(sess.run(tf.nn.log_softmax(x, axis=axis)),
                                       np.log(e / e.sum(axis, keepdims=True)), rtol=1e-12)
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x, dim=1)
        assert loss.shape.as_list() == [2, 4]
        np.testing.assert_allclose(
            sess.run(loss), -(labels * np.log(e / e.sum(1, keepdims=True))).sum(1), rtol=1e-12)
    with pytest.raises(ValueError, match="axis 3 is out of range for logits of rank 3"):
        tf.nn.softmax(x, axis=3)
    with pytest.raises(ValueError, match="needs logits of known rank"):
        tf.nn.softmax(tf.placeholder(tf.float32), axis=0)


def test_compute_gradients_and_minimize_with_grad_loss():
    w = tf.Variable([1.0, 2.0])
    loss = tf.reduce_sum(w * w)
    opt = tf.train.GradientDescentOptimizer(0.1)
    ((grad, var),) = opt.compute_gradients(loss, grad_loss=tf.constant(3.0))
    assert var is w
    step = opt.minimize(loss, grad_loss=tf.constant(0.5))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(grad), [6.0, 12.0])
        sess.run(step)
        np.testing.assert_allclose(sess.run(w), [0.9, 1.8])
