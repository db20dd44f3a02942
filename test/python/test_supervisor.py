"""tf.train.Supervisor and tf.train.SessionManager, as TensorFlow 1.x defines them: managed
sessions and their errors, the end of input, init ops and functions, local init and readiness,
restoring from a checkpoint, non-chiefs waiting for a chief, the standard services writing
summaries, steps per second and checkpoints, and a distributed chief and worker (the cases of
TensorFlow's supervisor_test and session_manager_test, re-expressed)."""

import os
import threading
import time

import numpy as np
import pytest

import troupe as tf

from conftest import free_ports, read_tfrecords


def events_of(logdir):
    events = []
    for name in sorted(os.listdir(logdir)):
        if name.startswith("events.out.tfevents."):
            events += [tf.Event.FromString(r) for r in read_tfrecords(os.path.join(logdir, name))]
    return events


class SupervisorTest(tf.test.TestCase):

    def test_basics_and_the_graph_is_finalized(self):
        logdir = self.get_temp_dir()
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=logdir)
        sess = sv.prepare_or_wait_for_session("")
        for _ in range(3):
            self.assertEqual(1.0, sess.run(my_op))
        sv.stop()
        sess.close()
        self.assertTrue(tf.get_default_graph().finalized)
        with self.assertRaisesRegex(RuntimeError, "finalized"):
            tf.constant(2.0)

    def test_managed_session_and_the_events_it_writes(self):
        logdir = self.get_temp_dir()
        my_op = tf.constant(1.0)
        sv = tf.train.Supervisor(logdir=logdir)
        with sv.managed_session("") as sess:
            for _ in range(3):
                self.assertEqual(1.0, sess.run(my_op))
        self.assertTrue(sv.should_stop())
        events = events_of(logdir)
        self.assertEqual("brain.Event:2", events[0].file_version)
        kinds = [e.WhichOneof("what") for e in events]
        self.assertIn("graph_def", kinds)
        self.assertEqual(tf.SessionLog.STOP, events[-1].session_log.status)
        self.assertTrue(os.path.isfile(os.path.join(logdir, "graph.pbtxt")))

    def test_an_error_in_the_block_is_raised_again_after_stopping(self):
        sv = tf.train.Supervisor(logdir=self.get_temp_dir())
        last_step = None
        with self.assertRaisesRegex(RuntimeError, "failing here"):
            with sv.managed_session("") as sess:
                for step in range(10):
                    last_step = step
                    if step == 3:
                        raise RuntimeError("failing here")
                    sess.run(tf.get_default_graph().get_operations()[0].outputs[0])
        self.assertTrue(sv.should_stop())
        self.assertEqual(3, last_step)

    def test_out_of_range_ends_the_block_cleanly(self):
        sv = tf.train.Supervisor(logdir=self.get_temp_dir())
        with sv.managed_session("") as sess:
            for step in range(10):
                if step == 3:
                    raise tf.errors.OutOfRangeError(None, None, "end of input")
                del sess
                sess = None
        self.assertTrue(sv.should_stop())

    def test_end_of_input_from_a_queue_runner_stops_the_block(self):
        # A queue fed by a runner that ends after 3 items: the consumer gets OutOfRangeError.
        counter = tf.Variable(tf.constant(0, dtype=tf.int64), name="counter")
        queue = tf.FIFOQueue(10, tf.int64)
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(
            counter.count_up_to(3))]))
        dequeue = queue.dequeue()
        sv = tf.train.Supervisor(logdir=self.get_temp_dir())
        got = []
        with sv.managed_session("") as sess:
            while not sv.should_stop():
                got.append(sess.run(dequeue))
        self.assertEqual([0, 1, 2], got)

    def test_init_op_init_fn_and_feed_dict(self):
        v = tf.Variable(1.0, name="v")
        p = tf.placeholder(tf.float32, name="p")
        init = tf.assign(v, p).op
        sv = tf.train.Supervisor(logdir=self.get_temp_dir(), init_op=init,
                                 init_feed_dict={p: 5.0})
        with sv.managed_session("") as sess:
            self.assertEqual(5.0, sess.run(v))

        tf.reset_default_graph()
        w = tf.Variable(tf.zeros([3]), name="w")
        calls = []
        other_logdir = os.path.join(self.get_temp_dir(), "other")

        def init_fn(sess):
            calls.append(sess)
            sess.run(w.initializer)
        sv = tf.train.Supervisor(logdir=other_logdir, init_op=None, init_fn=init_fn)
        with sv.managed_session("") as sess:
            self.assertAllClose([0, 0, 0], sess.run(w))
        self.assertEqual(1, len(calls))

    def test_an_init_op_that_does_not_initialize_is_an_error(self):
        tf.Variable([1.0, 2.0], name="v")
        sv = tf.train.Supervisor(logdir=self.get_temp_dir(), init_op=tf.no_op())
        with self.assertRaisesRegex(RuntimeError, "Variables not initialized: v"):
            sv.prepare_or_wait_for_session("")

    def test_local_init_op_runs_once_ready_for_it(self):
        v = tf.Variable(1.0, name="v")
        w = tf.Variable(v, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        name="w")
        ready_for_local = tf.report_uninitialized_variables([v])
        sv = tf.train.Supervisor(logdir=self.get_temp_dir(),
                                 ready_for_local_init_op=ready_for_local,
                                 init_op=v.initializer, local_init_op=w.initializer)
        with sv.managed_session("") as sess:
            self.assertEqual(1.0, sess.run(w))
        self.assertEqual([w], tf.local_variables())

    def test_the_chief_restores_the_newest_checkpoint(self):
        logdir = self.get_temp_dir()
        with tf.Graph().as_default():
            v = tf.Variable(1.0, name="v")
            gs = tf.train.get_or_create_global_step()
            change = [v.assign(42.0), gs.assign(7)]
            sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0)
            with sv.managed_session("") as sess:
                sess.run(change)
                sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
        with tf.Graph().as_default():
            v = tf.Variable(1.0, name="v")
            tf.train.get_or_create_global_step()
            sv = tf.train.Supervisor(logdir=logdir)
            with sv.managed_session("") as sess:
                self.assertEqual(42.0, sess.run(v))
                self.assertEqual(7, sess.run(sv.global_step))

    def test_standard_services_write_summaries_steps_per_second_and_checkpoints(self):
        logdir = self.get_temp_dir()
        x = tf.Variable(3.0, name="x")
        gs = tf.Variable(0, trainable=False, name="global_step")  # int32, as TF1 programs do
        increment = tf.assign_add(gs, 1)
        tf.summary.scalar("x_value", x)
        sv = tf.train.Supervisor(logdir=logdir, save_summaries_secs=0.05, save_model_secs=0.05)
        with sv.managed_session("") as sess:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not tf.train.latest_checkpoint(logdir):
                sess.run(increment)
            sess.run(increment)
            time.sleep(0.2)
        self.assertEqual(gs.op.name, sv.global_step.op.name)
        tags = {v.tag for e in events_of(logdir) if e.WhichOneof("what") == "summary"
                for v in e.summary.value}
        self.assertIn("x_value", tags)
        self.assertIn("global_step/sec", tags)
        logs = [e.session_log for e in events_of(logdir) if e.WhichOneof("what") == "session_log"]
        self.assertEqual(tf.SessionLog.START, logs[0].status)
        self.assertIn(tf.SessionLog.CHECKPOINT, [log.status for log in logs])
        self.assertTrue(tf.train.latest_checkpoint(logdir))

    def test_summary_computed_and_who_may_write(self):
        logdir = self.get_temp_dir()
        tf.Variable(1.0, name="v")
        sv = tf.train.Supervisor(logdir=logdir)
        sess = sv.prepare_or_wait_for_session("", start_standard_services=False)
        sv.summary_computed(sess, tf.Summary(value=[tf.Summary.Value(tag="hand",
                                                                      simple_value=1.0)]))
        sv.stop()
        sess.close()
        self.assertIn("hand", [v.tag for e in events_of(logdir) for v in e.summary.value])

        tf.reset_default_graph()
        tf.Variable(1.0, name="v")
        no_logdir = tf.train.Supervisor(logdir=None)
        with self.assertRaisesRegex(RuntimeError, "requires a summary writer"):
            no_logdir.summary_computed(None, tf.Summary())
        self.assertIsNone(no_logdir.summary_writer)

    def test_a_non_chief_needs_placed_variables_and_cannot_start_services(self):
        tf.Variable(1.0, name="unplaced")
        with self.assertRaisesRegex(ValueError, "all Variables must have their device set"):
            tf.train.Supervisor(is_chief=False)
        tf.reset_default_graph()
        with tf.device("/job:localhost/task:0"):
            tf.Variable(1.0, name="placed")
        sv = tf.train.Supervisor(is_chief=False, logdir=self.get_temp_dir())
        self.assertIsNone(sv.summary_writer)  # only the chief writes
        with self.assertRaisesRegex(RuntimeError, "Only chief supervisor"):
            sv.start_standard_services(None)

    def test_default_global_step_must_be_an_integer(self):
        tf.Variable(1.0, name="global_step")
        sv = tf.train.Supervisor(logdir=self.get_temp_dir())
        self.assertIsNone(sv.global_step)


