"""tf.train.init_from_checkpoint, as TensorFlow 1.x defines it: the cases of TensorFlow's
checkpoint_utils_test that apply to troupe's one-file checkpoints (ported), and what troupe adds
to check: the read runs on the variable's task, and what fails at run time says what."""

import os

import numpy as np
import pytest

import troupe as tf
from conftest import free_ports


def _create_checkpoints(sess, checkpoint_dir):
    checkpoint_prefix = os.path.join(checkpoint_dir, "model")
    v1 = tf.get_variable("var1", [1, 10])
    v2 = tf.get_variable("var2", [10, 10])
    v3 = tf.get_variable("var3", [100, 100])
    with tf.variable_scope("useful_scope"):
        v4 = tf.get_variable("var4", [9, 9])
    sess.run(tf.global_variables_initializer())
    values = sess.run([v1, v2, v3, v4])
    tf.train.Saver().save(sess, checkpoint_prefix, global_step=0)
    return values


def _create_partition_checkpoints(sess, checkpoint_dir):
    checkpoint_prefix = os.path.join(checkpoint_dir, "model")
    with tf.variable_scope("scope"):
        v1 = tf.get_variable(
            name="var1", shape=[100, 100],
            initializer=tf.truncated_normal_initializer(0.5),
            partitioner=tf.min_max_variable_partitioner(max_partitions=5, axis=0,
                                                        min_slice_size=8 << 10))
    sess.run(tf.global_variables_initializer())
    values = sess.run(v1._get_variable_list())
    tf.train.Saver().save(sess, checkpoint_prefix, global_step=0)
    return values


