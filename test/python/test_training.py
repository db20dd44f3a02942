"""MonitoredTrainingSession with the standard hooks and hooks written in Python: call order,
stopping, checkpoints and restoring from them, errors a hook raises, and synchronous training
on a cluster of this process."""

import logging
import os
import signal
import threading
import time

import numpy as np
import pytest

import troupe as tf

from conftest import free_ports


def linear_model():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, y, w, loss, step, train_op


def batch(n=8, seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(n, 2)).astype(np.float32)
    return xs, xs @ np.array([[2.0], [-1.0]], np.float32)


class Recorder(tf.train.SessionRunHook):
    def __init__(self, tensor, stop_at=None):
        self.tensor = tensor
        self.stop_at = stop_at
        self.calls = []
        self.values = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.start = int(session.run(tf.train.get_global_step()))

    def before_run(self, run_context):
        self.calls.append("before_run")
        assert run_context.original_args.fetches is not None
        return tf.train.SessionRunArgs({"value": self.tensor})

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.values.append(run_values.results["value"])
        if self.stop_at is not None and len(self.values) >= self.stop_at:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def test_hooks_run_in_order_and_stop_training(tmp_path):
    x, y, w, loss, step, train_op = linear_model()
    recorder = Recorder(loss, stop_at=5)
    xs, ys = batch()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           hooks=[recorder]) as sess:
        while not sess.should_stop():
            sess.run(train_op, {x: xs, y: ys})
    assert recorder.calls[:3] == ["begin", "after_create_session", "before_run"]
    assert recorder.calls[-1] == "end"
    assert recorder.calls.count("after_run") == 5
    assert recorder.values[-1] < recorder.values[0]  # it learned
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")


def test_stop_at_step_logging_and_checkpoints_then_restore(tmp_path, caplog):
    x, y, w, loss, step, train_op = linear_model()
    xs, ys = batch()
    hooks = [tf.train.StopAtStepHook(last_step=30),
             tf.train.LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=10),
             tf.train.CheckpointSaverHook(str(tmp_path / "extra"), save_steps=10)]
    caplog.set_level(logging.INFO, logger="troupe")
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                           save_checkpoint_steps=10) as sess:
        steps = 0
        while not sess.should_stop():
            sess.run(train_op, {x: xs, y: ys})
            steps += 1
        trained = sess.run(w, {x: xs, y: ys})  # the logging hook fetches the loss
    assert steps == 30
    lines = [r.getMessage() for r in caplog.records if "loss = " in r.getMessage()]
    assert len(lines) == 4 and "step = 0" in lines[0]  # runs 1, 11, 21 and the last fetch
    saved = sorted(os.listdir(tmp_path / "extra"))
    # The MonitoredTrainingSession's saver is sharded, as TensorFlow's Scaffold's.
    assert "model.ckpt-30.shard-00000-of-00001.npz" in saved and "checkpoint" in saved
    # A new chief restores the newest checkpoint and goes on from step 30.
    tf.reset_default_graph()
    x, y, w, loss, step, train_op = linear_model()
    with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(num_steps=5)]) as sess:
        np.testing.assert_allclose(sess.run(w), trained)
        assert sess.run(step) == 30
        while not sess.should_stop():
            sess.run(train_op, {x: xs, y: ys})
        assert sess.run(step) == 35


def event_values(directory):
    """(step, tag, value) of every scalar, and how many graphs, in the event files of
    `directory`."""
    scalars, graphs = [], 0
    for name in sorted(os.listdir(directory)):
        if name.startswith("events.out.tfevents."):
            for event in tf.train.summary_iterator(os.path.join(directory, name)):
                graphs += bool(event.graph_def)
                scalars += [(event.step, v.tag, v.simple_value) for v in event.summary.value]
    return scalars, graphs


def test_the_chief_writes_the_graph_and_merged_summaries_every_save_summaries_steps(tmp_path):
    x, y, w, loss, step, train_op = linear_model()
    tf.summary.scalar("train_loss", loss)
    tf.summary.histogram("w", w)
    xs, ys = batch()
    losses = []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "ckpt"),
                                           summary_dir=str(tmp_path / "logs"),
                                           save_summaries_steps=2,
                                           hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        while not sess.should_stop():
            losses.append(sess.run([train_op, loss], {x: xs, y: ys})[1])
    scalars, graphs = event_values(str(tmp_path / "logs"))
    assert graphs == 1
    # Written at the steps the runs reached: 1 (the first run), 3 and 5; each loss is the one
    # computed by that run (before its update).
    logged = [(s, v) for s, tag, v in scalars if tag == "train_loss"]
    assert [s for s, _ in logged] == [1, 3, 5]
    np.testing.assert_allclose([v for _, v in logged], [losses[0], losses[2], losses[4]],
                               rtol=1e-6)
    assert [s for s, tag, _ in scalars if tag == "global_step/sec"] == [3, 5]
    assert not [name for name in os.listdir(tmp_path / "ckpt") if "tfevents" in name]


def test_monitored_training_session_cadences_read_as_tensorflow_reads_them(tmp_path):
    x, y, w, loss, step, train_op = linear_model()
    xs, ys = batch()
    with pytest.raises(ValueError, match="save_summaries_steps or save_summaries_secs"):
        tf.train.MonitoredTrainingSession(save_summaries_steps=10, save_summaries_secs=10)
    with pytest.raises(ValueError, match="save_checkpoint_steps or save_checkpoint_secs"):
        tf.train.MonitoredTrainingSession(save_checkpoint_steps=10, save_checkpoint_secs=10)
    with pytest.raises(TypeError, match="save_checkpoint_secs must be a number or None"):
        tf.train.MonitoredTrainingSession(save_checkpoint_secs="600")
    with pytest.raises(TypeError, match="summary_dir must be a string"):
        tf.train.MonitoredTrainingSession(summary_dir=3)
    # Checkpoints and summaries both off: nothing is written; the directory is still the one
    # restored from.
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_secs=None,
                                           save_summaries_steps=None,
                                           hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(train_op, {x: xs, y: ys})
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert not [name for name in os.listdir(tmp_path) if "tfevents" in name]


