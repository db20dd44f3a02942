"""replica_device_setter's ps_strategy (TensorFlow 1.x's device_setter and
contrib.training.device_setter tests, ported): a callable gets each ps op and returns its task;
GreedyLoadBalancingStrategy with byte_size_load_fn balances bytes across the ps tasks; a
strategy's error or a result that is not a task fails the node and adds nothing; variables
placed so live on those tasks and train there."""

import numpy as np
import pytest

import troupe as tf
from conftest import free_ports

CLUSTER = tf.train.ClusterSpec({"ps": ["p0:1", "p1:1"], "worker": ["w0:1", "w1:1"]})


def task_of(v):
    return int(v.device.split("/task:")[1].split("/")[0])


def test_greedy_load_balancing_by_bytes():
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(
        2, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=strategy)):
        big = tf.Variable(tf.zeros([100, 100]), name="big")          # 40,000 bytes -> ps 0
        small = tf.Variable(tf.zeros([10]), name="small")            # 40 -> ps 1
        other = tf.Variable(tf.zeros([10], tf.float64), name="f64")  # 80 -> ps 1 (40 < 40,000)
        medium = tf.get_variable("medium", [50, 50])                 # 10,000 -> ps 1 (120)
        last = tf.Variable(tf.zeros([100, 100]), name="last")        # -> ps 1 (10,120)
        scalar = tf.Variable(0, name="scalar")                       # -> ps 0 (40,000 < 50,120)
        y = big + 1.0
    assert [task_of(v) for v in (big, small, other, medium, last, scalar)] == [0, 1, 1, 1, 1, 0]
    assert y.device.startswith("/job:worker")
    np.testing.assert_array_equal(strategy._ps_loads, [40004, 10120 + 40000])


def test_a_callable_strategy_sees_the_op_as_tensorflow_passes_it():
    seen = []

    def by_name(op):
        seen.append((op.name, op.type, op.get_attr("dtype"), op.outputs[0].dtype,
                     op.outputs[0].get_shape().as_list(), op.node_def["op"]))
        return 1 if op.name.startswith("embedding") else 0

    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=by_name)):
        table = tf.Variable(tf.zeros([8, 3]), name="embedding")
        bias = tf.Variable(tf.zeros([3], tf.float64), name="bias")
    assert (task_of(table), task_of(bias)) == (1, 0)
    kind = table.op.type
    assert seen == [("embedding", kind, tf.float32, tf.float32, [8, 3], kind),
                    ("bias", kind, tf.float64, tf.float64, [3], kind)]


def test_a_strategys_error_or_bad_result_fails_the_node_and_adds_nothing():
    def broken(op):
        raise ValueError("no room for %s" % op.name)

    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=broken)):
        with pytest.raises(ValueError, match="no room for v"):
            tf.Variable(tf.zeros([2]), name="v")
    assert not [op for op in tf.get_default_graph().get_operations()
                if op.name.startswith("v")]
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER,
                                                  ps_strategy=lambda op: "ps0")):
        with pytest.raises(TypeError, match="ps_strategy returned 'ps0' for node 'w'"):
            tf.Variable(tf.zeros([2]), name="w")
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=lambda op: -1)):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"node 'u'.*\(ps_strategy returned task -1\)"):
            tf.Variable(tf.zeros([2]), name="u")
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=3)


def test_byte_size_load_fn_needs_a_fully_defined_shape():
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(
        2, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER, ps_strategy=strategy)):
        x = tf.placeholder(tf.float32, [None])
        with pytest.raises(ValueError, match="is not fully defined"):
            tf.Variable(x, validate_shape=False, name="any_length")


def test_partitioned_shards_balance_and_train_on_their_tasks(insecure):
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % p for p in ports[:2]],
                                    "worker": ["127.0.0.1:%d" % ports[2]]})
    servers = [tf.train.Server(cluster, "ps", i) for i in (0, 1)] + \
        [tf.train.Server(cluster, "worker", 0)]
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(
        2, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                  cluster=cluster, ps_strategy=strategy)):
        table = tf.get_variable("table", [12, 4], initializer=tf.ones_initializer(),
                                partitioner=tf.fixed_size_partitioner(3))
        weights = tf.get_variable("weights", [4, 1], initializer=tf.ones_initializer())
        rows = tf.nn.embedding_lookup(table, [0, 5, 11], partition_strategy="div")
        loss = tf.reduce_sum(tf.matmul(rows, weights))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    shards = list(table)
    # Shards of 64 bytes each: ps 0, ps 1, ps 0; weights (16 bytes) on ps 1 (64 < 128).
    assert [task_of(v) for v in shards + [weights]] == [0, 1, 0, 1]
    with tf.Session(servers[2].target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        got = sess.run(shards)
    expected = np.ones((12, 4))
    expected[[0, 5, 11]] -= 0.5
    np.testing.assert_allclose(np.concatenate(got), expected)
    for s in servers:
        s.stop()
