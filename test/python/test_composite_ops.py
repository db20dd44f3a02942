"""Ops TF1 programs use that troupe builds from others, as TensorFlow 1.x does or documents:
sequence_mask, count_nonzero, lin_space, eye, trace, norm, bincount, confusion_matrix,
meshgrid, roll, sort/argsort, space_to_depth/depth_to_space, setdiff1d, broadcast_to, the
to_* casts, nn.swish/crelu/conv1d/atrous_conv2d, weighted_cross_entropy_with_logits and
log_poisson_loss; and the trigonometric and IsNan/IsInf/IsFinite ops with their gradients
(checked against numpy and finite differences)."""

import numpy as np
import pytest

import troupe as tf


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


def test_sequence_mask():
    got = run(tf.sequence_mask([1, 3, 2], 5), tf.sequence_mask([[1, 3], [2, 0]]),
              tf.sequence_mask(tf.constant([2, 0], tf.int64), 3, dtype=tf.float32))
    np.testing.assert_array_equal(got[0], [[1, 0, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(got[1], [[[1, 0, 0], [1, 1, 1]], [[1, 1, 0], [0, 0, 0]]])
    assert got[2].dtype == np.float32
    np.testing.assert_array_equal(got[2], [[1, 1, 0], [0, 0, 0]])
    assert tf.sequence_mask([1, 3, 2], 5).shape.as_list() == [3, 5]
    with pytest.raises(TypeError, match="integers"):
        tf.sequence_mask([1.0, 2.0])


def test_count_nonzero_lin_space_eye_trace():
    x = np.array([[0, 1, 7], [0, 0, 3]], dtype=np.float32)
    got = run(tf.count_nonzero(x), tf.count_nonzero(x, axis=1), tf.count_nonzero(["", "a"]),
              tf.lin_space(10.0, 13.0, 4), tf.linspace(0.0, 1.0, 1), tf.eye(2, 3),
              tf.eye(2, batch_shape=[3], dtype=tf.int32),
              tf.trace(np.arange(9, dtype=np.float32).reshape(3, 3)))
    assert got[0] == 3 and got[0].dtype == np.int64
    np.testing.assert_array_equal(got[1], [2, 1])
    assert got[2] == 1
    np.testing.assert_allclose(got[3], [10, 11, 12, 13])
    np.testing.assert_allclose(got[4], [0])
    np.testing.assert_array_equal(got[5], np.eye(2, 3))
    assert got[6].shape == (3, 2, 2) and got[6].dtype == np.int32
    assert got[7] == 12
    with pytest.raises(ValueError, match="Requires num > 0"):
        tf.lin_space(0.0, 1.0, 0)


def test_norms_match_numpy():
    a = np.array([[3.0, -4.0, 1.0], [0.5, 2.0, -2.0]])
    got = run(tf.norm(a), tf.norm(a, axis=1), tf.norm(a, ord=1, axis=0),
              tf.norm(a, ord=np.inf, axis=1, keepdims=True), tf.norm(a, ord=3, axis=1),
              tf.norm(a, ord="fro", axis=[0, 1]), tf.norm(a, ord=1, axis=[0, 1]),
              tf.norm(a, ord=np.inf, axis=[0, 1]), tf.linalg.norm(a))
    np.testing.assert_allclose(got[0], np.linalg.norm(a))
    np.testing.assert_allclose(got[1], np.linalg.norm(a, axis=1))
    np.testing.assert_allclose(got[2], np.linalg.norm(a, ord=1, axis=0))
    np.testing.assert_allclose(got[3], np.linalg.norm(a, ord=np.inf, axis=1, keepdims=True))
    np.testing.assert_allclose(got[4], np.linalg.norm(a, ord=3, axis=1))
    np.testing.assert_allclose(got[5], np.linalg.norm(a, "fro"))
    np.testing.assert_allclose(got[6], np.linalg.norm(a, 1))
    np.testing.assert_allclose(got[7], np.linalg.norm(a, np.inf))
    np.testing.assert_allclose(got[8], np.linalg.norm(a))
    with pytest.raises(ValueError, match="supported vector norm"):
        tf.norm(a, ord="fro")
    with pytest.raises(ValueError, match="supported matrix norm"):
        tf.norm(a, ord=2, axis=[0, 1])


def test_bincount_and_confusion_matrix():
    arr = np.array([1, 1, 2, 3, 2, 4, 4, 5], dtype=np.int32)
    got = run(tf.bincount(arr), tf.bincount(arr, minlength=8), tf.bincount(arr, maxlength=3),
              tf.bincount(arr, weights=np.arange(8.0), dtype=tf.float64),
              tf.bincount(np.zeros([0], np.int32)),
              tf.confusion_matrix([1, 2, 4], [2, 2, 4]),
              tf.confusion_matrix([0, 1], [1, 1], num_classes=3, weights=[2.0, 0.5],
                                  dtype=tf.float32))
    np.testing.assert_array_equal(got[0], np.bincount(arr))
    np.testing.assert_array_equal(got[1], np.bincount(arr, minlength=8))
    np.testing.assert_array_equal(got[2], [0, 2, 2])
    np.testing.assert_array_equal(got[3], np.bincount(arr, weights=np.arange(8.0)))
    assert got[4].shape == (0,)
    expected = np.zeros([5, 5], np.int32)
    expected[1, 2] = expected[2, 2] = expected[4, 4] = 1
    np.testing.assert_array_equal(got[5], expected)
    np.testing.assert_array_equal(got[6], [[0, 2, 0], [0, 0.5, 0], [0, 0, 0]])


def test_meshgrid_roll_and_sort():
    x, y = np.array([1, 2, 3]), np.array([4, 5])
    xy = tf.meshgrid(x, y)
    ij = tf.meshgrid(x, y, indexing="ij")
    v = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
    got = run(*xy, *ij, tf.roll([0, 1, 2, 3, 4], 2, 0), tf.roll(v, [1, -1], [0, 1]),
              tf.sort(v), tf.sort(v, axis=0, direction="DESCENDING"), tf.argsort(v))
    for mine, theirs in zip(got[:2], np.meshgrid(x, y)):
        np.testing.assert_array_equal(mine, theirs)
    for mine, theirs in zip(got[2:4], np.meshgrid(x, y, indexing="ij")):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(got[4], np.roll([0, 1, 2, 3, 4], 2))
    np.testing.assert_array_equal(got[5], np.roll(v, [1, -1], [0, 1]))
    np.testing.assert_array_equal(got[6], np.sort(v))
    np.testing.assert_array_equal(got[7], -np.sort(-v, axis=0))
    np.testing.assert_array_equal(got[8], np.argsort(v))
    with pytest.raises(ValueError, match="Unknown direction"):
        tf.sort(v, direction="UP")


def test_space_to_depth_and_back_and_setdiff1d():
    x = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    packed = tf.space_to_depth(x, 2)
    back = tf.depth_to_space(packed, 2)
    out, idx = tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    got = run(packed, back, out, idx)
    expected = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(2, 2, 3, 12)
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], x)
    np.testing.assert_array_equal(got[2], [2, 4, 6])
    np.testing.assert_array_equal(got[3], [1, 3, 5])
    assert got[3].dtype == np.int32


def test_casts_and_broadcast_to():
    got = run(tf.to_int32([1.7, -2.2]), tf.to_int64([3]), tf.to_double([1]),
              tf.broadcast_to([1, 2, 3], [2, 3]))
    assert got[0].dtype == np.int32 and list(got[0]) == [1, -2]
    assert got[1].dtype == np.int64 and got[2].dtype == np.float64
    np.testing.assert_array_equal(got[3], [[1, 2, 3], [1, 2, 3]])


def test_nn_composites():
    x = np.array([-2.0, -0.5, 0.0, 1.5, 3.0])
    z = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    sig = 1 / (1 + np.exp(-x))
    got = run(tf.nn.swish(x), tf.nn.crelu(x),
              tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=3.0),
              tf.nn.log_poisson_loss(np.array([0.0, 1.0, 2.0, 5.0, 9.0]), x),
              tf.nn.log_poisson_loss(np.array([0.0, 1.0, 2.0, 5.0, 9.0]), x,
                                     compute_full_loss=True))
    np.testing.assert_allclose(got[0], x * sig)
    np.testing.assert_allclose(got[1], np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)]))
    np.testing.assert_allclose(got[2], -(3.0 * z * np.log(sig) + (1 - z) * np.log(1 - sig)),
                               rtol=1e-6)
    t = np.array([0.0, 1.0, 2.0, 5.0, 9.0])
    np.testing.assert_allclose(got[3], np.exp(x) - x * t)
    stirling = np.where(t > 1, t * np.log(np.maximum(t, 1)) - t +
                        0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0)
    np.testing.assert_allclose(got[4], np.exp(x) - x * t + stirling)


