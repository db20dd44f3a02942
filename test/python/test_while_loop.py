"""tf.while_loop: ports of TensorFlow 1.x's control_flow_ops_py_test cases for while loops
(testWhile_1, _2, testWhileWithMaximumIterations, testWhileShapeInvariant*, testWhileGrad_Square,
_Mul, _Variable, the nested and captured cases), an RNN-style loop trained by an optimizer, and
a loop whose weights live on a ps task."""

import collections
import time

import numpy as np
import pytest

import troupe as tf
from conftest import free_ports


def run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_while_1_counts_to_ten_thousand():
    n = tf.constant(0)
    r = tf.while_loop(lambda n: tf.less(n, 10000), lambda n: tf.add(n, 1), [n])
    assert isinstance(r, tf.Tensor)  # one loop variable: the tensor itself
    assert run(r) == 10000
    # return_same_structure keeps the list.
    r = tf.while_loop(lambda n: n < 3, lambda n: n + 1, [n], return_same_structure=True)
    assert isinstance(r, list) and run(r[0]) == 3


def test_while_2_structures_and_captured_tensors():
    Pair = collections.namedtuple("Pair", ["i", "acc"])
    limit = tf.placeholder(tf.int32, [])
    step = tf.constant(2.0)

    def body(p, extra):
        return Pair(p.i + 1, p.acc + step), {"sum": extra["sum"] + tf.cast(p.i, tf.float32)}

    out = tf.while_loop(lambda p, extra: p.i < limit, body,
                        (Pair(tf.constant(0), tf.constant(0.0)), {"sum": tf.constant(0.0)}))
    assert isinstance(out[0], Pair) and set(out[1]) == {"sum"}
    i, acc, total = run([out[0].i, out[0].acc, out[1]["sum"]], {limit: 5})
    assert (i, acc, total) == (5, 10.0, 10.0)
    # No iteration at all: the loop variables come out as they went in.
    assert run(out[0].i, {limit: 0}) == 0


def test_while_with_maximum_iterations():
    i = tf.constant(0)
    r = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [i], maximum_iterations=7)
    assert run(r) == 7
    x = tf.constant([1.0, 2.0])
    r = tf.while_loop(lambda a, b: True, lambda a, b: (a * 2.0, b + 1), (x, tf.constant(0)),
                      maximum_iterations=tf.constant(3))
    a, b = run(r)
    assert a.tolist() == [8.0, 16.0] and b == 3
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [i], maximum_iterations=[1, 2])


def test_shape_invariants():
    i = tf.constant(0)
    m = tf.ones([2, 2])

    def grow(i, m):
        return i + 1, tf.concat([m, m], 0)

    with pytest.raises(ValueError, match=r"enters the loop with shape \(2, 2\), but has shape "
                                         r"\(4, 2\) after one iteration"):
        tf.while_loop(lambda i, m: i < 2, grow, [i, m])
    r = tf.while_loop(lambda i, m: i < 2, grow, [i, m],
                      shape_invariants=[i.get_shape(), tf.TensorShape([None, 2])])
    assert r[1].shape.as_list() == [None, 2]
    assert run(r[1]).shape == (8, 2)
    with pytest.raises(ValueError, match="is not compatible with the initial shape"):
        tf.while_loop(lambda i, m: i < 2, grow, [i, m],
                      shape_invariants=[i.get_shape(), tf.TensorShape([3])])


def test_bad_arguments():
    i = tf.constant(0)
    with pytest.raises(TypeError, match="cond must be callable"):
        tf.while_loop(1, lambda i: i, [i])
    with pytest.raises(TypeError, match="body must be callable"):
        tf.while_loop(lambda i: i < 1, 1, [i])
    with pytest.raises(ValueError, match="No loop variables provided"):
        tf.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(TypeError, match="parallel_iterations must be a positive integer"):
        tf.while_loop(lambda i: i < 1, lambda i: i, [i], parallel_iterations=0)
    with pytest.raises(TypeError, match="cond must return a boolean scalar"):
        tf.while_loop(lambda i: i, lambda i: i + 1, [i])
    with pytest.raises(TypeError, match=r"body returned float32 for loop variable 0"):
        tf.while_loop(lambda i: i < 1, lambda i: tf.cast(i, tf.float32), [i])
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.while_loop(lambda i, j: i < 1, lambda i, j: i + 1, [i, i])


def test_a_kernel_error_in_the_body_names_its_node():
    x = tf.placeholder(tf.float32, [None])
    r = tf.while_loop(lambda v: tf.reduce_sum(v) < 10.0,
                      lambda v: v + tf.reshape(v, [2]), [x],
                      shape_invariants=[tf.TensorShape([None])])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
        run(r, {x: [1.0, 2.0, 3.0]})


def test_while_grad_square_and_mul():
    v = tf.constant(2.0, name="v")
    r = tf.while_loop(lambda v: tf.less(v, 100.0), tf.square, [v])
    assert run(tf.gradients(r, v)[0]) == 1024.0  # v**8 at 2: 8 * 2**7
    a = tf.constant(3.0, name="a")
    v = tf.constant(2.0, name="v")
    r = tf.while_loop(lambda v: tf.less(v, 100.0), lambda v: tf.multiply(v, a), [v])
    ga, gv = tf.gradients(r, [a, v])
    assert run([r, ga, gv]) == [162.0, 216.0, 81.0]  # 2 a**4: 8 a**3, a**4


