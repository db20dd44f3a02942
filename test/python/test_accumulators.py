"""tf.ConditionalAccumulator and tf.SparseConditionalAccumulator (TensorFlow 1.x's
conditional_accumulator_test and sparse_conditional_accumulator_test, ported): stale gradients
dropped, averages and sums, the sparse one's element-wise average, takes waiting for enough
gradients, TensorFlow's shape checks; and SyncReplicasOptimizer accumulating an embedding
table's gradient sparsely, its update equal to the plain sparse one."""

import threading

import numpy as np
import pytest

import troupe as tf
from conftest import free_ports


def test_dense_accumulator_averages_sums_and_drops_stale_gradients():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], name="Q")
    total = tf.ConditionalAccumulator(tf.float64, shape=[2], reduction_type="SUM")
    assert acc.dtype == tf.float32 and acc.name == "Q"
    with tf.Session() as sess:
        sess.run(acc.apply_grad([1.0, 2.0]))
        sess.run(acc.apply_grad([3.0, 6.0]))
        assert sess.run(acc.num_accumulated()) == 2
        taken = acc.take_grad(2)
        assert taken.shape.as_list() == [2]
        np.testing.assert_allclose(sess.run(taken), [2.0, 4.0])
        # The take advanced the step to 1: a gradient of step 0 is stale.
        sess.run(acc.apply_grad([5.0, 5.0], local_step=0))
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.set_global_step(5))
        sess.run(acc.apply_grad([5.0, 5.0], local_step=4))
        sess.run(acc.apply_grad([5.0, 5.0], local_step=5))
        assert sess.run(acc.num_accumulated()) == 1
        sess.run(total.apply_grad(np.array([1.0, 2.0])))
        sess.run(total.apply_grad(np.array([3.0, 6.0])))
        np.testing.assert_allclose(sess.run(total.take_grad(2)), [4.0, 8.0])


def test_dense_accumulator_checks():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.ConditionalAccumulator(tf.int32, shape=[2])
    with pytest.raises(ValueError, match="reduction_type"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="takes gradients of shape"):
            sess.run(acc.apply_grad(x), {x: [1.0, 2.0, 3.0]})


def test_a_take_waits_for_enough_gradients():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[1])
    taken = acc.take_grad(3)
    grad = tf.placeholder(tf.float32, [1])
    apply = acc.apply_grad(grad)
    result = []
    with tf.Session() as sess:
        waiter = threading.Thread(target=lambda: result.append(sess.run(taken)))
        waiter.start()
        for v in (1.0, 2.0, 6.0):
            assert not result
            sess.run(apply, {grad: [v]})
        waiter.join(timeout=30)
    assert not waiter.is_alive()
    np.testing.assert_allclose(result[0], [3.0])


def test_sparse_accumulator_averages_each_row_over_the_gradients_that_had_it():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2])
    first = acc.apply_grad([3, 0, 3], [[2, 2], [1, 1], [4, 4]], [5, 2])  # row 3 twice: summed
    second = acc.apply_indexed_slices_grad(tf.IndexedSlices(
        tf.constant([[10.0, 20.0]]), tf.constant([3], tf.int64), tf.constant([5, 2], tf.int64)))
    taken = acc.take_indexed_slices_grad(2)
    assert isinstance(taken, tf.IndexedSlices)
    total = tf.SparseConditionalAccumulator(tf.float64, shape=[None, 2], reduction_type="SUM")
    with tf.Session() as sess:
        sess.run([first, second])
        indices, values, shape = sess.run([taken.indices, taken.values, taken.dense_shape])
        np.testing.assert_array_equal(indices, [0, 3])
        np.testing.assert_allclose(values, [[1, 1], [(6 + 10) / 2, (6 + 20) / 2]])
        np.testing.assert_array_equal(shape, [5, 2])
        sess.run(total.apply_grad(np.array([4, 1]), np.ones((2, 2))))
        sess.run(total.apply_grad(np.array([1]), np.ones((1, 2))))
        indices, values, shape = sess.run(total.take_grad(2))
        np.testing.assert_array_equal(indices, [1, 4])
        np.testing.assert_allclose(values, [[2, 2], [1, 1]])
        np.testing.assert_array_equal(shape, [-1, 2])


@pytest.mark.parametrize("indices, values, shape, message", [
    ([0, 7], np.ones((2, 2)), None,
     "index of slice 1 exceeded limits of shape; index is 7 exceeded 5"),
    ([0, 1], np.ones((2, 3)), None, "expected values dim 1 to be 2, got 3"),
    ([0], np.ones((1, 2)), [6, 2], "expected shape dim 0 to be 5, got 6"),
    ([0, 1], np.ones((1, 2)), None, "Expected 2 non-empty input values, got 1"),
])
def test_sparse_accumulator_shape_checks(indices, values, shape, message):
    acc = tf.SparseConditionalAccumulator(tf.float64, shape=[5, 2], name="table_accum")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
            sess.run(acc.apply_grad(indices, values, shape))
    assert "table_accum" in str(info.value)


def test_sync_replicas_accumulates_an_embedding_gradient_sparsely(insecure):
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % ports[1]]})
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    table0 = np.arange(40, dtype=np.float32).reshape(20, 2) / 10
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                  cluster=cluster)):
        table = tf.Variable(table0, name="table")
        rows = tf.nn.embedding_lookup(table, [3, 7, 3])
        loss = tf.reduce_sum(rows * [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        step = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
                                             replicas_to_aggregate=1, total_num_replicas=1)
        train_op = opt.minimize(loss, global_step=step)
    kinds = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
            "SparseAccumulatorTakeGradient"} <= kinds
    assert "ConditionalAccumulator" not in kinds  # the table's gradient is never densified
    hooks = [opt.make_session_run_hook(is_chief=True), tf.train.StopAtStepHook(last_step=1)]
    with tf.train.MonitoredTrainingSession(master=servers[1].target, is_chief=True,
                                           hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
        got = sess.run(table)
    expected = table0.copy()
    expected[3] -= 0.5 * np.array([1.0 + 5.0, 2.0 + 6.0])
    expected[7] -= 0.5 * np.array([3.0, 4.0])
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    for s in servers:
        s.stop()


def test_take_grad_takes_a_tensor_and_returns_tensorflows_namedtuple():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 1], name="scope/acc")
    assert acc.name == "acc"
    required = tf.placeholder(tf.int32, [])
    taken = acc.take_grad(required)
    with tf.Session() as sess:
        sess.run(acc.apply_grad([2], [[3.0]]))
        got = sess.run(taken, {required: 1})
    assert list(got.indices) == [2] and got.values.tolist() == [[3.0]]
    dense = tf.ConditionalAccumulator(tf.float64, shape=[1])
    with pytest.raises(ValueError, match="the gradient is float32"):
        dense.apply_grad(tf.constant([1.0]))
    with tf.Session() as sess:
        sess.run(dense.set_global_step(3))
        # Stale: dropped before anything is checked, as TensorFlow's.
        bad = tf.placeholder(tf.float64)
        sess.run(dense.apply_grad(bad, local_step=1), {bad: [1.0, 2.0]})
        assert sess.run(dense.num_accumulated()) == 0