class SessionManagerTest(tf.test.TestCase):

    def test_prepare_session_runs_init_op_and_checks_readiness(self):
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
        sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
        self.assertAllClose([1.0, 2.0, 3.0], sess.run(v))
        with self.assertRaisesRegex(RuntimeError, "no init_op or init_fn"):
            sm.prepare_session("")

    def test_recover_session_from_a_checkpoint(self):
        checkpoint_dir = self.get_temp_dir()
        with tf.Graph().as_default():
            v = tf.Variable(1, name="v")
            sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
            saver = tf.train.Saver({"v": v})
            sess, initialized = sm.recover_session("", saver=saver,
                                                   checkpoint_dir=checkpoint_dir)
            self.assertFalse(initialized)
            sess.run(v.initializer)
            self.assertEqual(1, sess.run(v))
            saver.save(sess, os.path.join(checkpoint_dir, "recover_session_checkpoint"))
        with tf.Graph().as_default():
            v = tf.Variable(2, name="v")
            sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
            saver = tf.train.Saver({"v": v})
            sess, initialized = sm.recover_session("", saver=saver,
                                                   checkpoint_dir=checkpoint_dir)
            self.assertTrue(initialized)
            self.assertEqual(1, sess.run(v))

    def test_wait_for_session_returns_once_another_session_initializes(self):
        server = tf.train.Server.create_local_server()
        v = tf.Variable(1, name="v")
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                     recovery_wait_secs=0.1)

        def initialize_later():
            time.sleep(0.5)
            with tf.Session(server.target) as other:
                other.run(v.initializer)
        threading.Thread(target=initialize_later).start()
        sess = sm.wait_for_session(server.target, max_wait_secs=30)
        self.assertEqual(1, sess.run(v))
        with self.assertRaises(tf.errors.DeadlineExceededError):
            tf.train.SessionManager(ready_op=tf.report_uninitialized_variables([tf.Variable(
                3, name="never")]), recovery_wait_secs=0.1).wait_for_session(
                    server.target, max_wait_secs=0.3)
        server.stop()

    def test_ready_for_local_init_needs_a_local_init_op(self):
        with self.assertRaisesRegex(ValueError, "you must also pass a local_init_op"):
            tf.train.SessionManager(ready_for_local_init_op=tf.constant([], dtype=tf.string))


