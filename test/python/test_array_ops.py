"""The array manipulation ops (tf.concat, split, unstack, slice, strided_slice and indexing,
pad, transpose, reverse, tile, expand_dims, squeeze, one_hot, range, rank): values against
numpy, shapes known before a step as the kernels make them, gradients against finite
differences (float64), and the errors for bad input, statically and at run time."""

import numpy as np
import pytest

import troupe as tf

from conftest import check_gradient

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 3, 4))


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def check_forward(tensor, expected):
    """The value, and the static shape agreeing with it wherever it is known."""
    value = run(tensor)
    np.testing.assert_array_equal(value, expected)
    assert value.dtype == np.asarray(expected).dtype, (value.dtype, np.asarray(expected).dtype)
    static = tensor.shape.as_list() if tensor.shape.ndims is not None else None
    if static is not None:
        assert len(static) == value.ndim
        assert all(s is None or s == v for s, v in zip(static, value.shape)), (static,
                                                                                value.shape)


def test_concat_split_unstack_against_numpy():
    a, b = X, RNG.normal(size=(2, 1, 4))
    check_forward(tf.concat([a, b], 1), np.concatenate([a, b], 1))
    check_forward(tf.concat([a, b], -2), np.concatenate([a, b], -2))
    check_forward(tf.concat([a], 0), a)
    parts = tf.split(X, 2, axis=2)
    assert len(parts) == 2
    for part, expected in zip(parts, np.split(X, 2, axis=2)):
        check_forward(part, expected)
    parts = tf.split(X, [1, -1], axis=1)
    for part, expected in zip(parts, np.split(X, [1], axis=1)):
        check_forward(part, expected)
    rows = tf.unstack(X, axis=1)
    assert len(rows) == 3
    for i, row in enumerate(rows):
        check_forward(row, X[:, i])
    check_forward(tf.stack(tf.unstack(X)), X)
    words = tf.constant([["a", "b"], ["c", "d"]])
    np.testing.assert_array_equal(run(tf.concat([words, words], 0)).tolist(),
                                  [[b"a", b"b"], [b"c", b"d"]] * 2)


def test_slicing_and_indexing_as_numpy_does():
    x = tf.constant(X)
    check_forward(tf.slice(X, [0, 1, 0], [2, -1, 3]), X[0:2, 1:, 0:3])
    cases = [
        (lambda t: t[1], X[1]),
        (lambda t: t[-1, 1:], X[-1, 1:]),
        (lambda t: t[:, ::2], X[:, ::2]),
        (lambda t: t[..., ::-1], X[..., ::-1]),
        (lambda t: t[:, tf.newaxis, 0], X[:, None, 0]),
        (lambda t: t[..., 1, None], X[..., 1, None]),
        (lambda t: t[1:-1:1, -2::-1, 3], X[1:-1:1, -2::-1, 3]),
        (lambda t: t[5:], X[5:]),
        (lambda t: t[:, 10:0:-2], X[:, 10:0:-2]),
    ]
    for index, expected in cases:
        check_forward(index(x), expected)
    i = tf.constant(1)
    check_forward(x[i, :i + 1], X[1, :2])
    check_forward(tf.shape(x)[0], np.int32(2))
    v = tf.Variable(np.arange(6.0).reshape(2, 3))
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v[1, 1:]), [4.0, 5.0])
    check_forward(tf.strided_slice(X, [0, 0, 1], [2, 3, 4], [1, 2, 2], shrink_axis_mask=1),
                  X[0, 0:3:2, 1:4:2])


