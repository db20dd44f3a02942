"""Checks that fail a step: ports of TensorFlow 1.x's check_ops_test (assert_equal, _less,
_positive, ... with their messages; assert_rank and assert_type statically), numerics_test
(check_numerics, verify_tensor_all_finite, add_check_numerics_ops, the gradient's check) and
tf.tuple."""

import numpy as np
import pytest

import troupe as tf


def run_checked(check, tensor, feed=None):
    with tf.control_dependencies([check]):
        out = tf.identity(tensor)
    with tf.Session() as sess:
        return sess.run(out, feed)


def test_assert_equal_and_friends_pass_and_fail_with_tensorflows_message():
    x = tf.placeholder(tf.int32, shape=[None])
    assert run_checked(tf.assert_equal(x, [1, 2]), x, {x: [1, 2]}).tolist() == [1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"\[wrong\] \[Condition x == y did not hold element-wise:\] "
                             r"\[x \(Placeholder:0\) = \] \[\[1, 3\]\]"):
        run_checked(tf.assert_equal(x, [1, 2], message="wrong"), x, {x: [1, 3]})
    for check, good, bad in [(tf.assert_less, [0, 1], [5, 1]),
                             (tf.assert_less_equal, [2, 2], [3, 2]),
                             (tf.assert_greater, [3, 4], [2, 4]),
                             (tf.assert_greater_equal, [2, 2], [1, 2]),
                             (tf.assert_none_equal, [5, 5], [2, 5])]:
        y = tf.constant([2, 2])
        assert run_checked(check(x, y), x, {x: good}).tolist() == good
        with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold element-wise"):
            run_checked(check(x, y), x, {x: bad})


def test_sign_asserts():
    x = tf.placeholder(tf.float32, shape=[None])
    for check, good, bad in [(tf.assert_positive, [1.0], [0.0]),
                             (tf.assert_negative, [-1.0], [0.0]),
                             (tf.assert_non_negative, [0.0], [-1.0]),
                             (tf.assert_non_positive, [0.0], [1.0])]:
        run_checked(check(x), x, {x: good})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Condition x [<>=]+ 0"):
            run_checked(check(x), x, {x: bad})
    # An empty tensor satisfies every element-wise condition.
    run_checked(tf.assert_positive(x), x, {x: []})


def test_assert_rank_and_type_check_what_is_known_when_building():
    with pytest.raises(ValueError, match="must have rank 2.  Received rank 1"):
        tf.assert_rank(tf.constant([1, 2]), 2)
    tf.assert_rank(tf.constant([[1]]), 2)  # a no-op
    unknown = tf.placeholder(tf.float32)
    check = tf.assert_rank(unknown, 1)
    run_checked(check, unknown, {unknown: [1.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank"):
        run_checked(check, unknown, {unknown: [[1.0]]})
    with pytest.raises(TypeError, match="must be of type int64"):
        tf.assert_type(tf.constant(1), tf.int64)
    tf.assert_type(tf.constant(1), tf.int32)


def test_check_numerics_and_its_gradient():
    x = tf.placeholder(tf.float32, shape=[None])
    checked = tf.check_numerics(x, "input")
    with tf.Session() as sess:
        assert sess.run(checked, {x: [1.0, 2.0]}).tolist() == [1.0, 2.0]
        for values, kind in [([np.nan], "NaN"), ([np.inf], "Inf"), ([np.nan, -np.inf],
                                                                      "NaN and Inf")]:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="input : Tensor had %s values" % kind):
                sess.run(checked, {x: values})
        # The gradient is checked too (numerics_test.testPassThrough/Grad).
        grad = tf.gradients(tf.reduce_sum(tf.log(tf.check_numerics(x, "y"))), x)[0]
        assert sess.run(grad, {x: [2.0]}).tolist() == [0.5]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Not a number \\(NaN\\) or infinity \\(Inf\\) values detected "
                                 "in gradient. y"):
            sess.run(grad, {x: [0.0]})
        finite = tf.verify_tensor_all_finite(x, "must be finite")
        assert sess.run(finite, {x: [3.0]}).tolist() == [3.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be finite"):
            sess.run(finite, {x: [np.inf]})


def test_add_check_numerics_ops_checks_every_float_output():
    x = tf.placeholder(tf.float32, shape=[])
    y = tf.log(x)
    check = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        sess.run([y, check], {x: 2.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Log:0 : Tensor had"):
            sess.run([y, check], {x: -1.0})


def test_tuple_gates_every_tensor_on_all_of_them():
    v = tf.Variable(0)
    a, b = tf.tuple([tf.constant(1), tf.assign_add(v, 5)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(a) == 1
        assert sess.run(v) == 5  # computing `a` ran the assign gated with it
