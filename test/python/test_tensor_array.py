"""tf.TensorArray in graphs, as TensorFlow 1.x's tensor_array_ops_test.py describes it
(rewritten here): write/read, stack, concat, unstack, gather, scatter, dynamic sizes, while
loops that fill one, gradients through all of them, and the errors of a wrong dtype or shape."""

import numpy as np
import pytest

import troupe as tf


def _run(*fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed_dict=feed_dict)


def test_write_read():
    ta = tf.TensorArray(dtype=tf.float32, size=3)
    w0 = ta.write(0, [[4.0, 5.0]])
    w1 = w0.write(1, [[1.0, 2.0]])
    w2 = w1.write(2, -3.0 * tf.ones([1, 2]))
    r0, r1, r2 = w2.read(0), w2.read(1), w2.read(2)
    d0, d1, d2 = _run(r0, r1, r2)
    np.testing.assert_array_equal(d0, [[4.0, 5.0]])
    np.testing.assert_array_equal(d1, [[1.0, 2.0]])
    np.testing.assert_array_equal(d2, [[-3.0, -3.0]])
    assert r0.shape.as_list() == [1, 2]


def test_write_stack_and_concat():
    ta = tf.TensorArray(dtype=tf.float32, size=3)
    ta = ta.write(0, [[4.0, 5.0]]).write(1, [[6.0, 7.0]]).write(2, [[8.0, 9.0]])
    stacked, concatenated = _run(ta.stack(), ta.concat())
    np.testing.assert_array_equal(stacked, [[[4.0, 5.0]], [[6.0, 7.0]], [[8.0, 9.0]]])
    np.testing.assert_array_equal(concatenated, [[4.0, 5.0], [6.0, 7.0], [8.0, 9.0]])
    assert ta.stack().shape.as_list() == [3, 1, 2]


def test_unstack_read_gather_and_size():
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = tf.TensorArray(dtype=tf.float32, size=4).unstack(value)
    read, gathered, size = _run(ta.read(2), ta.gather([3, 0]), ta.size())
    np.testing.assert_array_equal(read, value[2])
    np.testing.assert_array_equal(gathered, value[[3, 0]])
    assert size == 4


def test_scatter_then_read():
    ta = tf.TensorArray(dtype=tf.float32, size=5, element_shape=[2])
    ta = ta.scatter([4, 1], [[1.0, 2.0], [3.0, 4.0]])
    stacked = _run(ta.stack())[0]
    np.testing.assert_array_equal(stacked, [[0, 0], [3, 4], [0, 0], [0, 0], [1, 2]])


def test_a_while_loop_fills_a_tensor_array():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    inputs = tf.TensorArray(tf.float32, size=4).unstack(x)
    outputs = tf.TensorArray(tf.float32, size=4)

    def body(t, total, out):
        total = total + inputs.read(t)
        return t + 1, total, out.write(t, total)

    _, final, out = tf.while_loop(lambda t, *_: t < 4, body, (0, tf.zeros([3]), outputs))
    stacked = out.stack()
    assert stacked.shape.as_list() == [4, 3]
    values, last = _run(stacked, final)
    np.testing.assert_array_equal(values, np.cumsum(np.arange(12).reshape(4, 3), axis=0))
    np.testing.assert_array_equal(last, values[-1])


def test_a_dynamic_size_grows_with_the_writes():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    _, ta = tf.while_loop(lambda i, _: i < 5,
                          lambda i, ta: (i + 1, ta.write(i, tf.cast(i, tf.float32) * 2.0)),
                          (0, ta))
    stacked, size = _run(ta.stack(), ta.size())
    np.testing.assert_array_equal(stacked, [0.0, 2.0, 4.0, 6.0, 8.0])
    assert size == 5
    grown = tf.TensorArray(tf.float32, size=1, dynamic_size=True).write(3, 7.0)
    stacked, size = _run(grown.stack(), grown.size())
    np.testing.assert_array_equal(stacked, [0.0, 0.0, 0.0, 7.0])
    assert size == 4


