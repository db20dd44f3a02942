"""tf.train.Saver and the checkpoint functions, as TensorFlow 1.x defines them: any path prefix,
with or without a global step; var_list as a list or a dict of checkpoint names;
max_to_keep (None: all) and last_checkpoints; get_checkpoint_state, latest_checkpoint and
checkpoint_exists with prefixes; the errors (the cases of TensorFlow's saver_test that apply to
one-file checkpoints, re-expressed)."""

import os

import numpy as np
import pytest

import troupe as tf


class SaverTest(tf.test.TestCase):

    def test_save_and_restore_any_prefix(self):
        save_path = os.path.join(self.get_temp_dir(), "basics", "my_model")
        v0 = tf.Variable(10.0, name="v0")
        v1 = tf.Variable(20.0, name="v1")
        saver = tf.train.Saver({"v0": v0, "v1": v1}, restore_sequentially=True)
        with self.cached_session() as sess:
            sess.run(tf.global_variables_initializer())
            self.assertEqual(save_path, saver.save(sess, save_path))  # no step: the prefix
            self.assertTrue(tf.train.checkpoint_exists(save_path))
            sess.run([v0.assign(-1.0), v1.assign(-2.0)])
            saver.restore(sess, save_path)
            self.assertEqual(10.0, v0.eval())
            self.assertEqual(20.0, v1.eval())
        # A second graph restores into variables of other names, by checkpoint name.
        with tf.Graph().as_default():
            w0 = tf.Variable(-1.0, name="other0")
            w1 = tf.Variable(-1.0, name="other1")
            other = tf.train.Saver({"v0": w0, "v1": w1})
            with tf.Session() as sess:
                other.restore(sess, save_path)
                self.assertEqual([10.0, 20.0], sess.run([w0, w1]))

    def test_var_list_as_a_list_saves_those_only(self):
        v0 = tf.Variable(1.0, name="v0")
        tf.Variable(2.0, name="not_saved")
        saver = tf.train.Saver([v0])
        path = os.path.join(self.get_temp_dir(), "model")
        with self.cached_session() as sess:
            sess.run(tf.global_variables_initializer())
            saved = saver.save(sess, path, global_step=3)
        self.assertEqual(path + "-3", saved)
        self.assertEqual(["v0"], list(np.load(saved + ".npz").files))

    def test_max_to_keep_and_last_checkpoints(self):
        v = tf.Variable(1.0, name="v")
        save_dir = self.get_temp_dir()
        saver = tf.train.Saver(max_to_keep=2)
        prefix = os.path.join(save_dir, "ckpt")
        with self.cached_session() as sess:
            sess.run(v.initializer)
            s1 = saver.save(sess, prefix, global_step=1)
            s2 = saver.save(sess, prefix, global_step=2)
            self.assertEqual([s1, s2], saver.last_checkpoints)
            s3 = saver.save(sess, prefix, global_step=3)
            self.assertEqual([s2, s3], saver.last_checkpoints)
            self.assertFalse(tf.train.checkpoint_exists(s1))
            self.assertTrue(tf.train.checkpoint_exists(s2))
            state = tf.train.get_checkpoint_state(save_dir)
            self.assertEqual(s3, state.model_checkpoint_path)
            self.assertEqual([s2, s3], state.all_model_checkpoint_paths)
            self.assertEqual(s3, tf.train.latest_checkpoint(save_dir))
            s2_again = saver.save(sess, prefix, global_step=2)
            self.assertEqual([s3, s2_again], saver.last_checkpoints)

    def test_max_to_keep_none_keeps_all(self):
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=None)
        prefix = os.path.join(self.get_temp_dir(), "all")
        with self.cached_session() as sess:
            sess.run(v.initializer)
            paths = [saver.save(sess, prefix, global_step=i) for i in range(7)]
        self.assertEqual(paths, saver.last_checkpoints)
        self.assertTrue(all(tf.train.checkpoint_exists(p) for p in paths))

    def test_keep_checkpoint_every_n_hours_keeps_a_dropped_one(self):
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=0.0)
        prefix = os.path.join(self.get_temp_dir(), "hourly")
        with self.cached_session() as sess:
            sess.run(v.initializer)
            first = saver.save(sess, prefix, global_step=1)
            saver.save(sess, prefix, global_step=2)
        self.assertTrue(tf.train.checkpoint_exists(first))  # preserved, not deleted
        self.assertEqual(prefix + "-2", tf.train.latest_checkpoint(self.get_temp_dir()))

    def test_no_checkpoint_and_bad_arguments(self):
        save_dir = self.get_temp_dir()
        self.assertIsNone(tf.train.latest_checkpoint(save_dir))
        self.assertIsNone(tf.train.get_checkpoint_state(save_dir))
        with self.assertRaisesRegex(ValueError, "No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with self.cached_session() as sess:
            self.assertIsNone(empty.save(sess, os.path.join(save_dir, "none")))
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with self.cached_session() as sess:
            with self.assertRaisesRegex(ValueError, "when it is None"):
                saver.restore(sess, None)
            with self.assertRaisesRegex(ValueError, "not a valid checkpoint"):
                saver.restore(sess, os.path.join(save_dir, "missing"))
        with self.assertRaisesRegex(ValueError, "reshape"):
            tf.train.Saver(reshape=True)
        with self.assertRaisesRegex(ValueError, "max_to_keep"):
            tf.train.Saver(max_to_keep=-1)
        with self.assertRaises(TypeError):
            tf.train.Saver([3])
        with self.assertRaises(TypeError):
            tf.train.Saver({"x": v.initialized_value() if hasattr(v, "initialized_value")
                            else tf.constant(1.0)})
        self.assertIsNotNone(v)

    def test_restoring_a_different_model_names_the_variable(self):
        path = os.path.join(self.get_temp_dir(), "model")
        with tf.Graph().as_default():
            v = tf.Variable(1.0, name="v")
            saver = tf.train.Saver()
            with tf.Session() as sess:
                sess.run(v.initializer)
                saver.save(sess, path)
        w = tf.Variable([1.0, 2.0], name="w")
        with self.cached_session() as sess:
            with self.assertRaisesRegex(tf.errors.NotFoundError,
                                        "Key w not found in checkpoint '.*model.npz'"):
                tf.train.Saver().restore(sess, path)
        self.assertIsNotNone(w)


def test_prefixes_with_npz_suffix_are_taken_too(tmp_path):
    v = tf.Variable(3.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        prefix = saver.save(sess, str(tmp_path / "m"), global_step=1)
        sess.run(v.assign(0.0))
        saver.restore(sess, prefix + ".npz")
        assert sess.run(v) == 3.0
    assert tf.train.get_checkpoint_mtimes([prefix])[0] > 0


def test_reading_checkpoints_outside_a_session(tmp_path):
    with tf.Graph().as_default():
        tf.Variable([[1.0, 2.0]], name="w")
        with tf.variable_scope("scope"):
            tf.get_variable("b", [3], dtype=tf.int64, initializer=tf.ones_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    assert tf.train.list_variables(str(tmp_path)) == [("scope/b", [3]), ("w", [1, 2])]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "w:0"), [[1.0, 2.0]])
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"w": [1, 2], "scope/b": [3]}
    assert reader.get_variable_to_dtype_map()["scope/b"] == tf.int64
    assert reader.has_tensor("w") and not reader.has_tensor("v")
    np.testing.assert_array_equal(reader.get_tensor("scope/b"), [1, 1, 1])
    with pytest.raises(tf.errors.NotFoundError, match="Key v not found in checkpoint"):
        reader.get_tensor("v")
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.NewCheckpointReader(str(tmp_path / "nothing"))
