"""SparseTensor arithmetic (TensorFlow 1.x's sparse_ops tests' cases, rewritten): products with
dense matrices and their gradients, sums over axes, retaining values, and sums of sparse and
dense or sparse tensors, against numpy."""

import numpy as np
import pytest

import troupe as tf


def _sparse(dense):
    indices = np.argwhere(dense != 0).astype(np.int64)
    return tf.SparseTensor(indices, dense[dense != 0], np.array(dense.shape, np.int64))


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


@pytest.mark.parametrize("adjoint_a,adjoint_b", [(False, False), (True, False),
                                                 (False, True), (True, True)])
def test_sparse_tensor_dense_matmul(adjoint_a, adjoint_b):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.4)
    b = rng.standard_normal((5, 3))
    a_arg = a.T.copy() if adjoint_a else a
    b_arg = b.T.copy() if adjoint_b else b
    product = tf.sparse_tensor_dense_matmul(_sparse(a_arg), b_arg, adjoint_a=adjoint_a,
                                            adjoint_b=adjoint_b)
    np.testing.assert_allclose(run(product)[0], a @ b, rtol=1e-10, atol=1e-12)


def test_sparse_matmul_gradients_against_the_dense_product():
    a = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    sp = _sparse(a)
    b = tf.placeholder(tf.float64, [3, 2])
    values = sp.values
    loss = tf.reduce_sum(tf.square(tf.sparse.matmul(sp, b)))
    d_b, d_values = tf.gradients(loss, [b, values])
    # The gradient of the dense operand is IndexedSlices here (the rows the values touch);
    # TensorFlow's is dense: the same values once densified.
    assert isinstance(d_b, tf.IndexedSlices)
    d_b = tf.convert_to_tensor(d_b)
    b0 = np.arange(6.0).reshape(3, 2)
    got_b, got_values = run(d_b, d_values, feed={b: b0})
    np.testing.assert_allclose(got_b, 2 * a.T @ (a @ b0))
    full = 2 * (a @ b0) @ b0.T
    np.testing.assert_allclose(got_values, full[a != 0])


def test_sparse_reduce_sum():
    dense = np.array([[[1.0, 0.0], [0.0, 2.0]], [[0.0, 3.0], [4.0, 0.0]]])
    sp = _sparse(dense)
    got = run(tf.sparse_reduce_sum(sp), tf.sparse_reduce_sum(sp, axis=1),
              tf.sparse_reduce_sum(sp, axis=[0, 2]), tf.sparse_reduce_sum(sp, -1, keepdims=True),
              tf.sparse.reduce_sum(sp, axis=2, keep_dims=False))
    assert got[0] == 10.0
    np.testing.assert_array_equal(got[1], dense.sum(axis=1))
    np.testing.assert_array_equal(got[2], dense.sum(axis=(0, 2)))
    np.testing.assert_array_equal(got[3], dense.sum(axis=-1, keepdims=True))
    np.testing.assert_array_equal(got[4], dense.sum(axis=2))


def test_sparse_retain_and_add():
    a = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    b = np.array([[0.0, 5.0, -2.0], [0.0, 0.0, 1e-3]])
    retained = tf.sparse_retain(_sparse(a), [True, False, True])
    both = tf.sparse_add(_sparse(a), _sparse(b))
    thresholded = tf.sparse_add(_sparse(a), _sparse(b), thresh=0.01)
    with_dense = tf.sparse_add(_sparse(a), b)
    got = run(tf.sparse.to_dense(retained), both.indices, both.values, both.dense_shape,
              thresholded.indices, with_dense, tf.sparse.add(b, _sparse(a)))
    np.testing.assert_array_equal(got[0], [[1.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    # (0, 2) sums to 0 but stays (thresh 0 drops nothing), in row-major order.
    np.testing.assert_array_equal(got[1], [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2]])
    np.testing.assert_allclose(got[2], [1.0, 5.0, 0.0, 3.0, 1e-3])
    np.testing.assert_array_equal(got[3], [2, 3])
    # thresh drops only sums of both operands' values: (0, 2) (1 - 2 + ... = 0) goes, (1, 2)
    # (b's alone, 1e-3) stays, as TensorFlow's.
    np.testing.assert_array_equal(got[4], [[0, 0], [0, 1], [1, 1], [1, 2]])
    np.testing.assert_allclose(got[5], a + b)
    np.testing.assert_allclose(got[6], a + b)
    with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
        tf.sparse_add(a, b)
    with pytest.raises(TypeError, match="must be a SparseTensor"):
        tf.sparse_reduce_sum(a)
    with pytest.raises(ValueError, match="Invalid reduction dimension 2"):
        tf.sparse_reduce_sum(_sparse(a), axis=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="shapes do not match"):
        run(tf.sparse_add(_sparse(a), _sparse(np.ones([3, 3]))).values)
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimension does not match"):
        run(tf.sparse_tensor_dense_matmul(_sparse(a), np.ones([4, 2])))