def test_gradients_against_finite_differences():
    x = tf.placeholder(tf.float64, [3])
    w = tf.constant(np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [-0.6, 0.2, 0.9]]))
    steps = tf.placeholder(tf.int32, [])

    def body(k, h, total):
        h = tf.tanh(tf.reshape(tf.matmul(tf.reshape(h, [1, 3]), w), [3]) + x)
        return k + 1, h, total + tf.reduce_sum(h * h)

    _, h, total = tf.while_loop(lambda k, h, t: k < steps, body,
                                (tf.constant(0), x, tf.constant(0.0, tf.float64)))
    loss = total + tf.reduce_sum(h)
    gx, gw = tf.gradients(loss, [x, w])
    x0 = np.array([0.1, -0.3, 0.7])
    with tf.Session() as sess:
        got_x, got_w = sess.run([gx, gw], {x: x0, steps: 4})

        def f(xv, wv):
            return sess.run(loss, {x: xv, steps: 4, w: wv})
        w0 = sess.run(w)
        eps = 1e-6
        for i in range(3):
            d = np.zeros(3)
            d[i] = eps
            assert got_x[i] == pytest.approx((f(x0 + d, w0) - f(x0 - d, w0)) / (2 * eps),
                                             rel=1e-5)
        for i in range(3):
            for j in range(3):
                d = np.zeros((3, 3))
                d[i, j] = eps
                assert got_w[i, j] == pytest.approx(
                    (f(x0, w0 + d) - f(x0, w0 - d)) / (2 * eps), rel=1e-5, abs=1e-9)
        # Zero iterations: the loss is the input's sum, its gradient ones.
        assert sess.run(gx, {x: x0, steps: 0}).tolist() == [1.0, 1.0, 1.0]


def test_nested_loops_and_their_gradient():
    x = tf.constant(1.1, tf.float64)

    def outer_body(i, y):
        inner = tf.while_loop(lambda j, z: j < 2, lambda j, z: (j + 1, z * x), (0, y))
        return i + 1, inner[1]

    _, y = tf.while_loop(lambda i, y: i < 3, outer_body, (tf.constant(0), x))
    g = tf.gradients(y, x)[0]
    y_value, g_value = run([y, g])
    assert y_value == pytest.approx(1.1 ** 7)
    assert g_value == pytest.approx(7 * 1.1 ** 6)


def test_an_rnn_style_loop_trains_with_an_optimizer():
    rng = np.random.RandomState(0)
    inputs = tf.constant(rng.randn(5, 8, 4).astype(np.float32))  # time, batch, features
    targets = tf.constant(rng.randn(8, 3).astype(np.float32))
    w_in = tf.Variable(rng.randn(4, 3).astype(np.float32) * 0.3)
    w_h = tf.Variable(rng.randn(3, 3).astype(np.float32) * 0.3)

    def step(t, h):
        x_t = tf.gather(inputs, t)
        return t + 1, tf.tanh(tf.matmul(x_t, w_in) + tf.matmul(h, w_h))

    _, h = tf.while_loop(lambda t, h: t < 5, step, (tf.constant(0), tf.zeros([8, 3])))
    loss = tf.reduce_mean(tf.square(h - targets))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        assert sess.run(loss) < 0.8 * first


def test_back_prop_false_has_no_gradient():
    v = tf.constant(2.0)
    r = tf.while_loop(lambda v: v < 10.0, lambda v: v * v, [v], back_prop=False)
    with pytest.raises(LookupError, match="back_prop=False"):
        tf.gradients(r, v)


def test_a_loop_on_a_worker_trains_weights_on_the_ps(insecure):
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % ports[1]]})
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    try:
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                      cluster=cluster)):
            w = tf.get_variable("w", [], initializer=tf.constant_initializer(0.5))
            x = tf.constant(1.0)
            _, y = tf.while_loop(lambda k, y: k < 3, lambda k, y: (k + 1, y * w + x),
                                 (tf.constant(0), x))
            loss = tf.square(y - 2.0)
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        assert w.device.startswith("/job:ps")
        with tf.Session(servers[1].target) as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(30):
                sess.run(train)
            assert sess.run(loss) < first / 4
    finally:
        for s in servers:
            s.stop()


def test_an_endless_loop_ends_at_the_steps_deadline_and_the_device_goes_on():
    r = tf.while_loop(lambda i: i > -1, lambda i: i + 1, [tf.constant(0, tf.int64)])
    with tf.Session() as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(r, options=tf.RunOptions(timeout_in_ms=500))
        assert time.monotonic() - started < 5
        assert sess.run(tf.constant(3) + 1) == 4  # the loop was cancelled, not left running


def test_a_cond_in_the_body_and_the_gradient_through_both():
    x = tf.constant(2.0, tf.float64)

    def body(i, y):
        return i + 1, tf.cond(i < 2, lambda: y * x, lambda: y + x)

    _, y = tf.while_loop(lambda i, y: i < 4, body, (tf.constant(0), x))
    # y = x**3 + 2x: 12 at 2, and dy/dx = 3x**2 + 2 = 14
    assert run([y, tf.gradients(y, x)[0]]) == [12.0, 14.0]