def test_conv1d_and_atrous_conv2d_against_numpy():
    rng = np.random.default_rng(0)
    value = rng.standard_normal((2, 9, 3)).astype(np.float32)
    filters = rng.standard_normal((3, 3, 4)).astype(np.float32)
    image = rng.standard_normal((1, 7, 7, 2)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 2, 1)).astype(np.float32)
    got = run(tf.nn.conv1d(value, filters, stride=2, padding="VALID"),
              tf.nn.atrous_conv2d(image, kernel, rate=2, padding="VALID"))
    expected = np.stack([np.einsum("bki,kio->bo", value[:, s:s + 3], filters)
                         for s in range(0, 7, 2)], axis=1)
    np.testing.assert_allclose(got[0], expected, rtol=1e-5, atol=1e-5)
    atrous = np.zeros((1, 3, 3, 1), np.float32)
    for i in range(3):
        for j in range(3):
            patch = image[0, i:i + 5:2, j:j + 5:2, :]
            atrous[0, i, j, 0] = np.sum(patch * kernel[:, :, :, 0])
    np.testing.assert_allclose(got[1], atrous, rtol=1e-5, atol=1e-5)


def test_trigonometry_and_value_tests():
    x = np.array([-0.9, -0.3, 0.0, 0.4, 0.8])
    got = run(tf.tan(x), tf.asin(x), tf.acos(x), tf.atan(x), tf.sinh(x), tf.cosh(x),
              tf.atan2(x, x[::-1].copy()), tf.asin([2.0]))
    for mine, theirs in zip(got, [np.tan(x), np.arcsin(x), np.arccos(x), np.arctan(x),
                                  np.sinh(x), np.cosh(x), np.arctan2(x, x[::-1])]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert np.isnan(got[7][0])
    v = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], np.float32)
    nan, inf, finite = run(tf.is_nan(v), tf.is_inf(v), tf.is_finite(v))
    np.testing.assert_array_equal(nan, np.isnan(v))
    np.testing.assert_array_equal(inf, np.isinf(v))
    np.testing.assert_array_equal(finite, np.isfinite(v))
    assert tf.gradients(tf.reduce_sum(tf.cast(tf.is_nan(tf.constant(v)), tf.float32)),
                        tf.constant(v)) == [None]
    with pytest.raises(TypeError):
        tf.is_nan([1, 2])  # integers: float32 and float64 only


