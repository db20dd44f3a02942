"""tf.cond and tf.case: only the taken branch runs (its side effects included), results of any
structure, errors for bad branches, and the limits (no gradient yet, one task)."""

import numpy as np
import pytest

import troupe as tf


def test_cond_takes_one_branch_and_runs_only_its_ops():
    pred = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    counter = tf.Variable(0)

    def yes():
        with tf.control_dependencies([tf.assign_add(counter, 1)]):
            return x * 10.0

    def no():
        with tf.control_dependencies([tf.assign_add(counter, 100)]):
            return x + 1.0

    result = tf.cond(pred, yes, no)
    assert result.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(result, {pred: True}) == 20.0
        assert sess.run(result, {pred: False}) == 3.0
        assert sess.run(counter) == 101


def test_cond_results_keep_their_structure_and_may_be_operations():
    pred = tf.placeholder(tf.bool, [])
    v = tf.Variable(1.0)
    pair = tf.cond(pred, lambda: (tf.constant(1), tf.constant([1.0, 2.0])),
                   lambda: (tf.constant(2), tf.constant([3.0, 4.0])))
    assert isinstance(pair, tuple) and len(pair) == 2
    named = tf.cond(pred, lambda: {"a": tf.constant(1.0)}, lambda: {"a": tf.constant(2.0)})
    single = tf.cond(pred, lambda: [tf.constant(5)], lambda: [tf.constant(6)])
    update = tf.cond(pred, lambda: tf.assign(v, 10.0).op, lambda: tf.no_op())
    assert isinstance(update, tf.Operation)
    with tf.Session() as sess:
        sess.run(v.initializer)
        first, second = sess.run(pair, {pred: False})
        assert first == 2 and list(second) == [3.0, 4.0]
        assert sess.run(named, {pred: True}) == {"a": 1.0}
        assert sess.run(single, {pred: False}) == 6
        sess.run(update, {pred: False})
        assert sess.run(v) == 1.0
        sess.run(update, {pred: True})
        assert sess.run(v) == 10.0


def test_case_picks_the_first_true_predicate():
    x = tf.placeholder(tf.int32, [])
    result = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                      (tf.equal(x, 0), lambda: tf.constant(0))],
                     default=lambda: tf.constant(1))
    with tf.Session() as sess:
        assert [sess.run(result, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]
    with pytest.raises(ValueError, match="exclusive=True"):
        tf.case([(tf.less(x, 0), lambda: tf.constant(-1))], exclusive=True)


def test_bad_branches_and_limits():
    pred = tf.placeholder(tf.bool, [])
    with pytest.raises(TypeError, match="true_fn must be callable"):
        tf.cond(pred, 1, lambda: tf.constant(1))
    with pytest.raises(ValueError, match="same structure"):
        tf.cond(pred, lambda: [tf.constant(1)] * 2, lambda: [tf.constant(1)])
    with pytest.raises(ValueError, match="same type"):
        tf.cond(pred, lambda: tf.constant(1), lambda: tf.constant(1.0))
    with pytest.raises(TypeError, match="bool scalar"):
        tf.cond(tf.constant(1), lambda: tf.constant(1), lambda: tf.constant(2))
    x = tf.constant(3.0)
    y = tf.cond(pred, lambda: x * x, lambda: x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="no gradient is registered"):
        tf.gradients(y, [x])
    # A value of the untaken branch fetched directly is an error naming the branch.
    inner = []
    tf.cond(pred, lambda: inner.append(x * 2.0) or inner[0], lambda: x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cond that was not taken"):
            sess.run(inner[0], {pred: False})
        np.testing.assert_allclose(sess.run(inner[0], {pred: True}), 6.0)
