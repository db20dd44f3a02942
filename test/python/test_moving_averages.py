"""tf.train.ExponentialMovingAverage (TensorFlow 1.x's moving_averages_test cases, rewritten):
shadow variables and their names, the update with and without num_updates, tensors averaged
from zero, and restoring the averages into the variables for evaluation."""

import numpy as np
import pytest

import troupe as tf


def test_averages_of_variables_and_tensors():
    with tf.Graph().as_default():
        var0 = tf.Variable([10.0, 11.0], name="v0")
        var1 = tf.Variable([1.0, 2.0], name="v1")
        tensor2 = var0 + var1
        ema = tf.train.ExponentialMovingAverage(0.25, name="foo")
        update = ema.apply([var0, var1, tensor2])
        avg0, avg1, avg2 = ema.average(var0), ema.average(var1), ema.average(tensor2)
        assert avg0.op.name == "v0/foo" and ema.average_name(var0) == "v0/foo"
        assert avg2.op.name == tensor2.op.name + "/foo"
        assert avg0 not in tf.trainable_variables() and avg0 in tf.global_variables()
        assert tf.moving_average_variables() == [var0, var1]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(avg0), [10.0, 11.0])  # the initial value
            np.testing.assert_allclose(sess.run(avg1), [1.0, 2.0])
            np.testing.assert_allclose(sess.run(avg2), [0.0, 0.0])  # tensors: from zero
            sess.run(update)
            np.testing.assert_allclose(sess.run(avg0), [10.0, 11.0])
            np.testing.assert_allclose(sess.run(avg2), 0.75 * np.array([11.0, 13.0]))
            sess.run([tf.assign(var0, [20.0, 21.0])])
            sess.run(update)
            np.testing.assert_allclose(sess.run(avg0), [17.5, 18.5])
        with pytest.raises(ValueError, match="already computed for"):
            ema.apply([var0])


def test_num_updates_caps_the_decay_and_a_float_variable_only():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        step = tf.Variable(0, trainable=False, name="step")
        ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
        update = ema.apply([v])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(v, 10.0))
            sess.run(update)  # decay min(0.99, 1/10) = 0.1
            assert sess.run(ema.average(v)) == pytest.approx(9.0)
        with pytest.raises(TypeError, match="must be half, float, or double"):
            ema.apply([step])
        with pytest.raises(ValueError, match="zero_debias=True is not supported"):
            tf.train.ExponentialMovingAverage(0.9, zero_debias=True)


def test_variables_to_restore_loads_the_averages_for_evaluation(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        other = tf.Variable(5.0, name="other", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.5)
        update = ema.apply([w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(w, 3.0))
            sess.run(update)  # average 2.0
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():
        w = tf.Variable(0.0, name="w")
        other = tf.Variable(0.0, name="other", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.5)
        names = ema.variables_to_restore()
        assert names == {"w/ExponentialMovingAverage": w, "other": other}
        with tf.Session() as sess:
            tf.train.Saver(names).restore(sess, path)
            assert sess.run(w) == 2.0 and sess.run(other) == 5.0


def test_shadows_escape_the_enclosing_control_dependencies_and_name_themselves():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        step = tf.assign_add(v, 1.0)
        with tf.control_dependencies([step]):
            with tf.variable_scope("outer"):
                ema = tf.train.ExponentialMovingAverage(0.5)
                update = ema.apply([v])
        shadow = ema.average(v)
        assert shadow.op.control_inputs == []
        assert ema.average_name(v) == shadow.op.name
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(v) == 1.0  # initializing the shadow ran no step
            sess.run(update)  # the update does run after the step
            assert sess.run(v) == 2.0
        partitioned = tf.get_variable("p", [4, 2], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="is partitioned"):
            ema.apply([partitioned])