@pytest.mark.parametrize("name,fn,lo,hi", [
    ("tan", tf.tan, -1.2, 1.2), ("asin", tf.asin, -0.9, 0.9), ("acos", tf.acos, -0.9, 0.9),
    ("atan", tf.atan, -3.0, 3.0), ("sinh", tf.sinh, -2.0, 2.0), ("cosh", tf.cosh, -2.0, 2.0)])
def test_trigonometric_gradients_against_finite_differences(name, fn, lo, hi):
    x0 = np.linspace(lo, hi, 7)
    x = tf.placeholder(tf.float64, [7])
    y = tf.reduce_sum(fn(x) * np.arange(1.0, 8.0))
    grad = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        analytic = sess.run(grad, {x: x0})
        eps = 1e-6
        numeric = [(sess.run(y, {x: x0 + eps * e}) - sess.run(y, {x: x0 - eps * e})) / (2 * eps)
                   for e in np.eye(7)]
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)


def test_atan2_gradient_with_broadcasting():
    y0, x0 = np.array([[0.5, -1.0, 2.0]]), np.array([[1.5], [-0.7]])
    y = tf.placeholder(tf.float64, [1, 3])
    x = tf.placeholder(tf.float64, [2, 1])
    out = tf.reduce_sum(tf.atan2(y, x) * np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    gy, gx = tf.gradients(out, [y, x])
    with tf.Session() as sess:
        got_y, got_x = sess.run([gy, gx], {y: y0, x: x0})
        eps = 1e-6

        def numeric(var, value):
            flat = []
            for i in range(value.size):
                e = np.zeros(value.size)
                e[i] = eps
                e = e.reshape(value.shape)
                feed_plus = {y: y0, x: x0, var: value + e}
                feed_minus = {y: y0, x: x0, var: value - e}
                flat.append((sess.run(out, feed_plus) - sess.run(out, feed_minus)) / (2 * eps))
            return np.array(flat).reshape(value.shape)
        np.testing.assert_allclose(got_y, numeric(y, y0), rtol=1e-5)
        np.testing.assert_allclose(got_x, numeric(x, x0), rtol=1e-5)


def test_review_cases_of_the_composites():
    # bincount of weights takes their dtype; a negative value fails; trace keeps infinities
    # off the diagonal out; sort refuses an axis out of range; static shapes are kept.
    weighted = tf.bincount([0, 1, 1], weights=[0.5, 1.5, 2.0])
    assert weighted.dtype == tf.float32
    negative = tf.bincount(tf.constant([1, -1]))
    inf = np.array([[1.0, np.inf], [-np.inf, 2.0]], np.float32)
    got = run(weighted, tf.trace(inf), tf.sequence_mask(tf.zeros([0], tf.int32)))
    np.testing.assert_array_equal(got[0], [0.5, 3.5])
    assert got[1] == 3.0
    assert got[2].shape == (0, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input arr must be non-negative"):
        run(negative)
    v = tf.zeros([2, 3])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        tf.sort(v, axis=2)
    assert tf.sort(v).shape.as_list() == [2, 3]
    assert tf.argsort(v, axis=0).shape.as_list() == [2, 3]
    assert tf.roll(v, 1, 1).shape.as_list() == [2, 3]
    assert tf.space_to_depth(tf.zeros([1, 4, 6, 3]), 2).shape.as_list() == [1, 2, 3, 12]
    assert tf.depth_to_space(tf.zeros([1, 2, 3, 12]), 2).shape.as_list() == [1, 4, 6, 3]
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.space_to_depth(tf.zeros([1, 5, 6, 3]), 2)
    xs, ys = tf.meshgrid(tf.zeros([3]), tf.zeros([2]))
    assert xs.shape.as_list() == [2, 3] and ys.shape.as_list() == [2, 3]
    value = np.ones([1, 7, 2], np.float32)
    filters = np.ones([2, 2, 1], np.float32)
    dilated = tf.nn.conv1d(value, filters, stride=[1, 1, 1], padding="VALID",
                           dilations=[1, 3, 1])
    assert run(dilated)[0].shape == (1, 4, 1)  # taps 3 apart: 7 - 3 = 4 outputs


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(5,), (5,)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]), ("ij,jk", [(2, 3), (3, 4)]), ("bqhd,bkhd->bhqk",
                                                            [(2, 3, 2, 4), (2, 5, 2, 4)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ab,cd->", [(2, 3), (4, 5)]), ("i->i", [(3,)])])
def test_einsum_matches_numpy(equation, shapes):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in shapes]
    result = tf.einsum(equation, *[tf.constant(a) for a in arrays])
    expected = np.einsum(equation, *arrays)
    assert result.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(result)[0], expected, rtol=1e-10, atol=1e-12)