class InitFromCheckpointTest(tf.test.TestCase):

    def testInitFromCheckpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            v1, v2, v3, v4 = _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                with tf.variable_scope("some_scope"):
                    my1 = tf.get_variable("my1", [1, 10])
                    with tf.variable_scope("some_other_scope"):
                        my2 = tf.get_variable("my2", [10, 10])
                        with tf.variable_scope("other_useful_scope"):
                            my4 = tf.get_variable("var4", [9, 9])
                my3 = tf.get_variable("my3", [100, 100])

                tf.train.init_from_checkpoint(checkpoint_dir, {
                    "var1": "some_scope/my1",
                    "useful_scope/": "some_scope/some_other_scope/other_useful_scope/",
                })
                tf.train.init_from_checkpoint(checkpoint_dir, {
                    "var2": "some_scope/some_other_scope/my2",
                    "var3": my3,
                })

                session.run(tf.global_variables_initializer())
                self.assertAllEqual(my1.eval(session), v1)
                self.assertAllEqual(my2.eval(session), v2)
                self.assertAllEqual(my3.eval(session), v3)
                self.assertAllEqual(my4.eval(session), v4)

                # The values are read when the initializers run, not put in the graph.
                self.assertLess(len(str(session.graph.as_graph_def())), 29000)

    def testInitialValueComesFromCheckpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            v1, _, _, _ = _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                with tf.variable_scope("some_scope", initializer=tf.zeros_initializer()):
                    my1 = tf.get_variable("my1", [1, 10])
                before = my1.initializer
                tf.train.init_from_checkpoint(checkpoint_dir, {"var1": my1})
                self.assertIsNot(my1.initializer, before)
                self.assertAllEqual(session.run(my1.initial_value), v1)
                session.run(tf.global_variables_initializer())
                self.assertAllEqual(session.run(my1), v1)
                self.assertAllEqual(session.run(my1.initialized_value()), v1)

    def testInitWithScopeDoesNotCaptureSuffixes(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            _, _, _, v4 = _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with tf.variable_scope("useful_scope"):
                my4 = tf.get_variable("var4", [9, 9])
            with tf.variable_scope("useful_scope_1"):
                my5_init = [[1.0, 2.0], [3.0, 4.0]]
                my5 = tf.get_variable("var5", initializer=my5_init)

            tf.train.init_from_checkpoint(checkpoint_dir, {"useful_scope/": "useful_scope/"})
            with self.session(graph=g) as session:
                session.run(tf.global_variables_initializer())
                self.assertAllEqual(my4.eval(session), v4)
                self.assertAllEqual(my5.eval(session), my5_init)

    def testRestoreRunsOnSameDevice(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with tf.device("/job:ps"):
                with tf.variable_scope("useful_scope"):
                    my4 = tf.get_variable("var4", [9, 9])
            tf.train.init_from_checkpoint(checkpoint_dir, {"useful_scope/": "useful_scope/"})
            restore = [op for op in g.get_operations() if op.type == "RestoreV2"]
            self.assertEqual(1, len(restore))
            self.assertEqual("/job:ps/device:CPU:0", restore[0].device)
            self.assertEqual("RestoreV2", my4.initializer.inputs[1].op.type)

    def testInitFromRootCheckpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            v1, v2, v3, v4 = _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                with tf.variable_scope("some_scope"):
                    my1 = tf.get_variable("var1", [1, 10])
                    my2 = tf.get_variable("var2", [10, 10])
                    my3 = tf.get_variable("var3", [100, 100])
                    with tf.variable_scope("useful_scope"):
                        my4 = tf.get_variable("var4", [9, 9])

                tf.train.init_from_checkpoint(checkpoint_dir, {"/": "some_scope/"})

                session.run(tf.global_variables_initializer())
                self.assertAllEqual(my1.eval(session), v1)
                self.assertAllEqual(my2.eval(session), v2)
                self.assertAllEqual(my3.eval(session), v3)
                self.assertAllEqual(my4.eval(session), v4)

    def testInitToRootCheckpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            v1, v2, v3, v4 = _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                my1 = tf.get_variable("var1", [1, 10])
                my2 = tf.get_variable("var2", [10, 10])
                my3 = tf.get_variable("var3", [100, 100])
                with tf.variable_scope("useful_scope"):
                    my4 = tf.get_variable("var4", [9, 9])

                tf.train.init_from_checkpoint(checkpoint_dir, {"/": "/"})

                session.run(tf.global_variables_initializer())
                self.assertAllEqual(my1.eval(session), v1)
                self.assertAllEqual(my2.eval(session), v2)
                self.assertAllEqual(my3.eval(session), v3)
                self.assertAllEqual(my4.eval(session), v4)

    def testInitFromPartitionVar(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            v1 = _create_partition_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                with tf.variable_scope("some_scope"):
                    my1 = tf.get_variable(
                        name="my1", shape=[100, 100], initializer=tf.zeros_initializer(),
                        partitioner=tf.min_max_variable_partitioner(
                            max_partitions=5, axis=0, min_slice_size=8 << 10))
                    my1_var_list = my1._get_variable_list()
                # Another variable, with other partitions than the checkpoint's.
                with tf.variable_scope("some_other_scope"):
                    my2 = tf.get_variable(
                        name="var1", shape=[100, 100], initializer=tf.zeros_initializer(),
                        partitioner=tf.min_max_variable_partitioner(
                            max_partitions=5, axis=0, min_slice_size=16 << 10))
                    my2_var_list = my2._get_variable_list()

                tf.train.init_from_checkpoint(checkpoint_dir, {
                    "scope/var1": "some_scope/my1",
                    "scope/": "some_other_scope/"})

                session.run(tf.global_variables_initializer())
                my1_values = session.run(my1_var_list)
                self.assertAllEqual(my1_values, v1)
                my2_values = session.run(my2_var_list)
                self.assertNotEqual(len(my2_values), len(v1))
                self.assertAllEqual(np.concatenate(my2_values, axis=0),
                                    np.concatenate(v1, axis=0))

        with tf.Graph().as_default() as g:
            with self.session(graph=g) as session:
                with tf.variable_scope("some_scope"):
                    my1 = tf.get_variable(
                        name="my1", shape=[100, 100],
                        initializer=tf.truncated_normal_initializer(0.5),
                        partitioner=tf.min_max_variable_partitioner(
                            max_partitions=5, axis=0, min_slice_size=8 << 10))
                    my1_var_list = my1._get_variable_list()

                tf.train.init_from_checkpoint(checkpoint_dir, {"scope/var1": my1_var_list})

                session.run(tf.global_variables_initializer())
                self.assertAllEqual(session.run(my1_var_list), v1)

    def testInitFromCheckpointMissing(self):
        checkpoint_dir = self.get_temp_dir()
        with self.cached_session() as session:
            _create_checkpoints(session, checkpoint_dir)

        with tf.Graph().as_default() as g:
            with self.session(graph=g):
                with tf.variable_scope("some_scope"):
                    tf.get_variable("my1", [10, 10])
                    tf.get_variable("my2", [1, 10], dtype=tf.int64,
                                    initializer=tf.zeros_initializer())

                # No directory.
                with self.assertRaises(tf.errors.OpError):
                    tf.train.init_from_checkpoint("no_dir", {"var1": "some_scope/my1"})
                # No variable in the checkpoint.
                with self.assertRaises(ValueError):
                    tf.train.init_from_checkpoint(checkpoint_dir, {"no_var": "some_scope/my1"})
                # No variable in the graph.
                with self.assertRaises(ValueError):
                    tf.train.init_from_checkpoint(checkpoint_dir, {"var3": "some_scope/no_var"})
                # Shape mismatch.
                with self.assertRaises(ValueError):
                    tf.train.init_from_checkpoint(checkpoint_dir, {"var1": "some_scope/my1"})
                # Variables 'my1' and 'my2' are missing in the checkpoint's scope.
                with self.assertRaises(ValueError):
                    tf.train.init_from_checkpoint(checkpoint_dir, {"useful_scope/": "some_scope/"})
                # The mapping is not to a scope name.
                with self.assertRaises(ValueError):
                    tf.train.init_from_checkpoint(checkpoint_dir, {"useful_scope": "some_scope/"})


def test_a_file_gone_or_a_dtype_changed_fails_the_initializer_naming_node_and_tensor(tmp_path):
    with tf.Session() as sess:
        _create_checkpoints(sess, str(tmp_path))
    with tf.Graph().as_default():
        my1 = tf.get_variable("my1", [1, 10])
        as_int = tf.get_variable("as_int", [10, 10], dtype=tf.int32,
                                 initializer=tf.zeros_initializer())
        tf.train.init_from_checkpoint(str(tmp_path), {"var1": my1, "var2": as_int})
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"RestoreV2.*tensor 'var2' of checkpoint '.*model-0.npz' "
                                     r"is float32, expected int32"):
                sess.run(as_int.initializer)
            os.remove(str(tmp_path / "model-0.npz"))
            with pytest.raises(tf.errors.NotFoundError, match=r"RestoreV2.*model-0.npz"):
                sess.run(my1.initializer)


def test_a_variable_on_a_ps_reads_the_checkpoint_there(insecure, tmp_path):
    """Between processes' tasks (here in one process): the read runs on the ps, the values
    never pass through the client's graph."""
    with tf.Session() as sess:
        v1, v2, _, _ = _create_checkpoints(sess, str(tmp_path))
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % ports[1]]})
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    try:
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=cluster)):
                w1 = tf.get_variable("w1", [1, 10])
                w2 = tf.get_variable("w2", [10, 10],
                                     partitioner=tf.fixed_size_partitioner(3))
                total = tf.reduce_sum(w1) + tf.reduce_sum(tf.concat(w2._get_variable_list(), 0))
            tf.train.init_from_checkpoint(str(tmp_path), {"var1": w1, "var2": "w2"})
            devices = {op.device for op in tf.get_default_graph().get_operations()
                       if op.type == "RestoreV2"}
            assert devices == {"/job:ps/task:0/device:CPU:0"}
            with tf.Session(servers[1].target) as sess:
                sess.run(tf.global_variables_initializer())
                np.testing.assert_array_equal(sess.run(w1), v1)
                np.testing.assert_allclose(sess.run(total), v1.sum() + v2.sum(), rtol=1e-5)
                np.testing.assert_array_equal(
                    np.concatenate(sess.run(w2._get_variable_list()), 0), v2)
    finally:
        for s in servers:
            s.stop()


