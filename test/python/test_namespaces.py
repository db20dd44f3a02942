"""The namespaces of TensorFlow 1.13-1.15 (tf.math, tf.random, tf.io, tf.initializers,
tf.debugging, tf.strings): importable as modules, each name the top-level function."""

import numpy as np

import troupe as tf


def test_namespaces_are_modules_of_the_top_level_functions():
    import troupe.io
    import troupe.math
    from troupe.random import categorical
    assert troupe.math.reduce_sum is tf.reduce_sum and tf.math.atan2 is tf.atan2
    assert tf.math.top_k is tf.nn.top_k and tf.math.softplus is tf.nn.softplus
    assert troupe.io.parse_example is tf.parse_example
    assert tf.io.TFRecordWriter is tf.python_io.TFRecordWriter
    assert tf.initializers.glorot_uniform is tf.glorot_uniform_initializer
    assert tf.initializers.global_variables is tf.global_variables_initializer
    assert tf.debugging.assert_equal is tf.assert_equal
    assert tf.random.normal is tf.random_normal and tf.random.shuffle is tf.random_shuffle
    assert tf.strings.to_number is tf.string_to_number
    samples = categorical(tf.constant([[-50.0, 0.0], [0.0, -50.0]]), 4, dtype=tf.int32, seed=1)
    assert samples.dtype == tf.int32
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(samples), [[1] * 4, [0] * 4])


def test_he_and_lecun_initializers_log_sigmoid_and_the_new_asserts():
    with tf.Graph().as_default():
        w = tf.get_variable("w", [400, 300], initializer=tf.initializers.he_uniform(seed=1))
        v = tf.get_variable("v", [400, 300], initializer=tf.initializers.lecun_normal(seed=2))
        x = tf.constant([-100.0, 0.0, 3.0])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_w, got_v, got_log = sess.run([w, v, tf.math.log_sigmoid(x)])
    assert abs(got_w.var() - 2.0 / 400) < 0.1 * 2.0 / 400
    assert abs(got_v.var() - 1.0 / 400) < 0.1 * 1.0 / 400
    np.testing.assert_allclose(got_log, -np.logaddexp(0, -np.array([-100.0, 0.0, 3.0])),
                               rtol=1e-6)
    import pytest
    with pytest.raises(TypeError, match="to be of integer type"):
        tf.assert_integer(tf.constant(1.0))
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tf.assert_scalar(tf.constant([1, 2]))
    assert tf.debugging.assert_scalar is tf.assert_scalar


def test_zero_fraction():
    with tf.Session() as sess:
        assert sess.run(tf.nn.zero_fraction([0.0, 1.0, 0.0, 3.0])) == 0.5
        assert sess.run(tf.nn.zero_fraction(tf.zeros([2, 3], tf.int32))) == 1.0


def test_compat_v1_has_the_namespaces_too():
    assert tf.compat.v1.math.reduce_sum is tf.reduce_sum
    assert tf.compat.v1.random.normal is tf.random_normal
    assert not hasattr(tf.strings, "split")  # TF 1.13's differs from string_split
