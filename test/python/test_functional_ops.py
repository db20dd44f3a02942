"""tf.map_fn, tf.scan, tf.foldl and tf.foldr (TensorFlow 1.x's functional_ops_test cases,
rewritten): values, nested inputs and outputs, variables made inside fn, gradients, empty and
unknown shapes, and TensorFlow's errors for mismatched structures and dtypes."""

import numpy as np
import pytest

import troupe as tf


def run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


def test_map_simple_and_not_tensor_and_multi_io():
    elems = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="data")
    r = tf.map_fn(lambda x: tf.multiply(tf.add(x, 3), 2), elems)
    plain = tf.map_fn(lambda x: x * x, np.array([1.0, 2.0, 3.0]))  # not a tensor: converted
    nums = np.array([1, 2, 3, 4, 5, 6], dtype=np.int64)
    multi = tf.map_fn(lambda x: ((x + 3) * 2, -(x + 3) * 2), nums,
                      dtype=(tf.int64, tf.int64))
    pairs = tf.map_fn(lambda x: x[0] * x[1][0] + x[1][1], (nums, (nums, -nums)),
                      dtype=tf.int64)
    same = tf.map_fn(lambda x: (x[1], x[0]), (nums, -nums))
    got = run(r, plain, multi, pairs, same)
    np.testing.assert_allclose(got[0], [8, 10, 12, 14, 16, 18])
    np.testing.assert_allclose(got[1], [1, 4, 9])
    np.testing.assert_array_equal(got[2][0], (nums + 3) * 2)
    np.testing.assert_array_equal(got[2][1], -(nums + 3) * 2)
    np.testing.assert_array_equal(got[3], nums * nums - nums)
    np.testing.assert_array_equal(got[4][0], -nums)
    np.testing.assert_array_equal(got[4][1], nums)


def test_map_scoped_variables_are_made_once_and_reused():
    def double_scoped(x):
        with tf.variable_scope("body"):
            two = tf.get_variable("two", [], dtype=tf.int32,
                                  initializer=tf.constant_initializer(2))
            return tf.multiply(x, two)

    with tf.Graph().as_default():
        with tf.variable_scope("root") as varscope:
            elems = tf.constant([1, 2, 3, 4, 5, 6], name="data")
            r = tf.map_fn(double_scoped, elems)
            assert [v.name for v in tf.trainable_variables()] == ["root/body/two:0"]
            varscope.reuse_variables()
            again = tf.map_fn(double_scoped, elems)
            assert len(tf.trainable_variables()) == 1
            got = run(r, again)
        np.testing.assert_array_equal(got[0], [2, 4, 6, 8, 10, 12])
        np.testing.assert_array_equal(got[1], [2, 4, 6, 8, 10, 12])


def test_map_with_a_dense_layer_inside():
    with tf.Graph().as_default():
        rows = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
        out = tf.map_fn(lambda m: tf.layers.dense(m, 3, kernel_initializer=tf.ones_initializer()),
                        rows)
        assert out.shape.as_list() == [3, 2, 3]
        assert len(tf.trainable_variables()) == 2  # one kernel and one bias for all rows
        got, = run(out)
        np.testing.assert_allclose(got[:, :, 0], np.arange(12).reshape(3, 2, 2).sum(axis=2))


def test_map_gradients():
    param = tf.constant(2.0)
    elems = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="elems")
    y = tf.map_fn(lambda x: tf.multiply(tf.square(x), param), elems)
    d_param, d_elems = run(tf.gradients(y, param)[0], tf.gradients(y, elems)[0])
    assert d_param == 91.0
    np.testing.assert_array_equal(d_elems, [4.0, 8.0, 12.0, 16.0, 20.0, 24.0])


def test_map_shapes_empty_and_unknown():
    x = tf.constant([[1, 2, 3], [4, 5, 6]])
    y0, y1 = tf.map_fn(lambda e: (e[1], e[0]), (x, x))
    assert y0.shape.as_list() == [2, 3] and y1.shape.as_list() == [2, 3]
    empty = tf.map_fn(lambda e: e + 1, tf.constant([], dtype=tf.float32))
    assert empty.shape.as_list() == [0]
    empty3 = tf.map_fn(lambda e: e + 1, tf.zeros([0, 3, 2]))
    assert empty3.shape.as_list() == [0, 3, 2]
    unknown = tf.placeholder(tf.float32)
    same = tf.map_fn(lambda e: e, unknown)
    assert same.shape.ndims is None
    got_empty, got_empty3 = run(empty, empty3)
    assert got_empty.shape == (0,) and got_empty3.shape == (0, 3, 2)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(same, {unknown: [[1, 2], [3, 4]]}),
                                      [[1, 2], [3, 4]])


def test_map_errors():
    nums = np.array([1, 2, 3, 4, 5, 6], dtype=np.int64)
    with pytest.raises(ValueError, match="not scalars"):
        tf.map_fn(lambda x: x, [1.0, 2.0])  # a list is a structure, of scalars here
    with pytest.raises(TypeError, match="two structures don't have the same nested structure"):
        # fn gives a tuple, dtype is a list
        tf.map_fn(lambda x: ((x + 3) * 2, -(x + 3) * 2), nums, dtype=[tf.int64, tf.int64])
    with pytest.raises(TypeError, match="fn returned a float32 where dtype expects a int64"):
        tf.map_fn(lambda x: tf.cast(x, tf.float32), nums, dtype=tf.int64)
    with pytest.raises(ValueError, match="not scalars"):
        tf.map_fn(lambda x: x, tf.constant(1.0))
    with pytest.raises(TypeError, match="fn must be callable"):
        tf.map_fn(3, nums)