def test_a_hook_that_raises_ends_training_with_its_exception():
    x, y, w, loss, step, train_op = linear_model()

    class Broken(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise ZeroDivisionError("from a hook")

    xs, ys = batch()
    with pytest.raises(ZeroDivisionError, match="from a hook"):
        with tf.train.MonitoredTrainingSession(hooks=[Broken()]) as sess:
            sess.run(train_op, {x: xs, y: ys})

    class BadArgs(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return [loss]

    with pytest.raises(TypeError, match="must return a SessionRunArgs"):
        with tf.train.MonitoredTrainingSession(hooks=[BadArgs()]) as sess:
            sess.run(train_op, {x: xs, y: ys})


def test_a_hook_failing_before_the_step_stops_it_and_a_failed_start_is_clean():
    x, y, w, loss, step, train_op = linear_model()

    class FailsBefore(tf.train.SessionRunHook):
        def before_run(self, run_context):
            raise ValueError("not this step")

    class FailsAtBegin(tf.train.SessionRunHook):
        def __init__(self):
            self.ended = False

        def begin(self):
            raise LookupError("no begin")

        def end(self, session):
            self.ended = True

    xs, ys = batch()
    with tf.train.MonitoredTrainingSession(hooks=[FailsBefore()],
                                           config=tf.ConfigProto()) as sess:
        with pytest.raises(ValueError, match="not this step"):
            sess.run(train_op, {x: xs, y: ys})
    tf.reset_default_graph()
    x, y, w, loss, step, train_op = linear_model()
    hook = FailsAtBegin()
    with pytest.raises(LookupError, match="no begin"):
        tf.train.MonitoredTrainingSession(hooks=[hook])
    assert not hook.ended
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.MonitoredTrainingSession(master="inproc://999999")


def test_the_graph_is_finalized_once_the_session_starts():
    x, y, w, loss, step, train_op = linear_model()
    with tf.train.MonitoredTrainingSession() as sess:
        with pytest.raises(RuntimeError, match="Graph is finalized"):
            tf.constant(1.0)
        with pytest.raises(RuntimeError, match="Graph is finalized"):
            tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        xs, ys = batch()
        sess.run(train_op, {x: xs, y: ys})
        # A hook that failed before the step (above) did not run it: one step so far.
        assert sess.run(step) == 1


def test_saver_takes_the_step_as_a_number_tensor_or_numpy_value(tmp_path):
    x, y, w, loss, step, train_op = linear_model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = str(tmp_path / "model.ckpt")
        assert saver.save(sess, path, global_step=sess.run(step)) == path + "-0"
        assert saver.save(sess, path, global_step=7) == path + "-7"
        assert saver.save(sess, path, global_step=step) == path + "-0"
        assert os.path.isfile(path + "-7.npz")
        sess.run(w.assign([[1.0], [2.0]]))
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(sess.run(w), [[0.0], [0.0]])


def test_ctrl_c_ends_a_non_chiefs_wait_for_the_chief():
    linear_model()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # No chief will come: without Ctrl-C this waits max_wait_secs.
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=300)
    assert time.monotonic() - started < 5


def test_monitored_session_errors():
    x, y, w, loss, step, train_op = linear_model()
    with pytest.raises(TypeError, match="hooks: expected SessionRunHook"):
        tf.train.MonitoredTrainingSession(hooks=[object()])
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="exactly one of save_secs or save_steps"):
        tf.train.CheckpointSaverHook("/tmp/x")
    sess = tf.train.MonitoredTrainingSession()
    sess.close()
    with pytest.raises(RuntimeError, match="closed MonitoredSession"):
        sess.run(train_op)


# TensorFlow 1.x programs make the step with tf.Variable(0, ...): int32 (this crashed the
# process with SIGSEGV); get_or_create_global_step makes an int64 one.
@pytest.mark.parametrize("make_step", [
    tf.train.get_or_create_global_step,
    lambda: tf.Variable(0, trainable=False, name="global_step"),
], ids=["int64_step", "int32_step"])
def test_sync_replicas_on_a_cluster_in_this_process(insecure, make_step):
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})
    servers = [tf.train.Server(cluster, "ps", 0)] + \
        [tf.train.Server(cluster, "worker", i) for i in range(2)]
    # Worker 0 alone, aggregating one gradient per step (both workers' graphs are the same).
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                  cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        step = make_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=1, total_num_replicas=1)
        train_op = opt.minimize(loss, global_step=step)
    assert w.device.startswith("/job:ps")
    xs, ys = batch()
    hooks = [opt.make_session_run_hook(is_chief=True), tf.train.StopAtStepHook(last_step=20)]
    with tf.train.MonitoredTrainingSession(master=servers[1].target, is_chief=True,
                                           hooks=hooks) as sess:
        first = sess.run(loss, {x: xs, y: ys})
        while not sess.should_stop():
            sess.run(train_op, {x: xs, y: ys})
        assert sess.run(step) >= 20
        assert sess.run(loss, {x: xs, y: ys}) < first / 2
    for s in servers:
        s.stop()