def test_einsum_gradients_and_unknown_shapes_and_errors():
    a = tf.placeholder(tf.float64, [None, 3])
    b = tf.placeholder(tf.float64, [3, None])
    product = tf.einsum("ij,jk->ik", a, b)
    assert product.shape.as_list() == [None, None]
    ga, gb = tf.gradients(tf.reduce_sum(product), [a, b])
    x, y = np.ones([2, 3]), np.arange(12.0).reshape(3, 4)
    with tf.Session() as sess:
        got, da, db = sess.run([product, ga, gb], {a: x, b: y})
    np.testing.assert_allclose(got, x @ y)
    np.testing.assert_allclose(da, np.ones([2, 4]) @ y.T)
    np.testing.assert_allclose(db, x.T @ np.ones([2, 4]))
    with pytest.raises(ValueError, match="a diagonal"):
        tf.einsum("ii->i", tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="ellipses"):
        tf.einsum("...ij->...ji", tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="2 inputs, 1 were given"):
        tf.einsum("ij,jk->ik", tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="does not have 2 dimensions"):
        tf.einsum("ij->ji", tf.zeros([2]))


def test_bands_and_diagonals_match_numpy():
    x = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4) + 1
    i, j = np.indices((3, 4))
    got = run(tf.matrix_band_part(x, 1, 0), tf.matrix_band_part(x, -1, 0),
              tf.linalg.band_part(x, 0, -1), tf.matrix_band_part(x, 0, 0),
              tf.matrix_diag([[1.0, 2.0], [3.0, 4.0]]), tf.matrix_diag_part(x),
              tf.matrix_set_diag(x, [[9.0, 8.0, 7.0], [6.0, 5.0, 4.0]]),
              tf.diag([1, 2, 3]), tf.diag_part(np.arange(16).reshape(4, 4)),
              tf.diag(np.array([[1, 2], [3, 4]])),
              tf.diag_part(np.arange(16).reshape(2, 2, 2, 2)))
    np.testing.assert_array_equal(got[0], x * ((i - j <= 1) & (j - i <= 0)))
    np.testing.assert_array_equal(got[1], x * (i >= j))
    np.testing.assert_array_equal(got[2], x * (j >= i))
    np.testing.assert_array_equal(got[3], x * (i == j))
    np.testing.assert_array_equal(got[4], [np.diag([1.0, 2.0]), np.diag([3.0, 4.0])])
    np.testing.assert_array_equal(got[5], [np.diagonal(m) for m in x])
    expected = x.copy()
    expected[0][i == j], expected[1][i == j] = [9.0, 8.0, 7.0], [6.0, 5.0, 4.0]
    np.testing.assert_array_equal(got[6], expected)
    np.testing.assert_array_equal(got[7], np.diag([1, 2, 3]))
    np.testing.assert_array_equal(got[8], [0, 5, 10, 15])
    d4 = np.zeros((2, 2, 2, 2), np.int64)
    for a in range(2):
        for b in range(2):
            d4[a, b, a, b] = [[1, 2], [3, 4]][a][b]
    np.testing.assert_array_equal(got[9], d4)
    np.testing.assert_array_equal(got[10], [[0, 5], [10, 15]])
    causal = tf.matrix_band_part(tf.ones([3, 3]), -1, 0)
    assert causal.shape.as_list() == [3, 3]
    assert tf.matrix_diag_part(tf.zeros([2, 3, 4])).shape.as_list() == [2, 3]
    assert tf.diag(tf.zeros([2, 3])).shape.as_list() == [2, 3, 2, 3]
    inf = np.array([np.inf, 1.0])
    np.testing.assert_array_equal(run(tf.matrix_diag(inf))[0], np.diag(inf))  # no inf * 0
    v = tf.placeholder(tf.float64, [3, 4])
    dv = tf.gradients(tf.reduce_sum(tf.matrix_band_part(v, -1, 0) * 2.0), v)[0]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(dv, {v: x[0]}), 2.0 * (i >= j))
    with pytest.raises(ValueError, match="even"):
        tf.diag_part(tf.zeros([2, 3, 4]))
