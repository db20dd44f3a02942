"""N-dimensional gathers and scatters and the sparse segment reductions (TensorFlow 1.x's
gather_nd_op_test, scatter_nd_ops_test and segment_reduction_ops_test, ported): values against
numpy, duplicates summed where TensorFlow sums them, TensorFlow's messages for bad indices and
segment ids, and gradients against finite differences in float64 (sparse_to_dense's too)."""

import numpy as np
import pytest

import troupe as tf


def run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches) if len(fetches) > 1 else fetches[0])


def numeric_jacobian_check(build, x0, eps=1e-6, tol=1e-6):
    """Compares tf.gradients of sum(build(x) * w) with central differences at x0."""
    x = tf.placeholder(tf.float64, x0.shape)
    y = build(x)
    w = np.random.RandomState(7).uniform(-1, 1, size=run_shape(y, x, x0))
    loss = tf.reduce_sum(y * w)
    (grad,) = tf.gradients(loss, [x])
    with tf.Session() as sess:
        symbolic = sess.run(tf.convert_to_tensor(grad), {x: x0})
        numeric = np.zeros_like(x0)
        flat = numeric.reshape(-1)
        for i in range(x0.size):
            up, down = x0.copy(), x0.copy()
            up.reshape(-1)[i] += eps
            down.reshape(-1)[i] -= eps
            flat[i] = (sess.run(loss, {x: up}) - sess.run(loss, {x: down})) / (2 * eps)
    np.testing.assert_allclose(symbolic, numeric, rtol=tol, atol=tol)


def run_shape(y, x, x0):
    with tf.Session() as sess:
        return sess.run(y, {x: x0}).shape


def segment_reduce(x, indices, segment_ids, reduction, num_segments=None):
    """numpy's sparse segment reduction: rows x[indices] reduced by segment id."""
    rows = segment_ids[-1] + 1 if num_segments is None else num_segments
    out = np.zeros((rows,) + x.shape[1:], np.float64)
    counts = np.zeros(rows)
    for i, s in zip(indices, segment_ids):
        out[s] += x[i]
        counts[s] += 1
    scale = {"sum": np.ones(rows), "mean": np.maximum(counts, 1),
             "sqrt_n": np.sqrt(np.maximum(counts, 1))}[reduction]
    return out / scale.reshape((-1,) + (1,) * (x.ndim - 1))


SEGMENT_OPS = {"sum": tf.sparse_segment_sum, "mean": tf.sparse_segment_mean,
               "sqrt_n": tf.sparse_segment_sqrt_n}