def test_an_update_under_a_workers_device_runs_on_the_ps(insecure):
    """As TensorFlow's placer: a reference input decides, with or without soft placement."""
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % ports[1]]})
    servers = [tf.train.Server(cluster, "ps", 0), tf.train.Server(cluster, "worker", 0)]
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                  cluster=cluster)):
        gs = tf.Variable(0, trainable=False, name="global_step")
        increment = tf.assign_add(gs, 1)  # a worker's device, a ps's variable
    soft = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(servers[1].target, config=soft) as sess:
        sess.run(gs.initializer)
        assert sess.run(increment) == 1
    with tf.Session(servers[1].target) as sess:
        assert sess.run(increment) == 2
    for s in servers:
        s.stop()


def test_a_distributed_chief_and_worker_with_supervisor(insecure, tmp_path):
    """mnist_replica's pattern: variables on the ps, the chief initializes, a worker waits."""
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})
    servers = [tf.train.Server(cluster, "ps", 0),
               tf.train.Server(cluster, "worker", 0), tf.train.Server(cluster, "worker", 1)]
    results = {}

    def worker(index):
        graph = tf.Graph()
        with graph.as_default():
            with tf.device(tf.train.replica_device_setter(
                    worker_device="/job:worker/task:%d" % index, cluster=cluster)):
                gs = tf.Variable(0, trainable=False, name="global_step")
                w = tf.Variable(np.zeros([2], np.float32), name="w")
                # As in TensorFlow, an update of a ps variable is built next to it.
                with tf.colocate_with(gs):
                    train = tf.group(tf.assign_add(w, [1.0, 1.0]), tf.assign_add(gs, 1))
            sv = tf.train.Supervisor(is_chief=index == 0,
                                     logdir=str(tmp_path) if index == 0 else None,
                                     recovery_wait_secs=0.2, global_step=gs)
            sess = sv.prepare_or_wait_for_session(servers[1 + index].target)
            for _ in range(5):
                sess.run(train)
            results[index] = sess.run(gs)
            sv.stop()
            sess.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in (1, 0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(results) == [0, 1]
    assert max(results.values()) == 10  # both workers' steps on the ps's one global step
    for s in servers:
        s.stop()


def test_sync_replicas_with_supervisor_as_mnist_replica_runs_it(insecure, tmp_path):
    """TensorFlow's mnist_replica with --sync_replicas: the chief runs the init tokens op and
    the chief queue runner, every worker its local step init; an int32 global step."""
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})
    servers = [tf.train.Server(cluster, "ps", 0),
               tf.train.Server(cluster, "worker", 0), tf.train.Server(cluster, "worker", 1)]
    xs = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [3.0]], np.float32)
    results, errors_seen = {}, []

    def worker(index):
        try:
            is_chief = index == 0
            graph = tf.Graph()
            with graph.as_default():
                with tf.device(tf.train.replica_device_setter(
                        worker_device="/job:worker/task:%d" % index, cluster=cluster)):
                    global_step = tf.Variable(0, name="global_step", trainable=False)
                    x = tf.placeholder(tf.float32, [None, 3])
                    y = tf.placeholder(tf.float32, [None, 1])
                    w = tf.Variable(tf.truncated_normal([3, 1], stddev=0.1, seed=1), name="w")
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(0.1),
                                                         replicas_to_aggregate=2,
                                                         total_num_replicas=2)
                    train_step = opt.minimize(loss, global_step=global_step)
                    with tf.control_dependencies([train_step]):  # the step after the update
                        step_reached = tf.identity(global_step)
                    local_init_op = opt.chief_init_op if is_chief else opt.local_step_init_op
                    ready_for_local_init_op = opt.ready_for_local_init_op
                    chief_queue_runner = opt.get_chief_queue_runner()
                    sync_init_op = opt.get_init_tokens_op()
                    init_op = tf.global_variables_initializer()
                sv = tf.train.Supervisor(is_chief=is_chief,
                                         logdir=str(tmp_path) if is_chief else None,
                                         init_op=init_op, local_init_op=local_init_op,
                                         ready_for_local_init_op=ready_for_local_init_op,
                                         recovery_wait_secs=0.2, global_step=global_step)
                # As mnist_replica: soft placement (the readiness checks built under the
                # worker's device scope take a ps variable by reference) and device filters.
                config = tf.ConfigProto(allow_soft_placement=True, device_filters=[
                    "/job:ps", "/job:worker/task:%d" % index])
                sess = sv.prepare_or_wait_for_session(servers[1 + index].target, config=config)
                if is_chief:
                    sess.run(sync_init_op)
                    sv.start_queue_runners(sess, [chief_queue_runner])
                first = sess.run(loss, {x: xs, y: ys})
                step = 0
                while step < 30:
                    _, step = sess.run([train_step, step_reached], {x: xs, y: ys})
                results[index] = (first, sess.run(loss, {x: xs, y: ys}), step)
                sv.stop()
        except Exception as e:  # noqa: BLE001
            errors_seen.append((index, e))

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors_seen, errors_seen
    assert sorted(results) == [0, 1]
    first, last, step = results[0]
    assert step >= 30
    assert last < first / 10  # it learned, one averaged update per global step
    for s in servers:
        s.stop()