class WarmStartTest(tf.test.TestCase):
    """tf.train.warm_start's choices, as TensorFlow 1.x's warm_starting_util_test checks them
    (the cases without feature columns or vocabularies)."""

    def _checkpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with tf.Graph().as_default():
            with tf.Session() as sess:
                values = _create_checkpoints(sess, checkpoint_dir)
        return checkpoint_dir, values

    def test_a_regex_warm_starts_the_trainable_variables_it_matches(self):
        checkpoint_dir, (v1, v2, _, v4) = self._checkpoint()
        with tf.Graph().as_default() as g:
            my1 = tf.get_variable("var1", [1, 10], initializer=tf.zeros_initializer())
            my2 = tf.get_variable("var2", [10, 10], initializer=tf.zeros_initializer())
            with tf.variable_scope("useful_scope"):
                my4 = tf.get_variable("var4", [9, 9], initializer=tf.zeros_initializer())
            tf.train.warm_start(checkpoint_dir, vars_to_warm_start="useful.*|var1")
            with self.session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                self.assertAllEqual(v1, sess.run(my1))
                self.assertAllEqual(np.zeros([10, 10]), sess.run(my2))
                self.assertAllEqual(v4, sess.run(my4))

    def test_names_variables_and_previous_names(self):
        checkpoint_dir, (v1, v2, _, _) = self._checkpoint()
        with tf.Graph().as_default() as g:
            new1 = tf.get_variable("new1", [1, 10], initializer=tf.zeros_initializer())
            var2 = tf.get_variable("var2", [10, 10], initializer=tf.zeros_initializer())
            tf.train.warm_start(checkpoint_dir, vars_to_warm_start=[new1, var2],
                                var_name_to_prev_var_name={"new1": "var1"})
            with self.session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                self.assertAllEqual(v1, sess.run(new1))
                self.assertAllEqual(v2, sess.run(var2))

        with tf.Graph().as_default():
            tf.get_variable("var1", [1, 10])
            with self.assertRaisesRegex(ValueError, "not used: {'misspelt'}"):
                tf.train.warm_start(checkpoint_dir, vars_to_warm_start=["var1"],
                                    var_name_to_prev_var_name={"misspelt": "var2"})
            with self.assertRaisesRegex(ValueError, "must be all `Variable` or all `str`"):
                tf.train.warm_start(checkpoint_dir, vars_to_warm_start=["var1", 3])
            with self.assertRaisesRegex(NotImplementedError, "var_name_to_vocab_info"):
                tf.train.warm_start(checkpoint_dir, var_name_to_vocab_info={
                    "var1": tf.train.VocabInfo("new.txt", 10, 1, "old.txt")})

    def test_a_partitioned_variable_starts_from_the_whole(self):
        checkpoint_dir, (_, v2, _, _) = self._checkpoint()
        with tf.Graph().as_default() as g:
            var2 = tf.get_variable("var2", [10, 10], partitioner=tf.fixed_size_partitioner(3))
            tf.train.warm_start(checkpoint_dir)
            with self.session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                self.assertAllEqual(v2, np.concatenate(sess.run(var2._get_variable_list()), 0))