def test_an_element_shape_unknown_before_the_loop_is_learned_from_the_body():
    batch = tf.placeholder(tf.float32, [None, 2])
    ta = tf.TensorArray(tf.float32, size=3)
    _, ta = tf.while_loop(lambda i, _: i < 3,
                          lambda i, ta: (i + 1, ta.write(i, batch * tf.cast(i, tf.float32))),
                          (0, ta))
    stacked = ta.stack()
    assert stacked.shape.as_list() == [3, None, 2]
    value = np.ones([5, 2], np.float32)
    result = _run(stacked, feed_dict={batch: value})[0]
    assert result.shape == (3, 5, 2)
    np.testing.assert_array_equal(result[2], 2 * value)


def test_gradients_flow_through_writes_and_reads():
    w = tf.Variable([1.0, 2.0, 3.0])
    ta = tf.TensorArray(tf.float32, size=3)
    _, ta = tf.while_loop(lambda i, _: i < 3,
                          lambda i, ta: (i + 1, ta.write(i, w * tf.cast(i + 1, tf.float32))),
                          (0, ta))
    loss = tf.reduce_sum(ta.stack())
    grad = tf.gradients(loss, w)[0]
    value, g = _run(loss, grad)
    assert value == 36.0
    np.testing.assert_array_equal(g, [6.0, 6.0, 6.0])


def test_gradients_of_unstack_read_and_gather():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ta = tf.TensorArray(tf.float32, size=3).unstack(x)
    y = 2.0 * ta.read(1) + tf.reduce_sum(ta.gather([0, 0]), 0)
    # Reads are gathers: the gradient reaching x is IndexedSlices, as a gather's (TensorFlow
    # gives a dense one); it densifies to TensorFlow's values.
    g = _run(tf.convert_to_tensor(tf.gradients(y, x)[0]))[0]
    np.testing.assert_array_equal(g, [[2.0, 2.0], [2.0, 2.0], [0.0, 0.0]])


def test_a_body_that_reads_what_it_wrote_gets_the_right_gradient():
    """The loop's gradient records the elements of a TensorArray the body reads."""
    w = tf.Variable(2.0)
    ta = tf.TensorArray(tf.float32, size=4).write(0, 1.0)

    def body(i, ta):
        return i + 1, ta.write(i, ta.read(i - 1) * w)

    _, ta = tf.while_loop(lambda i, _: i < 4, body, (1, ta))
    last = ta.read(3)  # w ** 3
    value, g = _run(last, tf.gradients(last, w)[0])
    assert value == 8.0
    assert g == 12.0  # 3 w^2


def test_wrong_dtype_and_shape_are_errors():
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    with pytest.raises(TypeError, match="TensorArray dtype is float32 but Op is trying to "
                                        "write dtype int32"):
        ta.write(0, tf.constant([1, 2]))
    with pytest.raises(ValueError, match="incompatible with the TensorArray's element shape"):
        ta.write(0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)
    with pytest.raises(ValueError, match="no elements yet"):
        tf.TensorArray(tf.float32, size=2).read(0)
    with pytest.raises(NotImplementedError, match="split"):
        ta.split([1.0, 2.0], [1, 1])