def test_pad_transpose_reverse_tile_and_shapes():
    check_forward(tf.pad(X, [[1, 0], [0, 2], [1, 1]]),
                  np.pad(X, [[1, 0], [0, 2], [1, 1]]))
    check_forward(tf.pad(X, [[0, 1], [0, 0], [0, 0]], constant_values=7.5),
                  np.pad(X, [[0, 1], [0, 0], [0, 0]], constant_values=7.5))
    check_forward(tf.transpose(X), np.transpose(X))
    check_forward(tf.transpose(X, [1, 0, 2]), np.transpose(X, [1, 0, 2]))
    check_forward(tf.invert_permutation([2, 0, 1]), np.int32([1, 2, 0]))
    check_forward(tf.reverse(X, [0, -1]), X[::-1, :, ::-1])
    check_forward(tf.tile(X, [1, 2, 3]), np.tile(X, [1, 2, 3]))
    check_forward(tf.tile(np.float32(3.0), np.zeros([0], np.int32)), np.float32(3.0))
    check_forward(tf.expand_dims(X, 1), X[:, None])
    check_forward(tf.expand_dims(X, -1), X[..., None])
    check_forward(tf.squeeze(X[:, :1]), np.squeeze(X[:, :1]))
    check_forward(tf.squeeze(np.zeros([1, 2, 1]), axis=[2]), np.zeros([1, 2]))
    check_forward(tf.rank(X), np.int32(3))
    unknown = tf.placeholder(tf.float32, [None, 3])
    assert tf.squeeze(unknown).shape.ndims is None
    assert tf.squeeze(unknown, [0]).shape.as_list() == [3]
    assert tf.transpose(unknown).shape.as_list() == [3, None]
    assert tf.tile(unknown, [2, 2]).shape.as_list() == [None, 6]


# TensorFlow 1.x's pad_op_test for REFLECT and SYMMETRIC (MirrorPad): numpy's "reflect" and
# "symmetric" modes are the same, the gradient is checked by finite differences, and paddings
# too large for the mode fail with TensorFlow's message.
def test_mirror_pad_forward_gradient_and_bounds():
    for mode in ("REFLECT", "SYMMETRIC", "reflect"):
        for paddings in ([[1, 0], [0, 2], [1, 1]], [[0, 0], [2, 2], [0, 1]], [[0, 0]] * 3):
            check_forward(tf.pad(X, paddings, mode=mode),
                          np.pad(X, paddings, mode=mode.lower()))
    check_forward(tf.pad(np.int32([1, 2, 3]), [[2, 2]], "SYMMETRIC"),
                  np.int32([2, 1, 1, 2, 3, 3, 2]))
    for mode in ("REFLECT", "SYMMETRIC"):
        check_gradient(lambda x: tf.reduce_sum(tf.sin(tf.pad(x, [[1, 2], [2, 1]], mode))),
                       [3, 4])
    with pytest.raises(ValueError, match="Unknown padding mode: WRAP"):
        tf.pad(X, [[0, 0]] * 3, "WRAP")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="paddings must be less than the dimension size: 3, 0 not less "
                                 "than 3"):
            sess.run(tf.pad(tf.placeholder_with_default(np.float32([1, 2, 3]), [None]),
                            [[3, 0]], "REFLECT"))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="paddings must be no greater than the dimension size: 4, 0 "
                                 "greater than 3"):
            sess.run(tf.pad(np.float32([1, 2, 3]), [[4, 0]], "SYMMETRIC"))


