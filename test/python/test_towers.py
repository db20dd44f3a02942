"""Several CPU devices in one task, and the multi-tower example (examples/python/towers.py): k
towers with b examples each train to the same weights as one device with k * b examples."""
import os
import sys

import numpy as np
import pytest

import troupe as tf

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
sys.path.insert(0, os.path.abspath(EXAMPLES))
import towers  # noqa: E402


def synthetic(n, seed=3):
    rng = np.random.RandomState(seed)
    images = rng.rand(n, 784).astype(np.float32)
    labels = (images[:, :10].argmax(axis=1)).astype(np.int64)  # a learnable rule
    return images, labels


@pytest.mark.parametrize("count", [2, 3])
def test_towers_train_as_one_device_with_the_whole_batch(count):
    images, labels = synthetic(count * 32 * 8)
    one_losses, one = towers.train(1, "cpu", images, labels, steps=8, batch_size=count * 32,
                                   hidden_units=32)
    k_losses, k = towers.train(count, "cpu", images, labels, steps=8, batch_size=32,
                               hidden_units=32)
    assert sorted(one) == sorted(k)
    for name in one:
        np.testing.assert_allclose(k[name], one[name], rtol=1e-4, atol=1e-5, err_msg=name)
    np.testing.assert_allclose(k_losses, one_losses, rtol=1e-4)
    assert one_losses[-1] < one_losses[0]


def test_the_towers_run_on_their_own_devices():
    with tf.Graph().as_default():
        x, y, train_op, loss, _ = towers.build(2, "cpu", 8, 0.1)
        tower_ops = [op for op in tf.get_default_graph().get_operations()
                     if op.name.startswith("tower_1/") and op.type == "MatMul"]
        assert tower_ops and all(op.device.endswith("CPU:1") for op in tower_ops)
        variables = [v for v in tf.trainable_variables()]
        assert variables and all(v.device.endswith("CPU:0") for v in variables)


def test_a_tower_on_a_device_the_task_lacks_is_an_error():
    images, labels = synthetic(64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:1"):
        with tf.Graph().as_default():
            x, y, train_op, loss, _ = towers.build(2, "cpu", 8, 0.1)
            with tf.Session() as sess:  # one CPU device
                sess.run(tf.global_variables_initializer())
                sess.run(train_op, {x: images, y: labels})


def test_variable_scope_objects_as_tensorflow_yields_and_reenters_them():
    with tf.Graph().as_default():
        top = tf.get_variable_scope()
        assert top.name == "" and not top.reuse
        with tf.variable_scope("foo") as foo:
            assert foo.name == "foo" and foo.original_name_scope == "foo/"
            with tf.variable_scope("bar") as bar:
                assert bar.name == "foo/bar"
                assert tf.get_variable_scope().name == "foo/bar"
            v = tf.get_variable("v", [1])
            assert v.op.name == "foo/v"
            with pytest.raises(ValueError, match="already exists"):
                tf.get_variable("v", [1])
            foo.reuse_variables()
            assert foo.reuse and tf.get_variable_scope().reuse
            assert tf.get_variable("v", [1]) is v
        # reuse_variables() lasts until its scope is left; re-entering takes the scope's name.
        with tf.variable_scope(foo):
            assert tf.get_variable_scope().name == "foo" and not tf.get_variable_scope().reuse
            with pytest.raises(ValueError, match="already exists"):
                tf.get_variable("v", [1])
        with tf.variable_scope(foo, reuse=True):
            assert tf.get_variable("v", [1]) is v
        # The multi-tower idiom: reuse set inside a re-entered top-level scope ends with it.
        with tf.variable_scope(tf.get_variable_scope()):
            tf.get_variable("w", [1])
            tf.get_variable_scope().reuse_variables()
            tf.get_variable("w", [1])
        assert not tf.get_variable_scope().reuse
        assert isinstance(top, tf.VariableScope)