@pytest.mark.parametrize("reduction", sorted(SEGMENT_OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_sparse_segment_values(reduction, dtype):
    if reduction != "sum" and dtype in (np.int32, np.int64):
        with pytest.raises(TypeError):
            SEGMENT_OPS[reduction](np.ones((2, 2), dtype), [0], [0])
        return
    segment_ids = [i for i in range(20) for _ in range(i + 1)]
    rng = np.random.RandomState(0)
    x = np.arange(1, 801).reshape(400, 2).astype(dtype)
    indices = rng.randint(0, 400, len(segment_ids)).astype(np.int32)
    out = SEGMENT_OPS[reduction](tf.constant(x), indices, segment_ids)
    assert out.shape.as_list() == [None, 2]
    np.testing.assert_allclose(run(out), segment_reduce(x, indices, segment_ids, reduction),
                               rtol=1e-5)


@pytest.mark.parametrize("reduction", sorted(SEGMENT_OPS))
def test_sparse_segment_holes_num_segments_and_empty(reduction):
    x = np.arange(1, 41, dtype=np.float32).reshape(10, 4)
    op = SEGMENT_OPS[reduction]
    for ids in ([0, 2, 2, 2], [1, 2, 2, 2]):
        np.testing.assert_allclose(run(op(x, [8, 3, 0, 9], ids)),
                                   segment_reduce(x, [8, 3, 0, 9], ids, reduction), rtol=1e-6)
    with_num = op(x, np.array([8, 3, 0, 9], np.int64), [0, 2, 2, 2], num_segments=5)
    assert with_num.shape.as_list() == [5, 4]
    np.testing.assert_allclose(run(with_num),
                               segment_reduce(x, [8, 3, 0, 9], [0, 2, 2, 2], reduction, 5),
                               rtol=1e-6)
    empty = op(tf.zeros([0, 4]), tf.constant([], tf.int32), tf.constant([], tf.int32),
               num_segments=5)
    np.testing.assert_array_equal(run(empty), np.zeros([5, 4]))


@pytest.mark.parametrize("indices, segment_ids, message", [
    ([8, -1, 0, 9], [0, 1, 2, 2], r"indices\[1\] == -1 out of range \[0, 10\)"),
    ([8, 3, 0, 10], [0, 1, 2, 2], r"indices\[3\] == 10 out of range \[0, 10\)"),
    ([8, 3, 0, 9], [0, 1, 0, 1], "segment ids are not increasing"),
    ([8, 3, 0, 9], [0, 1, 2, 0], r"Segment id 1 out of range \[0, 1\), possibly because "
                                 "'segment_ids' input is not sorted"),
    ([8, 3, 0, 9], [-1, 0, 1, 1], r"Segment id -1 out of range \[0, 2\)"),
    ([8, 3, 0, 9], [0, 0, 0, -1], "segment ids must be >= 0"),
    ([8, 3, 0, 9], [0, 0, 0, -2], "segment ids must be >= 0"),
])
def test_sparse_segment_invalid_indices_and_ids(indices, segment_ids, message):
    x = np.ones((10, 4), np.float32)
    for op in (tf.sparse_segment_sum, tf.sparse_segment_mean):
        out = op(x, indices, segment_ids, name="segments")
        with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
            run(out)
        assert "segments" in str(info.value)


def test_sparse_segment_num_segments_checks():
    x = np.ones((10, 4), np.float32)
    out = tf.sparse_segment_sum(x, [8, 3, 0, 9], [0, 1, 3, 5], num_segments=5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids must be < num_segments"):
        run(out)
    with pytest.raises(ValueError, match="Cannot specify a negative value for num_segments"):
        tf.sparse_segment_mean(x, [8, 3, 0, 9], [0, 1, 3, 3], num_segments=-2)
    with pytest.raises(ValueError, match="segment_ids and indices should have same size"):
        tf.sparse_segment_sum(x, [0, 1], [0])


@pytest.mark.parametrize("reduction", sorted(SEGMENT_OPS))
def test_sparse_segment_gradients(reduction):
    op = SEGMENT_OPS[reduction]
    x0 = np.random.RandomState(1).uniform(-1, 1, (10, 4))
    numeric_jacobian_check(lambda x: op(x, [8, 3, 3, 9], [0, 1, 2, 2]), x0)
    numeric_jacobian_check(lambda x: op(x, [8, 3, 3, 9], [0, 1, 2, 2], num_segments=5), x0)


def test_gather_nd_values():
    params = np.array([[-8, -1, -2, -3, -7, -5], [8, 1, 2, 3, 7, 5]], np.float32)
    np.testing.assert_array_equal(run(tf.gather_nd(params, [[0, 2], [1, 4]])), [-2, 7])
    np.testing.assert_array_equal(run(tf.gather_nd(params, [[1], [0]])), params[[1, 0]])
    cube = np.arange(24).reshape(2, 3, 4)
    indices = np.array([[[0, 1], [1, 2]], [[1, 0], [0, 0]]], np.int64)
    out = tf.gather_nd(cube, indices)
    assert out.shape.as_list() == [2, 2, 4]
    np.testing.assert_array_equal(run(out), cube[indices[..., 0], indices[..., 1]])
    words = np.array([b"a", b"b", b"c"])
    np.testing.assert_array_equal(run(tf.gather_nd(words, [[2], [0]])), [b"c", b"a"])
    # K = 0: the whole tensor for each index.
    np.testing.assert_array_equal(run(tf.gather_nd(params, np.zeros((2, 0), np.int32))),
                                  [params, params])


def test_gather_nd_errors():
    params = np.ones((2, 3), np.float32)
    out = tf.gather_nd(params, [[0, 0], [7, 0], [0, 1]], name="pick")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"pick.*indices\[1\] = \[7, 0\] does not index into param shape"):
        run(out)
    with pytest.raises(ValueError, match=r"indices.shape\[-1\] must be <= the rank of params"):
        tf.gather_nd(params, [[0, 0, 0]])
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.gather_nd(params, [[0.5, 1.0]])
    with pytest.raises(ValueError, match="batch_dims"):
        tf.gather_nd(params, [[0]], batch_dims=1)


def test_gather_nd_gradient_is_sparse_for_rows_and_dense_otherwise():
    x0 = np.random.RandomState(2).uniform(-1, 1, (4, 3))
    numeric_jacobian_check(lambda x: tf.gather_nd(x, [[1, 2], [3, 0], [1, 2]]), x0)
    numeric_jacobian_check(lambda x: tf.gather_nd(x, [[3], [0], [3]]), x0)
    table = tf.Variable(x0)
    (rows,) = tf.gradients(tf.reduce_sum(tf.gather_nd(table, [[3], [0]])), [table])
    assert isinstance(rows, tf.IndexedSlices)
    (elements,) = tf.gradients(tf.reduce_sum(tf.gather_nd(table, [[3, 1]])), [table])
    assert isinstance(elements, tf.Tensor)
    expected = np.zeros_like(x0)
    expected[3, 1] = 1
    np.testing.assert_array_equal(run(elements), expected)


def test_scatter_nd_sums_duplicates():
    indices = tf.constant([[4], [3], [1], [7], [4]])
    updates = tf.constant([9, 10, 11, 12, 13], tf.float32)
    out = tf.scatter_nd(indices, updates, tf.constant([8]))
    assert out.shape.as_list() == [8]
    np.testing.assert_array_equal(run(out), [0, 11, 0, 10, 22, 0, 0, 12])
    slices = tf.scatter_nd([[0], [2]], np.ones((2, 4, 4), np.int32) * [[[5]], [[6]]], [4, 4, 4])
    expected = np.zeros((4, 4, 4), np.int32)
    expected[0], expected[2] = 5, 6
    np.testing.assert_array_equal(run(slices), expected)
    with pytest.raises(ValueError, match="updates has shape"):
        tf.scatter_nd([[0], [1]], [1.0, 2.0, 3.0], [4])
    bad = tf.scatter_nd([[0], [4]], [1.0, 2.0], [4])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices\[1\] = \[4\] does not index into output shape \[4\]"):
        run(bad)
    numeric_jacobian_check(lambda u: tf.scatter_nd([[1, 0], [0, 1], [1, 0]], u, [2, 2]),
                           np.array([1.0, 2.0, 3.0]))


def test_scatter_nd_update_add_sub_on_a_variable():
    ref = tf.Variable([1, 2, 3, 4, 5, 6, 7, 8], name="ref")
    indices = tf.constant([[4], [3], [1], [7]])
    with tf.Session() as sess:
        sess.run(ref.initializer)
        np.testing.assert_array_equal(
            sess.run(tf.scatter_nd_update(ref, indices, [9, 10, 11, 12])),
            [1, 11, 3, 10, 9, 6, 7, 12])
        np.testing.assert_array_equal(sess.run(tf.scatter_nd_add(ref, indices, [1, 1, 1, 1])),
                                      [1, 12, 3, 11, 10, 6, 7, 13])
        np.testing.assert_array_equal(sess.run(tf.scatter_nd_sub(ref, [[0], [0]], [1, 1])),
                                      [-1, 12, 3, 11, 10, 6, 7, 13])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = \[8\] does not index into variable 'ref'"):
            sess.run(tf.scatter_nd_add(ref, [[0], [8]], [100, 100]))
        np.testing.assert_array_equal(sess.run(ref), [-1, 12, 3, 11, 10, 6, 7, 13])
    with pytest.raises(TypeError, match="ref must be a Variable"):
        tf.scatter_nd_update(tf.constant([1, 2]), [[0]], [3])


def test_tensor_scatter_update_add_sub_and_their_gradients():
    tensor = np.ones((4, 2), np.float32)
    indices = [[0, 1], [3, 0]]
    np.testing.assert_array_equal(run(tf.tensor_scatter_update(tensor, indices, [5, 6])),
                                  [[1, 5], [1, 1], [1, 1], [6, 1]])
    np.testing.assert_array_equal(run(tf.tensor_scatter_nd_add(tensor, indices, [5, 6])),
                                  [[1, 6], [1, 1], [1, 1], [7, 1]])
    np.testing.assert_array_equal(run(tf.tensor_scatter_sub(tensor, [[2]], [[3, 4]])),
                                  [[1, 1], [1, 1], [-2, -3], [1, 1]])
    base = np.random.RandomState(3).uniform(-1, 1, (4, 2))
    for op in (tf.tensor_scatter_update, tf.tensor_scatter_add, tf.tensor_scatter_sub):
        numeric_jacobian_check(lambda t: op(t, indices, [5.0, 6.0]), base)
        numeric_jacobian_check(lambda u: op(base, indices, u), np.array([0.5, -0.25]))


def test_sparse_to_dense_gradient():
    numeric_jacobian_check(
        lambda v: tf.sparse_to_dense([[0, 1], [2, 0]], [3, 2], v, default_value=0.0),
        np.array([0.5, -2.0]))
    default = tf.placeholder(tf.float64, [])
    values = tf.placeholder(tf.float64, [2])
    dense = tf.sparse_to_dense([1, 3], [5], values, default)
    d_values, d_default = tf.gradients(tf.reduce_sum(dense * [1.0, 2.0, 3.0, 4.0, 5.0]),
                                       [values, default])
    with tf.Session() as sess:
        got = sess.run([d_values, d_default], {values: [7.0, 8.0], default: 1.0})
    np.testing.assert_allclose(got[0], [2.0, 4.0])
    np.testing.assert_allclose(got[1], 1.0 + 3.0 + 5.0)


def test_build_errors_are_also_value_and_type_errors_as_tensorflow_raises():
    with pytest.raises(ValueError) as info:
        tf.gather_nd(np.ones((2, 2)), [[0, 0, 0]], name="too_deep")
    assert isinstance(info.value, tf.errors.InvalidArgumentError)
    assert "too_deep" in str(info.value)
    with pytest.raises(TypeError) as info:
        tf.sparse_segment_mean(np.ones((2, 2), np.int64), [0], [0])
    assert isinstance(info.value, tf.errors.InvalidArgumentError)
    assert "int64" in str(info.value)
    np.testing.assert_array_equal(run(tf.constant([], tf.int64)), np.zeros(0, np.int64))


def test_sparse_to_dense_gradient_with_shapes_known_only_when_running():
    indices = tf.placeholder(tf.int64)
    values = tf.placeholder(tf.float64)
    dense = tf.sparse_to_dense(indices, [3, 3], values, np.float64(0.5))
    weights = np.arange(9, dtype=np.float64).reshape(3, 3)
    d_values, d_default = tf.gradients(tf.reduce_sum(dense * weights),
                                       [values, dense.op.inputs[3]])
    with tf.Session() as sess:
        got = sess.run([d_values, d_default], {indices: [[0, 0], [1, 1]], values: [1.0, 2.0]})
        np.testing.assert_allclose(got[0], [0.0, 4.0])
        np.testing.assert_allclose(got[1], weights.sum() - 4.0)
        one_value = sess.run(d_values, {indices: [[0, 0], [1, 1]], values: 3.0})
        np.testing.assert_allclose(one_value, 4.0)


def test_input_dtype_mismatch_is_a_type_error_and_keeps_its_error_code():
    with pytest.raises(TypeError) as info:
        tf.tensor_scatter_update(tf.zeros([3]), [[0]], tf.constant([1]))
    assert tf.errors.error_code_from_exception_type(type(info.value)) == \
        tf.errors.INVALID_ARGUMENT


def np_segment_reduce(x, ids, reduce_fn, num_segments=None, initial=0):
    """numpy's segment reduction: slices of x (ids a prefix of its shape) by id, negative ids
    dropped, empty segments `initial`."""
    ids = np.asarray(ids)
    rows = ids.max() + 1 if num_segments is None else num_segments
    flat = x.reshape((ids.size,) + x.shape[ids.ndim:])
    out = []
    for s in range(rows):
        members = flat[ids.ravel() == s]
        out.append(reduce_fn(members, axis=0) if len(members) else
                   np.full(x.shape[ids.ndim:], initial, x.dtype))
    return np.array(out, dtype=x.dtype)


SORTED = {"sum": (tf.segment_sum, np.sum), "mean": (tf.segment_mean, np.mean),
          "prod": (tf.segment_prod, np.prod), "min": (tf.segment_min, np.min),
          "max": (tf.segment_max, np.max)}


@pytest.mark.parametrize("reduction", sorted(SORTED))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_segment_reductions_values(reduction, dtype):
    op, np_op = SORTED[reduction]
    x = np.arange(1, 21).reshape(10, 2).astype(dtype)
    ids = [i // 3 for i in range(10)]
    out = op(x, ids)
    assert out.shape.as_list() == [None, 2]
    expected = np_segment_reduce(x, ids, np_op)
    if dtype in (np.int32, np.int64) and reduction == "mean":
        expected = np_segment_reduce(x, ids, lambda m, axis: np.sum(m, axis) // len(m))
    np.testing.assert_allclose(run(out), expected, rtol=1e-6)
    # A hole: segment 1 and 2 empty (1 for prod, 0 otherwise).
    holes = op(x[:4], [0, 0, 3, 3])
    initial = 1 if reduction == "prod" else 0
    np.testing.assert_allclose(run(holes), np_segment_reduce(x[:4], [0, 0, 3, 3], np_op,
                                                             initial=initial), rtol=1e-6)


@pytest.mark.parametrize("ids, message", [
    ([-1, -1, 0, 0], r"Segment id -1 out of range \[0, 1\), possibly because 'segment_ids' "
                     "input is not sorted."),
    ([0, 1, 0, 1], "segment ids are not increasing"),
    ([1, 0, 0, 0], "segment ids are not increasing"),  # the order first, as TensorFlow
    ([0, 1, 2, 0], r"Segment id 1 out of range \[0, 1\), possibly because"),
    ([0, 0, 0, -1], "segment ids must be >= 0"),
    ([0, 0, 0, -2], "segment ids must be >= 0"),
])
def test_segment_ids_invalid(ids, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        run(tf.segment_sum(np.ones((4, 4), np.float32), ids))


def test_segment_ids_shape_and_size():
    with pytest.raises(ValueError):
        tf.segment_sum(np.ones((4, 4)), tf.constant([0, 1, 2, 2], shape=[2, 2]))
    with pytest.raises(ValueError, match="segment_ids should be the same size as dimension 0"):
        tf.segment_sum(np.ones((4, 4)), [0, 1])
    x = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="segment_ids should be the same size as dimension 0"):
        with tf.Session() as sess:
            sess.run(tf.segment_sum(x, [0, 1]), {x: np.ones((4, 4))})


@pytest.mark.parametrize("reduction", ["sum", "mean", "prod", "min", "max"])
def test_segment_gradients(reduction):
    op = SORTED[reduction][0]
    x0 = np.random.RandomState(4).uniform(-1, 1, (4, 4))
    numeric_jacobian_check(lambda x: op(x, [0, 1, 2, 2]), x0)


UNSORTED = {"sum": (tf.unsorted_segment_sum, np.sum, 0),
            "mean": (tf.unsorted_segment_mean, np.mean, 0),
            "sqrt_n": (tf.unsorted_segment_sqrt_n,
                       lambda m, axis: np.sum(m, axis) / np.sqrt(len(m)), 0),
            "prod": (tf.unsorted_segment_prod, np.prod, 1),
            "min": (tf.unsorted_segment_min, np.min, None),
            "max": (tf.unsorted_segment_max, np.max, None)}


@pytest.mark.parametrize("reduction", sorted(UNSORTED))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_unsorted_segment_values(reduction, dtype):
    op, np_op, initial = UNSORTED[reduction]
    if reduction in ("mean", "sqrt_n") and dtype in (np.int32, np.int64):
        return  # TensorFlow's test skips these too (integer division)
    if initial is None:
        initial = (np.finfo(dtype).max if reduction == "min" else np.finfo(dtype).min) \
            if np.dtype(dtype).kind == "f" else \
            (np.iinfo(dtype).max if reduction == "min" else np.iinfo(dtype).min)
    flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    for ids in (flat, flat.reshape(5, 2)):
        x = np.arange(1, ids.size * 2 + 1).reshape(ids.shape + (2,)).astype(dtype)
        out = op(x, ids, 12)
        assert out.shape.as_list() == [12, 2]
        np.testing.assert_allclose(run(out), np_segment_reduce(x, ids, np_op, 12, initial),
                                   rtol=1e-6)
    # Negative ids are dropped.
    x = np.arange(1, 7).reshape(3, 2).astype(dtype)
    np.testing.assert_allclose(run(op(x, [1, -1, 1], 2)),
                               np_segment_reduce(x[[0, 2]], [1, 1], np_op, 2, initial),
                               rtol=1e-6)


@pytest.mark.parametrize("reduction", sorted(UNSORTED))
def test_unsorted_segment_gradients(reduction):
    op = UNSORTED[reduction][0]
    # Every segment has slices: an empty one's huge identity has no finite difference.
    ids = np.array([0, 4, 0, -1, 3, -1, 4, 2, 1, 3])
    x0 = np.random.RandomState(5).uniform(0.5, 2, (10, 2))
    numeric_jacobian_check(lambda x: op(x, ids, 5), x0)
    numeric_jacobian_check(lambda x: op(x, ids.reshape(5, 2), 5), x0.reshape(5, 2, 2))


def test_unsorted_segment_prod_gradient_with_zeros():
    values = np.array([0, 0, 1, 0, 2, 2, 3, 3, 3], np.float64)
    x = tf.constant(values)
    for ids, expected in (([0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 0, 0, 4, 0, 0, 9, 9, 9]),
                          ([-1, 0, 0, -1, 1, 1, -1, 2, 2], [0, 1, 0, 0, 2, 2, 0, 3, 3])):
        out = tf.unsorted_segment_prod(x, ids, 3)
        (grad,) = tf.gradients(tf.reduce_sum(out), [x])
        np.testing.assert_allclose(run(grad), expected)
    sorted_prod = tf.segment_prod(x, [0, 0, 0, 1, 1, 1, 2, 2, 2])
    (grad,) = tf.gradients(tf.reduce_sum(sorted_prod), [x])
    np.testing.assert_allclose(run(grad), [0, 0, 0, 4, 0, 0, 9, 9, 9])