def test_get_collection_takes_a_regular_expression_as_scope():
    a = tf.Variable(1.0, name="dense/kernel")
    b = tf.Variable(1.0, name="dense_1/kernel")
    tf.Variable(1.0, name="other/dense")
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="dense") == [a, b]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="dense/") == [a]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="dense(_1)?/k") == [a, b]


def test_optimizer_slots_and_the_global_step_are_found_as_tensorflow_finds_them(tmp_path,
                                                                                 monkeypatch):
    """Slots and the global step are made by the C++ layer; TensorFlow makes them with
    get_variable, so they are in GLOBAL_VARIABLES and in the variable store: init_from_checkpoint
    and warm_start find them by name, by '/' and by a list of scopes."""
    def build():
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
        step = tf.train.get_or_create_global_step()
        train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w * w - w),
                                                              global_step=step)
        return w, step, train

    with tf.Graph().as_default():
        w, step, train = build()
        names = {v.op.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)}
        assert {"w", "global_step", "w/Momentum"} <= names
        assert "w/Momentum" not in {v.op.name for v in tf.trainable_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            saved = sess.run({"w": w, "slot": tf.get_default_graph().get_tensor_by_name(
                "w/Momentum:0"), "step": step})
            tf.train.Saver().save(sess, str(tmp_path / "model"))
    assert saved["step"] == 3

    for how in ("names", "root", "scopes"):
        with tf.Graph().as_default():
            w, step, _ = build()
            slot = tf.get_default_graph().get_tensor_by_name("w/Momentum:0")
            if how == "names":
                tf.train.init_from_checkpoint(str(tmp_path), {"global_step": "global_step",
                                                              "w/Momentum": "w/Momentum"})
            elif how == "root":
                tf.train.init_from_checkpoint(str(tmp_path), {"/": "/"})
            else:
                tf.train.warm_start(str(tmp_path), vars_to_warm_start=[".*"])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                assert sess.run(step) == 3, how
                np.testing.assert_array_equal(sess.run(slot), saved["slot"])

    # Names and shapes come from the arrays' headers alone: no array is read for them.
    def no_arrays(*args, **kwargs):
        raise AssertionError("an array was read")
    monkeypatch.setattr(np, "load", no_arrays)
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_shape_map()["w"] == [2]
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64


def test_global_variables_take_a_regular_expression_as_scope():
    a = tf.Variable(1.0, name="layer_1/w")
    b = tf.Variable(1.0, name="layer_2/w")
    tf.Variable(1.0, name="layer_3/w")
    assert tf.global_variables("layer_[12]") == [a, b]
    assert tf.trainable_variables("layer_[12]/") == [a, b]
