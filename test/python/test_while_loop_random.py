"""Random ops in a tf.while_loop's body and the loop's gradient: the gradient uses the draws
the forward run made (TensorFlow keeps them on its stacks), not new ones. troupe's While
records the draws of its body's random ops and the gradient's run of the body replays them,
in every iteration, inside a cond's branch too (control_flow_ops.py, _DrawReplay)."""

import numpy as np
import pytest

import troupe as tf


def test_the_gradient_uses_the_draws_the_loss_was_computed_with():
    tf.set_random_seed(1)
    x = tf.Variable(2.0)
    draws = tf.TensorArray(tf.float32, size=3)

    def body(i, v, draws):
        r = tf.random_uniform([])
        return i + 1, v + x * r, draws.write(i, r)

    _, v, draws = tf.while_loop(lambda i, v, d: i < 3, body, (0, tf.constant(0.0), draws))
    grad, = tf.gradients(v, [x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        seen = []
        for _ in range(4):
            value, r, g = sess.run([v, draws.stack(), grad])
            assert value == pytest.approx(2.0 * r.sum(), rel=1e-6)
            assert g == pytest.approx(r.sum(), rel=1e-6)  # d(sum x*r)/dx, with these r
            seen.append(r)
        assert not np.allclose(seen[0], seen[1])  # each step draws anew


def test_dropout_in_a_cond_branch_taken_in_some_iterations():
    # Dropout of ones x on even iterations, x itself on odd ones: v = sum of the masks / keep,
    # and dv/dx is the same sum, elementwise, when the gradient sees the forward's masks.
    tf.set_random_seed(7)
    x = tf.Variable(np.ones(40, np.float32))
    use_dropout = tf.placeholder(tf.bool, [])

    def body(i, v):
        even = tf.logical_and(use_dropout, tf.equal(i % 2, 0))
        r = tf.cond(even, lambda: tf.nn.dropout(x, keep_prob=0.5), lambda: x)
        return i + 1, v + r

    _, v = tf.while_loop(lambda i, v: i < 5, body, (0, tf.zeros([40])))
    grad, = tf.gradients(v, [x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for flag in (True, False, True):
            value, g = sess.run([v, grad], {use_dropout: flag})
            np.testing.assert_allclose(g, value)
            if flag:
                assert len(np.unique(value)) > 1  # some units dropped in some iterations
            else:
                np.testing.assert_allclose(value, 5.0)


def test_an_rnn_with_input_dropout_against_numpy():
    # h' = tanh(w * h + dropout(x_t)): the gradient in w, computed in numpy with the masks the
    # loop drew (written to a TensorArray), equals the loop's.
    tf.set_random_seed(3)
    steps, units = 6, 8
    xs = np.random.RandomState(0).randn(steps, units).astype(np.float32)
    w = tf.Variable(0.7)
    masks = tf.TensorArray(tf.float32, size=steps)

    def body(t, h, masks):
        kept = tf.nn.dropout(tf.ones([units]), keep_prob=0.6)
        h = tf.tanh(w * h + tf.constant(xs)[t] * kept)
        return t + 1, h, masks.write(t, kept)

    _, h, masks = tf.while_loop(lambda t, h, m: t < steps, body,
                                (0, tf.zeros([units]), masks))
    loss = tf.reduce_sum(h * h)
    grad, = tf.gradients(loss, [w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, m = sess.run([grad, masks.stack()])
    hs = [np.zeros(units, np.float64)]
    for t in range(steps):
        hs.append(np.tanh(0.7 * hs[-1] + xs[t] * m[t]))
    dh = 2 * hs[-1]
    dw = 0.0
    for t in reversed(range(steps)):
        dpre = dh * (1 - hs[t + 1] ** 2)
        dw += float(np.sum(dpre * hs[t]))
        dh = dpre * 0.7
    assert got == pytest.approx(dw, rel=1e-4)


def test_sampled_ids_reach_the_embedding_gradient():
    # Multinomial and a candidate sampler (three outputs) drawn in the body: the rows the
    # gradient reaches are the rows the forward run used.
    tf.set_random_seed(11)
    table = tf.Variable(np.zeros((6, 2), np.float32))
    taken = tf.TensorArray(tf.int64, size=4)

    def body(i, v, taken):
        ids = tf.reshape(tf.multinomial(tf.zeros([1, 6]), 3), [-1])
        sampled, _, _ = tf.nn.uniform_candidate_sampler(
            tf.zeros([1, 1], tf.int64), 1, 2, True, 6)
        both = tf.concat([ids, sampled], 0)
        return i + 1, v + tf.reduce_sum(tf.gather(table, both)), taken.write(i, both)

    _, v, taken = tf.while_loop(lambda i, v, t: i < 4, body, (0, tf.constant(0.0), taken))
    grad, = tf.gradients(v, [table])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            g, ids = sess.run([tf.convert_to_tensor(grad), taken.stack()])
            counts = np.bincount(ids.ravel(), minlength=6).astype(np.float32)
            np.testing.assert_allclose(g, np.stack([counts, counts], 1))


def test_draws_whose_shape_changes_from_one_iteration_to_the_next():
    # v += x * sum(r) with r of i + 1 values: dv/dx is the sum of every draw, which the loop
    # also adds up in `total`.
    tf.set_random_seed(5)
    x = tf.Variable(1.5)
    size = tf.placeholder(tf.int32, [])

    def body(i, v, total):
        r = tf.reduce_sum(tf.random_uniform([i + 1], name="noise"))
        return i + 1, v + x * r, total + r

    _, v, total = tf.while_loop(lambda i, v, t: i < size, body,
                                (0, tf.constant(0.0), tf.constant(0.0)))
    grad, = tf.gradients(v, [x])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for n in (4, 1, 0):
            value, t, g = sess.run([v, total, grad], {size: n})
            assert value == pytest.approx(1.5 * t, rel=1e-5)
            assert g == pytest.approx(t, rel=1e-5)


def test_draws_in_a_nested_loop_are_refused_by_the_outer_gradient():
    x = tf.Variable(1.0)

    def inner(j, u):
        return j + 1, u + x * tf.random_uniform([])

    def outer(i, v):
        _, u = tf.while_loop(lambda j, u: j < 2, inner, (0, v))
        return i + 1, u

    _, v = tf.while_loop(lambda i, v: i < 2, outer, (0, tf.constant(0.0)), name="outer")
    with pytest.raises(NotImplementedError, match="outer.*nested"):
        tf.gradients(v, [x])


def test_draws_in_a_loop_without_gradient_nested_in_the_body_are_refused_too():
    x = tf.Variable(1.0)

    def outer(i, v):
        _, r = tf.while_loop(lambda j, r: j < 1, lambda j, r: (j + 1, r + tf.random_uniform([])),
                             (0, tf.constant(0.0)), back_prop=False)
        return i + 1, v + x * r

    _, v = tf.while_loop(lambda i, v: i < 3, outer, (0, tf.constant(0.0)), name="outer")
    with pytest.raises(NotImplementedError, match="outer.*nested in its body.*RandomUniform"):
        tf.gradients(v, [x])


def test_a_random_condition_is_refused_by_the_gradient():
    x = tf.Variable(1.0)
    _, v = tf.while_loop(lambda i, v: tf.logical_and(i < 50, tf.random_uniform([]) < 0.7),
                         lambda i, v: (i + 1, v + x), (0, tf.constant(0.0)), name="coin")
    with pytest.raises(NotImplementedError, match="coin.*its condition makes the random op"):
        tf.gradients(v, [x])
    with tf.Session() as sess:  # the loop itself runs
        sess.run(tf.global_variables_initializer())
        assert 0.0 <= sess.run(v) <= 50.0
