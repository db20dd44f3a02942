"""The hooks of tf.train beyond the basics, as TensorFlow 1.x's basic_session_run_hooks_test.py
describes them (rewritten here): SecondOrStepTimer, hooks that feed and run operations
(FeedFnHook, SessionRunArgs with feeds and Operations), GlobalStepWaiterHook,
SummarySaverHook, StepCounterHook's summaries, CheckpointSaverListener."""

import glob
import os
import threading
import time

import pytest

import troupe as tf


def test_second_or_step_timer():
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(1)
    assert timer.update_last_triggered_step(1) == (None, None)
    assert not timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(3)
    assert timer.should_trigger_for_step(4)
    secs, steps = timer.update_last_triggered_step(4)
    assert steps == 3 and secs >= 0
    assert timer.last_triggered_step() == 4
    by_time = tf.train.SecondOrStepTimer(every_secs=0.05)
    by_time.update_last_triggered_step(1)
    assert not by_time.should_trigger_for_step(2)
    time.sleep(0.06)
    assert by_time.should_trigger_for_step(2)


def test_hooks_feed_values_and_run_operations():
    x = tf.placeholder(tf.float32, [])
    twice = x * 2.0
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    fed = []

    class Bumper(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"op": bump.op, "x": x})

        def after_run(self, run_context, run_values):
            fed.append(run_values.results["x"])

    values = iter(range(1, 100))
    hooks = [tf.train.FeedFnHook(lambda: {x: next(values)}), Bumper()]
    with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
        doubled = [sess.run(twice) for _ in range(3)]
        # The hook's op ran in each step; the raw session runs no hooks.
        assert sess.raw_session().run(counter) == 3
    assert doubled == [2.0, 4.0, 6.0]
    assert fed == [1.0, 2.0, 3.0]


def test_a_tensor_fed_by_a_hook_and_the_caller_is_an_error():
    x = tf.placeholder(tf.float32, [])
    with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: 1.0})]) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="fed by a SessionRunHook"):
            sess.run(x, {x: 2.0})


def test_global_step_waiter_hook_waits_for_the_step():
    step = tf.train.get_or_create_global_step()
    advance = tf.assign_add(step, 1)
    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=3)
    with pytest.raises(RuntimeError, match="Global step should be created"):
        with tf.Graph().as_default():
            tf.train.GlobalStepWaiterHook(1).begin()
    server = tf.train.Server.create_local_server()
    with tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(master=server.target),
            hooks=[waiter]) as sess:
        helper = tf.Session(server.target)

        def advance_later():
            for _ in range(3):
                time.sleep(0.1)
                helper.run(advance)
        thread = threading.Thread(target=advance_later)
        thread.start()
        sess.run(step)  # waits until the helper has advanced the step to 3
        thread.join()
        assert sess.run(step) == 3
        helper.close()
    server.stop()


def test_summary_saver_and_step_counter_hooks_write_their_summaries(tmp_path):
    step = tf.train.get_or_create_global_step()
    advance = tf.assign_add(step, 1)
    tf.summary.scalar("doubled", tf.cast(step, tf.float32) * 2.0)
    summary_op = tf.summary.merge_all()
    listener_calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            listener_calls.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            listener_calls.append(("after", global_step_value))

        def end(self, session, global_step_value):
            listener_calls.append(("end", global_step_value))

    hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path),
                                       summary_op=summary_op),
             tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path)),
             tf.train.CheckpointSaverHook(str(tmp_path / "ckpt"), save_steps=3,
                                          listeners=[Listener()])]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        for _ in range(6):
            sess.run(advance)
    tf.summary.FileWriterCache.clear()
    events = [e for path in glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
              for e in tf.train.summary_iterator(path)]
    doubled = sorted((e.step, v.simple_value) for e in events for v in e.summary.value
                     if v.tag == "doubled")
    assert doubled == [(0, 0.0), (2, 4.0), (4, 8.0)]
    assert any(v.tag == "global_step/sec" for e in events for v in e.summary.value)
    assert any(e.HasField("session_log") for e in events)
    assert ("before", 0) in listener_calls and ("after", 3) in listener_calls
    assert listener_calls[-1] == ("end", 6)
    assert tf.train.latest_checkpoint(str(tmp_path / "ckpt")).endswith("model.ckpt-6")
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)