def test_one_hot_and_range():
    check_forward(tf.one_hot([0, 2, -1, 5], 3),
                  np.float32([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]]))
    check_forward(tf.one_hot([[1], [0]], 2, on_value=5, off_value=-1, axis=0),
                  np.int32([[[-1], [5]], [[5], [-1]]]))
    check_forward(tf.range(5), np.arange(5, dtype=np.int32))
    check_forward(tf.range(1, 10, 3), np.arange(1, 10, 3, dtype=np.int32))
    check_forward(tf.range(10, 1, -4), np.arange(10, 1, -4, dtype=np.int32))
    check_forward(tf.range(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    check_forward(tf.range(3, dtype=tf.int64), np.arange(3, dtype=np.int64))
    n = tf.placeholder(tf.int32, [])
    assert tf.range(n).shape.as_list() == [None]
    np.testing.assert_array_equal(run(tf.range(n), {n: 4}), np.arange(4))


@pytest.mark.parametrize("name, build, shape", [
    ("concat", lambda x: tf.reduce_sum(tf.concat([x, 2.0 * x], 1) * np.arange(6.0)), (2, 3)),
    ("split", lambda x: tf.reduce_sum(tf.split(x, [1, 2], 1)[1] * np.arange(4.0)
                                      .reshape(2, 2)), (2, 3)),
    ("split_unused_part", lambda x: tf.reduce_sum(tf.square(tf.split(x, 3, 1)[0])), (2, 3)),
    ("unstack", lambda x: tf.reduce_sum(tf.unstack(x, axis=1)[2] * 3.0), (2, 3)),
    ("stack", lambda x: tf.reduce_sum(tf.stack([x, x * x], 1) * np.arange(12.0)
                                      .reshape(2, 2, 3)), (2, 3)),
    ("slice", lambda x: tf.reduce_sum(tf.square(tf.slice(x, [1, 0], [1, 2]))), (3, 3)),
    ("strided_slice", lambda x: tf.reduce_sum(x[::-2, 1:, None] * np.arange(4.0)
                                              .reshape(2, 2, 1)), (3, 3)),
    ("index", lambda x: tf.reduce_sum(tf.square(x[1])), (3, 2)),
    ("pad", lambda x: tf.reduce_sum(tf.pad(x, [[1, 2], [0, 1]]) * np.arange(15.0)
                                    .reshape(5, 3)), (2, 2)),
    ("transpose", lambda x: tf.reduce_sum(tf.transpose(x, [2, 0, 1]) * np.arange(24.0)
                                          .reshape(4, 2, 3)), (2, 3, 4)),
    ("reverse", lambda x: tf.reduce_sum(tf.reverse(x, [1]) * np.arange(6.0).reshape(2, 3)),
     (2, 3)),
    ("tile", lambda x: tf.reduce_sum(tf.tile(x, [2, 3]) * np.arange(36.0).reshape(4, 9)),
     (2, 3)),
    ("expand_squeeze", lambda x: tf.reduce_sum(tf.squeeze(tf.expand_dims(x, 0)) * x), (2, 3)),
])
def test_gradient_matches_finite_differences(name, build, shape):
    check_gradient(build, shape)


def test_bad_input_is_an_error_naming_the_node_before_or_during_the_step():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"ConcatV2.*dimension 0 of the "
                                                             r"inputs must match"):
        tf.concat([np.zeros([2, 3]), np.zeros([3, 3])], 1, name="joined")
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divide"):
        tf.split(X, 5, axis=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        tf.constant(X)[7]
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be non-zero"):
        tf.constant(X)[::0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a permutation"):
        tf.transpose(X, [0, 0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be non-negative"):
        tf.pad(X, [[-1, 0], [0, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="can not squeeze dim"):
        tf.squeeze(X, [1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires delta != 0"):
        tf.range(0, 5, 0)
    with pytest.raises(TypeError, match="valid indices"):
        tf.constant(X)[[0, 1]]
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))
    with pytest.raises(TypeError, match="not iterable|only iterable"):
        iter(tf.constant(X))
    # Shapes known only when the step runs: the kernels check them, naming the node.
    x = tf.placeholder(tf.float64, [None, None])
    begin = tf.placeholder(tf.int32, [2])
    sliced = tf.slice(x, begin, [1, 1], name="window")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'window' \(Slice\).*within"):
        run(sliced, {x: np.zeros([2, 2]), begin: [2, 0]})
    joined = tf.concat([x, x[:1, :1]], 0, name="rows")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'rows' \(ConcatV2\)"):
        run(joined, {x: np.zeros([2, 2])})
    i = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        run(tf.constant(X)[i], {i: 2})


def test_gather_gradient_and_unsorted_segment_sum():
    data = RNG.normal(size=(5, 2))
    ids = np.array([0, 2, 0, -1, 1])
    expected = np.zeros((3, 2))
    for row, i in zip(data, ids):
        if i >= 0:
            expected[i] += row
    check_forward(tf.unsorted_segment_sum(data, ids, 3), expected)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"out of range \[0, 3\)"):
        run(tf.unsorted_segment_sum(data, [0, 1, 2, 3, 0], 3))
    # The gradient of a lookup sums the rows' gradients by index, repeated ids included.
    table = tf.Variable(np.arange(12.0).reshape(4, 3))
    looked_up = tf.nn.embedding_lookup(table, [[1, 3], [1, 1]])
    (grad,) = tf.gradients(tf.reduce_sum(looked_up * 2.0), [table])
    with tf.Session() as sess:
        sess.run(table.initializer)
        np.testing.assert_array_equal(sess.run(looked_up)[0], [[3, 4, 5], [9, 10, 11]])
        value = sess.run(grad)  # IndexedSlices: the rows of the ids, fetched as a value
        assert isinstance(value, tf.IndexedSlicesValue)
        np.testing.assert_array_equal(value.indices, [1, 3, 1, 1])
        np.testing.assert_array_equal(value.values, np.full((4, 3), 2.0))
        np.testing.assert_array_equal(value.dense_shape, [4, 3])
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(grad)),
                                      [[0] * 3, [6] * 3, [0] * 3, [2] * 3])
    clipped = tf.nn.embedding_lookup(np.array([[3.0, 4.0], [0.3, 0.4]]), [0, 1], max_norm=1.0)
    np.testing.assert_allclose(run(clipped), [[0.6, 0.8], [0.3, 0.4]])


@pytest.mark.parametrize("name, build, shape", [
    ("gather_rows", lambda x: tf.reduce_sum(tf.square(tf.gather(x, [2, 0, 2]))), (3, 2)),
    ("gather_axis1", lambda x: tf.reduce_sum(tf.gather(x, [[1], [0]], axis=1) *
                                             np.arange(8.0).reshape(2, 2, 1, 2)), (2, 3, 2)),
    ("segment_sum", lambda x: tf.reduce_sum(tf.square(
        tf.unsorted_segment_sum(x, [1, -1, 1, 0], 2))), (4, 2)),
])
def test_selection_gradients_match_finite_differences(name, build, shape):
    check_gradient(build, shape)


def test_a_list_holding_tensors_converts_to_their_stack():
    # TensorFlow's auto-packing (constant_op_test.AutoPackingTest): a nested list holding
    # tensors is their stack, Python numbers taking the tensors' dtype.
    x = tf.placeholder(tf.int64, shape=[])
    packed = tf.convert_to_tensor([[x, 2], [3, x]])
    assert packed.dtype == tf.int64 and packed.shape.as_list() == [2, 2]
    doubled = tf.reshape([x, x * 2], [2, 1])
    with tf.Session() as sess:
        assert sess.run(packed, {x: 7}).tolist() == [[7, 2], [3, 7]]
        assert sess.run(doubled, {x: 4}).tolist() == [[4], [8]]
    with pytest.raises((TypeError, ValueError)):
        tf.convert_to_tensor([x, tf.constant(1.5)])


def test_assigning_to_a_slice_of_a_variable():
    v = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4))
    first = v[0:2, 1].assign([100.0, 200.0])
    corners = v[::2, -1:].assign([[7.0], [8.0]])
    wrong = v[1:3, 1:3].assign(tf.zeros([2, 3]))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(first)
        np.testing.assert_array_equal(sess.run(corners),
                                      [[0, 100, 2, 7], [4, 200, 6, 7], [8, 9, 10, 8]])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Sliced l-value shape \[2,2\] does not match r-value shape "
                                 r"\[2,3\]"):
            sess.run(wrong)
        np.testing.assert_array_equal(sess.run(v[2]), [8, 9, 10, 8])
    assert v[0].shape.as_list() == [4]


def test_a_slice_assign_in_a_cond_and_on_a_ps_under_a_device_setter(insecure):
    from conftest import free_ports
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": ["127.0.0.1:%d" % ps_port], "worker": ["127.0.0.1:%d" % worker_port]}
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        setter = tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(cluster))
        with tf.device(setter):
            v = tf.Variable([1.0, 2.0, 3.0])
            flag = tf.placeholder(tf.bool, [])
            # The update asks for the worker; as TensorFlow's, it runs with its variable.
            changed = tf.cond(flag, lambda: v[1].assign(9.0), lambda: tf.identity(v))
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(changed, {flag: False}), [1, 2, 3])
            np.testing.assert_array_equal(sess.run(changed, {flag: True}), [1, 9, 3])
    finally:
        worker.stop()
        ps.stop()