@pytest.mark.parametrize("failed", [False, True], ids=["stop", "failed_update"])
def test_the_chiefs_stop_releases_a_worker_waiting_for_a_token(insecure, failed):
    """A worker that waits for a token the chief will no longer make (the chief trained alone
    to the last step and stopped) ends its step when the chief's Supervisor stops: its chief
    queue runner puts a token per replica in the queue. TensorFlow's waits for ever here.
    When the chief's loop failed (an error reported to the coordinator), the token queue is
    closed instead: the worker's step fails with OutOfRangeError."""
    ports = free_ports(2)
    cluster = tf.train.ClusterSpec({"worker": ["127.0.0.1:%d" % p for p in ports]})
    servers = [tf.train.Server(cluster, "worker", i) for i in (0, 1)]
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            global_step = tf.Variable(0, name="global_step", trainable=False)
            w = tf.Variable([1.0], name="w")
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                                 replicas_to_aggregate=2, total_num_replicas=2)
            train_step = opt.minimize(tf.reduce_sum(w * w), global_step=global_step)
            chief_queue_runner = opt.get_chief_queue_runner()
            init_op = tf.global_variables_initializer()
    outcome = []

    def worker():  # one gradient of the two an update takes, and no init tokens: it waits
        try:
            with tf.Session(servers[1].target, graph=graph) as sess:
                sess.run(opt.local_step_init_op)
                sess.run(train_step)
            outcome.append("ran")
        except tf.errors.OpError as e:
            outcome.append(e)

    with graph.as_default():
        sv = tf.train.Supervisor(is_chief=True, init_op=init_op, local_init_op=opt.chief_init_op,
                                 summary_op=None, saver=None, global_step=global_step)
        sess = sv.prepare_or_wait_for_session(servers[0].target)
        sv.start_queue_runners(sess, [chief_queue_runner])
        thread = threading.Thread(target=worker, daemon=True)
        thread.start()
        thread.join(1.0)  # most likely waiting for its token by now
        assert not outcome  # no token yet: the one gradient makes no update
        if failed:
            sv.request_stop(RuntimeError("the chief's update failed"))
            with pytest.raises(RuntimeError, match="update failed"):
                sv.stop()
        else:
            sv.stop()
    thread.join(60)
    if failed:
        assert len(outcome) == 1 and isinstance(outcome[0], tf.errors.OutOfRangeError), outcome
    else:
        assert outcome == ["ran"]
    for s in servers:
        s.stop()