def test_scan_simple_reverse_initializer_and_multi_output():
    elems = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="data")
    product = tf.scan(lambda a, x: tf.multiply(a, x), elems)
    reverse = tf.scan(lambda a, x: tf.multiply(a, x), elems, reverse=True)
    initialised = tf.scan(lambda a, x: tf.multiply(a, x), elems, initializer=tf.constant(2.0))
    pair = tf.scan(lambda a, x: (a[0] * x, -a[1] * x), np.array([1., 2., 3., 4., 5., 6.]),
                   (np.array(1.0), np.array(-1.0)))
    got = run(product, reverse, initialised, pair)
    np.testing.assert_array_equal(got[0], [1., 2., 6., 24., 120., 720.])
    np.testing.assert_array_equal(got[1], [720., 720., 360., 120., 30., 6.])
    np.testing.assert_array_equal(got[2], [2., 4., 12., 48., 240., 1440.])
    np.testing.assert_array_equal(got[3][0], [1., 2., 6., 24., 120., 720.])
    np.testing.assert_array_equal(got[3][1], [1., -2., 6., -24., 120., -720.])
    assert product.shape.as_list() == [6]


def test_scan_gradients_and_same_tensor_shape():
    elems = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="data")
    v = tf.constant(2.0, name="v")
    r = tf.scan(lambda a, x: tf.multiply(a, x), elems, initializer=v)
    assert run(tf.gradients(r, v)[0])[0] == 873.0
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    rows = tf.scan(lambda a, row: a + row, x, initializer=tf.zeros([2]))
    assert rows.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(run(rows)[0], [[1., 2.], [4., 6.]])


def test_fold_simple_multi_and_gradients():
    elems = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="data")
    left = tf.foldl(lambda a, x: tf.multiply(tf.add(a, x), 2), elems)
    right = tf.foldr(lambda a, x: tf.multiply(tf.add(a, x), 2), elems)
    left_init = tf.foldl(lambda a, x: tf.multiply(tf.add(a, x), 2), elems, initializer=10.0)
    pair = tf.foldl(lambda a, x: (a[0] + x, a[1] * x), elems,
                    initializer=(tf.constant(0.0), tf.constant(1.0)))
    v = tf.constant(2.0, name="v")
    d_left = tf.gradients(tf.foldl(lambda a, x: tf.multiply(a, x), elems, initializer=v), v)[0]
    d_right = tf.gradients(tf.foldr(lambda a, x: tf.multiply(a, x), elems, initializer=v), v)[0]
    got = run(left, right, left_init, pair, d_left, d_right)
    assert got[0] == 208.0 and got[1] == 450.0 and got[2] == 880.0
    assert got[3] == (21.0, 720.0)
    assert got[4] == 720.0 and got[5] == 720.0


def test_unnamed_layers_inside_fn_use_their_own_variables():
    # Two map_fns with an unnamed dense layer each (and one made before): each loop uses the
    # layer its own call outside the loop made, not another's of the same base name.
    with tf.Graph().as_default():
        rows = tf.constant(np.ones([2, 1, 2], np.float32))
        tf.layers.dense(tf.zeros([1, 2]), 3, kernel_initializer=tf.constant_initializer(5.0))
        ones = tf.map_fn(lambda m: tf.layers.dense(
            m, 3, kernel_initializer=tf.ones_initializer()), rows)
        zeros = tf.map_fn(lambda m: tf.layers.dense(
            m, 3, kernel_initializer=tf.zeros_initializer()), rows)
        assert len(tf.trainable_variables()) == 6
        got_ones, got_zeros = run(ones, zeros)
        np.testing.assert_array_equal(got_ones, np.full([2, 1, 3], 2.0))
        np.testing.assert_array_equal(got_zeros, np.zeros([2, 1, 3]))


def test_local_variables_and_plain_variables_inside_fn():
    with tf.Graph().as_default():
        def scaled(x):
            w = tf.get_variable("lv", [], initializer=tf.constant_initializer(3.0),
                                collections=[tf.GraphKeys.LOCAL_VARIABLES])
            return x * w
        out = tf.map_fn(scaled, tf.constant([1.0, 2.0]))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), [3.0, 6.0])
        with pytest.raises(ValueError, match="with tf.Variable inside the loop"):
            tf.map_fn(lambda x: x * tf.Variable(2.0, name="plainvar"), tf.constant([1.0]))


def test_scan_and_folds_of_one_element_of_unknown_shape_and_empty():
    x = tf.placeholder(tf.float32, [None, None])
    with tf.Session() as sess:
        for reverse in (False, True):
            got = sess.run(tf.scan(lambda a, e: a + e, x, reverse=reverse), {x: [[1.0, 2.0]]})
            np.testing.assert_array_equal(got, [[1.0, 2.0]])
        np.testing.assert_array_equal(
            sess.run(tf.foldl(lambda a, e: a + e, x), {x: [[1.0, 2.0]]}), [1.0, 2.0])
    with pytest.raises(ValueError, match="no element to start from"):
        tf.scan(lambda a, e: a + e, tf.zeros([0, 2]))
    with pytest.raises(ValueError, match="no element to start from"):
        tf.foldr(lambda a, e: a + e, tf.zeros([0]))


def test_structure_errors_as_nest_gives_them():
    nums = np.array([1, 2, 3], dtype=np.int64)
    with pytest.raises(ValueError, match="same nested structure"):
        tf.map_fn(lambda x: x, (nums, nums), dtype=tf.int64)
    with pytest.raises(ValueError, match="number of elements"):
        tf.map_fn(lambda x: (x, x, x), (nums, nums))
    with pytest.raises(ValueError, match="keys"):
        tf.map_fn(lambda x: {"b": x["a"]}, {"a": nums})
