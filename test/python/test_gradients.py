"""tf.gradients against finite differences (float64), and its errors."""

import numpy as np
import pytest

import troupe as tf

from conftest import check_gradient as check


W = np.random.default_rng(5).normal(size=(3, 4))


@pytest.mark.parametrize("name, build, shape", [
    ("matmul", lambda x: tf.reduce_sum(tf.matmul(x, W)), (2, 3)),
    ("matmul_t", lambda x: tf.reduce_sum(tf.matmul(W, x, transpose_a=True)), (3, 2)),
    ("relu_square", lambda x: tf.reduce_sum(tf.square(tf.nn.relu(x))), (3, 3)),
    ("softmax", lambda x: tf.reduce_sum(tf.nn.softmax(x) * np.arange(4.0)), (2, 4)),
    ("sigmoid_tanh", lambda x: tf.reduce_mean(tf.sigmoid(x) * tf.tanh(x)), (5,)),
    ("exp_log_div", lambda x: tf.reduce_sum(tf.log(tf.exp(x) + 1.0) / 3.0), (2, 2)),
    ("bias_add", lambda x: tf.reduce_sum(tf.square(tf.nn.bias_add(x, np.ones(3)))), (2, 3)),
    ("max_reduce", lambda x: tf.reduce_sum(tf.reduce_max(x, 1)), (3, 4)),
    ("mean_keepdims", lambda x: tf.reduce_sum(x - tf.reduce_mean(x, 1, keepdims=True)) +
     tf.reduce_sum(tf.square(x)), (2, 3)),
    ("reshape", lambda x: tf.reduce_sum(tf.reshape(x, [6]) * np.arange(6.0)), (2, 3)),
    ("cross_entropy", lambda x: tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([1, 0]), logits=x)),
     (2, 3)),
])
def test_gradient_matches_finite_differences(name, build, shape):
    check(build, shape)


def test_gradients_of_variables_and_unconnected_none():
    w = tf.Variable([[1.0], [2.0]])
    unused = tf.Variable(1.0)
    x = tf.constant([[3.0, 4.0]])
    loss = tf.reduce_sum(tf.matmul(x, w))
    grads = tf.gradients(loss, [w, unused])
    assert grads[1] is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(grads[0]), [[3.0], [4.0]])


def test_grad_ys_weights_and_errors():
    x = tf.constant([1.0, 2.0])
    y = x * 3.0
    (g,) = tf.gradients(y, x, grad_ys=tf.constant([1.0, 10.0]))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(g), [3.0, 30.0])
    with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
        tf.gradients(y, x, grad_ys=[x, x])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.gradients(y, x, grad_ys=tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="must be Tensors"):
        tf.gradients(y, [3])


def test_grad_ys_take_values_and_none_as_tensorflow():
    x = tf.constant([1.0, 2.0])
    y, z = x * 3.0, x * x
    gx, = tf.gradients([y, z], [x], grad_ys=[[1.0, 10.0], None])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(gx), [3.0 + 2.0, 30.0 + 4.0])
    with pytest.raises(ValueError, match="Passed 1 grad_ys for 2 ys"):
        tf.gradients([y, z], [x], grad_ys=[None])
    with pytest.raises(TypeError, match="grad_ys for Mul"):
        tf.gradients([y], [x], grad_ys=["text"])


def test_stop_gradients_treats_the_tensors_as_constants():
    """TensorFlow's gradients_test testStopGradients, ported: no gradient flows through a
    stop tensor, which still gets its own gradient when it is an x."""
    a = tf.constant(3.0)
    b = a * a
    c = b * a
    plain, = tf.gradients(c, a)
    stopped, = tf.gradients(c, a, stop_gradients=[b])
    both = tf.gradients(c, [a, b], stop_gradients=b)
    itself, = tf.gradients(b, a, stop_gradients=a)
    only_path = tf.gradients(b, a, stop_gradients=[b])
    with tf.Session() as sess:
        assert sess.run(plain) == 27.0
        assert sess.run(stopped) == 9.0
        assert sess.run(both) == [9.0, 3.0]
        assert sess.run(itself) == 6.0
    assert only_path == [None]
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    with pytest.raises(ValueError, match="another graph"):
        tf.gradients(c, a, stop_gradients=[foreign])