def test_reading_past_the_end_fails_the_step():
    ta = tf.TensorArray(tf.float32, size=2).unstack([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(ta.read(5))


def test_a_tensor_array_in_a_loop_needs_a_write_or_a_shape():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(ValueError, match="never written by the body"):
        tf.while_loop(lambda i, _: i < 2, lambda i, ta: (i + 1, ta), (0, ta))


def test_close_and_identity():
    ta = tf.TensorArray(tf.float32, size=1).write(0, 3.0)
    assert isinstance(ta.close(), tf.Operation)
    assert _run(ta.identity().read(0))[0] == 3.0
    assert ta.dtype == tf.float32


def test_the_loops_gradient_does_not_record_an_array_the_body_only_writes():
    w = tf.Variable(1.0)
    written = tf.TensorArray(tf.float32, size=3)
    _, written = tf.while_loop(lambda i, _: i < 3,
                               lambda i, ta: (i + 1, ta.write(i, w)), (0, written))
    loop = [v for v in tf.get_default_graph()._while_loops.values()][-1]
    assert loop.unstacked == [1]  # the elements (loop variable 1), not the counter or size


def test_maximum_iterations_dicts_and_shape_invariants():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[])
    state = {"i": tf.constant(0), "ta": ta}
    result = tf.while_loop(lambda s: s["i"] < 100,
                           lambda s: {"i": s["i"] + 1,
                                      "ta": s["ta"].write(s["i"], tf.cast(s["i"], tf.float32))},
                           [state], maximum_iterations=4,
                           shape_invariants=[{"i": tf.TensorShape([]), "ta": None}])
    stacked = _run(result["ta"].stack())[0]
    np.testing.assert_array_equal(stacked, [0.0, 1.0, 2.0, 3.0])


def test_a_nested_loop_that_reads_the_outer_array_gets_the_right_gradient():
    w = tf.Variable(2.0)
    ta = tf.TensorArray(tf.float32, size=3, element_shape=[]).write(0, 1.0)

    def outer_body(i, t):
        _, total, t = tf.while_loop(lambda j, *_: j < i,
                                    lambda j, a, inner: (j + 1, a + inner.read(j), inner),
                                    (0, 0.0, t))
        return i + 1, t.write(i, total * w)

    _, ta = tf.while_loop(lambda i, _: i < 3, outer_body, (1, ta))
    y = ta.read(2)  # (1 + w) * w
    value, g = _run(y, tf.gradients(y, w)[0])
    assert value == 6.0
    assert g == 5.0  # 1 + 2 w


def test_the_gradient_through_a_growing_array_the_body_reads_is_refused():
    w = tf.Variable(2.0)
    ta = tf.TensorArray(tf.float32, size=1, dynamic_size=True).write(0, 1.0)
    _, ta = tf.while_loop(lambda i, _: i < 4,
                          lambda i, t: (i + 1, t.write(i, t.read(i - 1) * w)), (1, ta))
    assert _run(ta.read(3))[0] == 8.0
    with pytest.raises(ValueError, match="dynamic_size=True that it writes"):
        tf.gradients(ta.read(3), w)


def test_the_body_runs_once_per_iteration_when_shapes_are_static():
    calls = []

    def counted(x):
        calls.append(x)
        return x

    def body(i, t):
        value = tf.py_func(counted, [tf.cast(i, tf.float32)], tf.float32)
        value.set_shape([])
        return i + 1, t.write(i, value)

    _, ta = tf.while_loop(lambda i, _: i < 3, body, (0, tf.TensorArray(tf.float32, size=3)))
    np.testing.assert_array_equal(_run(ta.stack())[0], [0.0, 1.0, 2.0])
    assert len(calls) == 3


def test_a_loop_that_never_runs_leaves_an_empty_array():
    x = tf.placeholder(tf.float32, [None, 2])
    n = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float32, size=n).unstack(x)
    _, out = tf.while_loop(lambda i, _: i < n,
                           lambda i, o: (i + 1, o.write(i, inputs.read(i) * 2.0)),
                           (0, tf.TensorArray(tf.float32, size=n)))
    size, stacked = _run(out.size(), out.stack(), feed_dict={x: np.zeros([0, 2], np.float32)})
    assert size == 0 and stacked.shape == (0, 2)


def test_one_tensor_array_loop_variable_comes_back_as_itself():
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[])
    result = tf.while_loop(lambda t: t.size() < 0, lambda t: t, ta)
    assert isinstance(result, tf.TensorArray)
    result = tf.while_loop(lambda t: t.size() < 0, lambda t: [t], [ta])
    assert isinstance(result, tf.TensorArray)


def test_unstack_keeps_the_size():
    ta = tf.TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0]).write(1, 9.0)
    size, stacked = _run(ta.size(), ta.stack())
    assert size == 3
    np.testing.assert_array_equal(stacked, [1.0, 9.0, 3.0])
    with pytest.raises(ValueError, match=r"first dimension equal to the array size \(2 vs\. 3\)"):
        tf.TensorArray(tf.float32, size=2).unstack([1.0, 2.0, 3.0])
    grown = tf.TensorArray(tf.float32, size=5, dynamic_size=True).unstack([1.0, 2.0])
    size, stacked = _run(grown.size(), grown.stack())
    assert size == 5
    np.testing.assert_array_equal(stacked, [1.0, 2.0, 0.0, 0.0, 0.0])


def test_a_string_array():
    ta = tf.TensorArray(tf.string, size=2).write(0, "a").write(1, "bc")
    assert list(_run(ta.stack())[0]) == [b"a", b"bc"]


def test_a_tensor_as_a_shape_invariant_is_still_an_error():
    with pytest.raises(TypeError):
        tf.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x), (0, tf.constant([1.0])),
                      shape_invariants=(tf.TensorShape([]), tf.constant([2])))
