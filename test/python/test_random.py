"""Random ops and TensorFlow 1.x's seed rules: tf.set_random_seed with and without op seeds,
the same numbers from the same program in another process, new numbers on every run,
initializers drawn by ops when they run, and bad arguments."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import troupe as tf


def test_graph_and_op_seeds_make_runs_repeatable():
    def program():
        tf.reset_default_graph()
        tf.set_random_seed(1234)
        a = tf.random_uniform([3])
        b = tf.random_normal([3])
        with tf.Session() as sess:
            return sess.run([a, b])
    first, second = program(), program()
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])  # different ops, different streams


def test_each_run_draws_new_numbers_and_op_seeds_alone_repeat():
    a = tf.random_uniform([5], seed=7)
    with tf.Session() as sess:
        one, two = sess.run(a), sess.run(a)
    assert not np.array_equal(one, two)
    tf.reset_default_graph()
    b = tf.random_uniform([5], seed=7)
    with tf.Session() as sess:
        np.testing.assert_array_equal(one, sess.run(b))
    tf.reset_default_graph()
    unseeded = tf.random_uniform([5])
    with tf.Session() as s1, tf.Session() as s2:
        assert not np.array_equal(s1.run(unseeded), s2.run(unseeded))


def test_another_process_draws_the_same_numbers():
    program = textwrap.dedent("""\
        import troupe as tf
        tf.set_random_seed(5)
        w = tf.get_variable("w", [4], initializer=tf.truncated_normal_initializer(stddev=0.1))
        with tf.Session() as sess:
            sess.run(w.initializer)
            print(list(sess.run(w)))
        """)
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           timeout=60) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_distributions_shapes_and_dtypes():
    tf.set_random_seed(3)
    u = tf.random_uniform([1000], minval=-2.0, maxval=4.0, dtype=tf.float64)
    n = tf.random_normal([2, 500], mean=10.0, stddev=0.5)
    t = tf.truncated_normal([10000], stddev=3.0)
    i = tf.random_uniform([1000], minval=5, maxval=8, dtype=tf.int32)
    s = tf.random_shuffle(tf.range(10) if hasattr(tf, "range") else tf.constant(list(range(10))))
    m = tf.multinomial(tf.log([[0.5, 0.5]]), 4)
    assert u.dtype == tf.float64 and n.shape.as_list() == [2, 500]
    with tf.Session() as sess:
        uv, nv, tv, iv, sv, mv = sess.run([u, n, t, i, s, m])
    assert uv.min() >= -2.0 and uv.max() < 4.0
    assert abs(nv.mean() - 10.0) < 0.1
    assert np.abs(tv).max() < 6.0
    assert set(iv) == {5, 6, 7}
    assert sorted(sv) == list(range(10))
    assert mv.shape == (1, 4) and mv.dtype == np.int64


def test_initializers_run_as_ops_and_draw_again_when_rerun():
    tf.set_random_seed(9)
    w = tf.get_variable("w", [100, 50], initializer=tf.glorot_uniform_initializer())
    v = tf.get_variable("v", [300, 100],
                        initializer=tf.variance_scaling_initializer(2.0, "fan_in", "normal"))
    assert "w/Initializer" in [op.name for op in tf.get_default_graph().get_operations()
                               if op.name.startswith("w/Initializer")][0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(w)
        limit = np.sqrt(6.0 / 150)
        assert np.abs(first).max() <= limit + 1e-6
        assert abs(sess.run(v).std() - np.sqrt(2.0 / 300)) < 0.01
        sess.run(w.initializer)
        assert not np.array_equal(first, sess.run(w))


def test_bad_arguments():
    with pytest.raises(ValueError, match="maxval"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="float32 or float64"):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="negative"):
        tf.random_uniform([2, -1])
    with pytest.raises(TypeError, match="seed"):
        tf.random_uniform([2], seed="x")
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan_sideways")
    assert tf.get_seed(None) == (None, None)
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2 ** 31 - 1)  # (0, 0) would mean "random"
