"""tf.train.Saver(sharded=True), as TensorFlow 1.x's sharded saver behaves: each ps task writes
the variables it holds (a partitioned variable's shards as slices of the whole), nothing passes
through the client, the checkpoint is named by its prefix, and any reader or saver restores it,
into any partitioning (TensorFlow's saver_test testBasicsWithListOfVariables... re-expressed for
troupe's shard files; the cluster runs in this process, every task seeing one directory)."""

import os

import numpy as np
import pytest

import troupe as tf
from conftest import free_ports


@pytest.fixture
def cluster(insecure):
    ports = free_ports(3)
    spec = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0], "127.0.0.1:%d" % ports[1]],
                                 "worker": ["127.0.0.1:%d" % ports[2]]})
    servers = [tf.train.Server(spec, "ps", 0), tf.train.Server(spec, "ps", 1),
               tf.train.Server(spec, "worker", 0)]
    try:
        yield spec, servers[2].target
    finally:
        for s in servers:
            s.stop()


def _model(spec, shards, name="table"):
    with tf.device(tf.train.replica_device_setter(cluster=spec)):
        table = tf.get_variable(name, [10, 3], partitioner=tf.fixed_size_partitioner(shards),
                                initializer=tf.random_uniform_initializer(seed=1))
        step = tf.train.get_or_create_global_step()
    return table, step


def test_each_ps_writes_its_variables_and_any_saver_restores_them(cluster, tmp_path):
    spec, target = cluster
    prefix = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        table, step = _model(spec, 2)
        saver = tf.train.Saver(sharded=True, max_to_keep=1)
        save_ops = [op for op in tf.get_default_graph().get_operations() if op.type == "SaveV2"]
        assert len(save_ops) == 2
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            values = np.concatenate(sess.run(table._get_variable_list()), 0)
            path = saver.save(sess, prefix, global_step=7)
            assert path == prefix + "-7"
            assert sorted(os.listdir(str(tmp_path))) == [
                "checkpoint", "model.ckpt-7.shard-00000-of-00002.npz",
                "model.ckpt-7.shard-00001-of-00002.npz"]
            assert tf.train.checkpoint_exists(path)
            assert tf.train.latest_checkpoint(str(tmp_path)) == path
            assert tf.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path == path
            # Each file is an ordinary .npz: ps 0 holds its shard of the table and the step.
            with np.load(path + ".shard-00000-of-00002.npz") as shard:
                assert sorted(shard.files) == ["global_step", "table@10 3 0,5:-"]

            sess.run(table._get_variable_list()[0].assign(np.zeros([5, 3], np.float32)))
            saver.restore(sess, path)
            np.testing.assert_array_equal(
                np.concatenate(sess.run(table._get_variable_list()), 0), values)
            restore_ops = {op.device for op in tf.get_default_graph().get_operations()
                           if op.type == "RestoreV2"}
            assert restore_ops == {"/job:ps/task:0", "/job:ps/task:1"}

            saver.save(sess, prefix, global_step=8)
            assert not tf.train.checkpoint_exists(path)  # max_to_keep=1
            assert saver.last_checkpoints == [prefix + "-8"]

    reader = tf.train.NewCheckpointReader(prefix + "-8")
    assert reader.get_variable_to_shape_map() == {"table": [10, 3], "global_step": []}
    np.testing.assert_array_equal(reader.get_tensor("table"), values)
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "table"), values)

    # Into three shards (another variable: the servers still hold "table" in two), on each ps
    # or through the client.
    for sharded in (True, False):
        with tf.Graph().as_default():
            table3, _ = _model(spec, 3, name="table_%s" % sharded)
            saver = tf.train.Saver({"table": table3}, sharded=sharded)
            with tf.Session(target) as sess:
                saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
                np.testing.assert_array_equal(
                    np.concatenate(sess.run(table3._get_variable_list()), 0), values)

    with tf.Graph().as_default():  # init_from_checkpoint reads the slices on its ps
        with tf.device(tf.train.replica_device_setter(cluster=spec)):
            whole = tf.get_variable("whole", [10, 3])
        tf.train.init_from_checkpoint(str(tmp_path), {"table": whole})
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(whole), values)


def test_a_missing_shard_is_not_a_checkpoint(cluster, tmp_path):
    spec, target = cluster
    with tf.Graph().as_default():
        _model(spec, 2)
        saver = tf.train.Saver(sharded=True)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))
            os.remove(path + ".shard-00001-of-00002.npz")
            assert not tf.train.checkpoint_exists(path)
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, path)
    with pytest.raises(tf.errors.DataLossError, match="shard 1 of 2"):
        tf.train.NewCheckpointReader(path)


def test_the_reader_refuses_slices_that_do_not_tile_their_variable(tmp_path):
    prefix = str(tmp_path / "model-1")
    np.savez(prefix + ".shard-00000-of-00002.npz", **{"t@4 0,3": np.arange(3.0)})
    np.savez(prefix + ".shard-00001-of-00002.npz", **{"t@4 2,2": np.arange(2.0)})
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"t": [4]}
    with pytest.raises(tf.errors.DataLossError, match="overlap"):
        reader.get_tensor("t")
    np.savez(prefix + ".shard-00001-of-00002.npz", **{"t@4 3,1": np.arange(1.0)})
    np.testing.assert_array_equal(tf.train.NewCheckpointReader(prefix).get_tensor("t"),
                                  [0.0, 1.0, 2.0, 0.0])
    np.savez(prefix + ".shard-00001-of-00002.npz", **{"t@5 3,1": np.arange(1.0)})
    with pytest.raises(tf.errors.DataLossError, match="disagree on its shape"):
        tf.train.NewCheckpointReader(prefix).get_tensor("t")
