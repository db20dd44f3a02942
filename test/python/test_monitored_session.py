"""tf.train.Scaffold, MonitoredSession, SingularMonitoredSession and the session creators, as
TensorFlow 1.x's monitored_session_test.py tests them (rewritten here), plus what a scaffold
changes in a MonitoredTrainingSession's start-up."""

import numpy as np
import pytest

import troupe as tf

from conftest import free_ports


def _servers(count):
    spec = tf.train.ClusterSpec({"worker": ["127.0.0.1:%d" % p for p in free_ports(count)]})
    return [tf.train.Server(spec, "worker", i) for i in range(count)]


# --- Scaffold ---

def test_a_scaffold_creates_nothing_before_finalize():
    with tf.Graph().as_default():
        scaffold = tf.train.Scaffold()
        for field in ("init_op", "init_feed_dict", "init_fn", "ready_op", "local_init_op",
                      "saver", "summary_op", "ready_for_local_init_op"):
            assert getattr(scaffold, field) is None, field


def test_scaffold_defaults_make_a_model_ready():
    with tf.Graph().as_default():
        scaffold = tf.train.Scaffold()
        tf.Variable(1, name="my_var")
        local = tf.Variable(2, name="my_local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        scaffold.finalize()
        assert isinstance(scaffold.init_op, tf.Operation)
        assert scaffold.init_feed_dict is None and scaffold.init_fn is None
        assert isinstance(scaffold.ready_op, tf.Tensor)
        assert isinstance(scaffold.ready_for_local_init_op, tf.Tensor)
        assert isinstance(scaffold.local_init_op, tf.Operation)
        assert isinstance(scaffold.saver, tf.train.Saver)
        with tf.Session() as sess:
            assert set(sess.run(scaffold.ready_op)) == {b"my_var", b"my_local"}
            assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"my_var"]
            sess.run([scaffold.init_op, scaffold.local_init_op])
            assert len(sess.run(scaffold.ready_op)) == 0
            assert sess.run(local) == 2


def test_scaffold_defaults_without_variables():
    with tf.Graph().as_default():
        scaffold = tf.train.Scaffold()
        tf.constant(1, name="my_const")
        scaffold.finalize()
        assert isinstance(scaffold.init_op, tf.Operation)
        assert isinstance(scaffold.ready_op, tf.Tensor)
        assert isinstance(scaffold.local_init_op, tf.Operation)
        assert isinstance(scaffold.saver, tf.train.Saver)
        assert scaffold.summary_op is None


def test_scaffolds_share_the_defaults_through_the_collections():
    with tf.Graph().as_default():
        tf.Variable([1])
        first = tf.train.Scaffold().finalize()
        second = tf.train.Scaffold().finalize()
        for field in ("init_op", "ready_op", "ready_for_local_init_op", "local_init_op",
                      "saver"):
            assert getattr(first, field) is getattr(second, field), field


def test_two_items_in_a_collection_are_an_error_naming_the_argument():
    with tf.Graph().as_default():
        tf.Variable([1])
        tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
        tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
        with pytest.raises(RuntimeError, match=r"More than one item.*saver=item to use"):
            tf.train.Scaffold().finalize()


def test_a_scaffold_keeps_what_it_is_given_and_finalizes_the_graph():
    with tf.Graph().as_default():
        tf.Variable([1])
        saver = tf.train.Saver()
        scaffold = tf.train.Scaffold(init_op=2, init_feed_dict=3,
                                     init_fn=lambda scaffold, sess: 4, ready_op=5,
                                     local_init_op=6, saver=saver)
        scaffold.finalize()
        assert (scaffold.init_op, scaffold.init_feed_dict) == (2, 3)
        assert callable(scaffold.init_fn)
        assert (scaffold.ready_op, scaffold.local_init_op) == (5, 6)
        assert scaffold.saver is saver
        with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified"):
            tf.constant([0])


def test_copy_from_scaffold_overrides_only_what_is_given():
    with tf.Graph().as_default():
        tf.Variable([1])
        base = tf.train.Scaffold(init_fn=lambda scaffold, sess: None, local_init_op=7)
        copy = tf.train.Scaffold(local_init_op=8, copy_from_scaffold=base)
        assert copy.local_init_op == 8 and callable(copy.init_fn)
        with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold"):
            tf.train.Scaffold(copy_from_scaffold=object())
        with pytest.raises(TypeError, match="init_fn must be callable"):
            tf.train.Scaffold(init_fn=3)


# --- a scaffold in a monitored session ---

def test_init_fn_and_init_feed_dict_run_when_the_chief_initialises_not_when_it_restores(
        tmp_path):
    calls = []
    with tf.Graph().as_default():
        start = tf.placeholder(tf.float32, [], name="start")
        v = tf.Variable(start, name="v")
        bump = tf.assign_add(v, 10.0)
        step = tf.train.get_or_create_global_step()
        advance = tf.assign_add(step, 1)

        def init_fn(scaffold, sess):
            calls.append(scaffold)
            sess.run(bump)

        scaffold = tf.train.Scaffold(init_feed_dict={start: 5.0}, init_fn=init_fn)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               scaffold=scaffold) as sess:
            assert sess.run(v) == 15.0
            sess.run(advance)
            assert sess.scaffold is scaffold
        assert calls == [scaffold]
        first = scaffold
    with tf.Graph().as_default():
        start = tf.placeholder(tf.float32, [], name="start")
        v = tf.Variable(start, name="v")
        tf.train.get_or_create_global_step()
        scaffold = tf.train.Scaffold(init_fn=lambda scaffold, sess: calls.append("again"))
        with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               scaffold=scaffold) as sess:
            assert sess.run(v) == 15.0  # restored, without a feed for `start`
    assert calls == [first]


def test_local_variables_are_initialised_on_start_up():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        count = tf.assign_add(counter, 1)
        with tf.train.MonitoredTrainingSession() as sess:
            assert sess.run(count) == 1


def test_an_init_fn_that_raises_ends_start_up_with_its_exception():
    class Broken(Exception):
        pass

    def init_fn(scaffold, sess):
        raise Broken("init_fn failed")

    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(Broken, match="init_fn failed"):
            tf.train.MonitoredTrainingSession(scaffold=tf.train.Scaffold(init_fn=init_fn))


def test_a_model_the_scaffold_does_not_make_ready_is_a_failed_precondition():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        tf.Variable(1.0, name="kept")
        never = tf.Variable(2.0, name="never")
        init = tf.variables_initializer([v for v in tf.global_variables() if v is not never])
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match=r"did not make the model ready for local_init: never is not "
                                 r"initialised"):
            tf.train.MonitoredTrainingSession(scaffold=tf.train.Scaffold(init_op=init))
    with tf.Graph().as_default():  # no local init: the ready op's verdict
        tf.train.get_or_create_global_step()
        never = tf.Variable(2.0, name="never")
        init = tf.variables_initializer([v for v in tf.global_variables() if v is not never])
        scaffold = tf.train.Scaffold(init_op=init, local_init_op=tf.no_op(),
                                     ready_for_local_init_op=tf.constant([], tf.string))
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match=r"did not make the model ready: never is not initialised"):
            tf.train.MonitoredTrainingSession(scaffold=scaffold)


def test_what_a_scaffold_cannot_hold_is_a_type_error_naming_the_field():
    with tf.Graph().as_default():
        tf.Variable(1.0)
        with pytest.raises(TypeError, match="init_op must be a Operation or None, got 2"):
            tf.train.MonitoredTrainingSession(scaffold=tf.train.Scaffold(init_op=2))
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="scaffold must be a tf.train.Scaffold"):
            tf.train.MonitoredTrainingSession(scaffold={})


# --- MonitoredSession, SingularMonitoredSession and the creators ---

def test_monitored_session_runs_hooks_and_saves_nothing(tmp_path):
    with tf.Graph().as_default() as g:
        step = tf.train.get_or_create_global_step()
        advance = tf.assign_add(step, 1)
        stop = tf.train.StopAtStepHook(last_step=3)
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=str(tmp_path))
        with tf.train.MonitoredSession(session_creator=creator, hooks=[stop]) as sess:
            assert sess.graph is g
            while not sess.should_stop():
                sess.run(advance)
        assert not list(tmp_path.iterdir())


def test_a_chief_session_creator_restores_a_named_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(v, 42.0))
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        creator = tf.train.ChiefSessionCreator(checkpoint_filename_with_path=path)
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            assert sess.run(v) == 42.0
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        creator = tf.train.ChiefSessionCreator(checkpoint_filename_with_path=path)
        sess = creator.create_session()  # standalone: a tf.Session, prepared
        assert sess.run(v) == 42.0
        sess.close()
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=str(tmp_path),
                                               checkpoint_filename_with_path=path)
        with pytest.raises(tf.errors.InvalidArgumentError, match="not both"):
            tf.train.MonitoredSession(session_creator=creator)


def test_singular_monitored_session_raw_session_runs_without_hooks():
    class Counting(tf.train.SessionRunHook):
        calls = 0

        def before_run(self, run_context):
            Counting.calls += 1

    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        doubled = v * 2.0
        with tf.train.SingularMonitoredSession(hooks=[Counting()]) as sess:
            assert sess.run(v) == 3.0
            assert sess.raw_session().run(doubled) == 6.0
            assert Counting.calls == 1
        with pytest.raises(RuntimeError, match="closed Session"):
            sess.raw_session().run(v)


def test_a_worker_session_creator_waits_for_the_chief(insecure):
    servers = _servers(2)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:0"):
                v = tf.Variable(np.float32(2.0), name="shared")
            chief = tf.train.MonitoredSession(
                session_creator=tf.train.ChiefSessionCreator(master=servers[0].target))
            with chief:
                worker = tf.train.MonitoredSession(
                    session_creator=tf.train.WorkerSessionCreator(master=servers[1].target,
                                                                  max_wait_secs=30))
                with worker:
                    assert worker.run(v) == 2.0
    finally:
        for server in servers:
            server.stop()


def test_a_worker_session_creator_gives_up_after_max_wait_secs(insecure):
    server, = _servers(1)
    try:
        with tf.Graph().as_default():
            tf.Variable(1.0)
            creator = tf.train.WorkerSessionCreator(master=server.target, max_wait_secs=1)
            with pytest.raises(tf.errors.DeadlineExceededError):
                tf.train.MonitoredSession(session_creator=creator)
    finally:
        server.stop()


# --- a SessionCreator of the program's own (monitored_session_test's cases, rewritten) ---

class _Recording(tf.train.SessionRunHook):
    """Records the calls it gets; fetches `fetch` and feeds `feeds` when given."""

    def __init__(self, fetch=None, feeds=None):
        self.calls, self.results, self.fetch, self.feeds = [], [], fetch, feeds

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert coord is not None

    def before_run(self, run_context):
        self.calls.append("before_run")
        if self.fetch is None and self.feeds is None:
            return None
        return tf.train.SessionRunArgs(self.fetch, feed_dict=self.feeds)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)

    def end(self, session):
        self.calls.append("end")


class _InitializingCreator(tf.train.SessionCreator):
    """A plain tf.Session with the variables initialised, counting its sessions."""

    def __init__(self):
        self.created = 0

    def create_session(self):
        self.created += 1
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        return sess


def test_a_session_creator_of_ones_own_runs_hooks_around_its_sessions():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        x = tf.placeholder(tf.float32, [])
        doubled = v * 2.0
        fed = x + 1.0
        hook = _Recording(fetch=doubled, feeds={x: 41.0})
        creator = _InitializingCreator()
        with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
            assert isinstance(sess, tf.train.MonitoredSession)
            assert sess.run(fed) == 42.0  # the hook's feed
            assert not sess.should_stop()
        assert creator.created == 1
        assert hook.calls == ["begin", "after_create_session", "before_run", "after_run", "end"]
        assert hook.results == [2.0]


def test_a_session_creator_of_ones_own_recovers_from_a_lost_task():
    """A session whose run raises AbortedError once is replaced by a new one from the
    creator, and the step runs again (TensorFlow's _RecoverableSession)."""
    class FailingOnce:
        failures = 1

        def __init__(self, sess):
            self._sess = sess

        @property
        def graph(self):
            return self._sess.graph

        def run(self, *args, **kwargs):
            if FailingOnce.failures:
                FailingOnce.failures -= 1
                raise tf.errors.AbortedError(None, None, "the ps restarted")
            return self._sess.run(*args, **kwargs)

        def close(self):
            self._sess.close()

    class Creator(_InitializingCreator):
        def create_session(self):
            return FailingOnce(super().create_session())

    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        hook = _Recording()
        creator = Creator()
        with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
            assert sess.run(v) == 3.0
        assert creator.created == 2
        assert hook.calls.count("after_create_session") == 2
        assert hook.calls[-1] == "end"


def test_run_step_fn_recovers_and_creator_subclasses_and_session_subclasses_take_this_path():
    class FailingStep:
        failures = 1

    def step_fn(step_context):
        if FailingStep.failures:
            FailingStep.failures -= 1
            raise tf.errors.UnavailableError(None, None, "the ps went away")
        return step_context.session.run(v)

    class Chief(tf.train.ChiefSessionCreator):
        called = 0

        def create_session(self):
            Chief.called += 1
            return super().create_session()

    class MySession(tf.train.MonitoredSession):
        pass

    with tf.Graph().as_default():
        v = tf.Variable(7.0)
        creator = _InitializingCreator()
        with MySession(session_creator=creator) as sess:
            assert sess.run_step_fn(step_fn) == 7.0  # again, on a new session
        assert creator.created == 2
        with tf.train.MonitoredSession(session_creator=Chief()) as sess:
            assert sess.run(v) == 7.0
        assert Chief.called == 1  # the override ran, as in TensorFlow


def test_a_session_creator_of_ones_own_stops_and_refuses_conflicting_feeds():
    class Stopping(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = x * 2.0
        with tf.train.MonitoredSession(session_creator=_InitializingCreator(),
                                       hooks=[Stopping(), _Recording(feeds={x: 1.0})]) as sess:
            with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
                sess.run(y, feed_dict={x: 2.0})
            assert sess.run(y) == 2.0
            assert sess.should_stop()
            with pytest.raises(RuntimeError, match="Run called even after should_stop"):
                sess.run(y)
            assert sess.run_step_fn(lambda step_context: step_context.session.run(
                y, feed_dict={x: 5.0})) == 10.0
            raise tf.errors.OutOfRangeError(None, None, "end of input")  # swallowed
        with pytest.raises(RuntimeError, match="closed MonitoredSession"):
            sess.run(y)
        with pytest.raises(TypeError, match="an object with create_session"):
            tf.train.MonitoredSession(session_creator=object())
        with pytest.raises(TypeError, match="master must be a string"):
            tf.train.ChiefSessionCreator(master=3)


# --- run_step_fn (monitored_session_test's RunStepFnTest cases, rewritten) ---

def test_run_step_fn_gives_the_raw_session_and_runs_with_hooks():
    class Counting(tf.train.SessionRunHook):
        def __init__(self):
            self.before = 0

        def before_run(self, run_context):
            self.before += 1

    with tf.Graph().as_default():
        c = tf.placeholder(tf.float32)
        v = tf.add(c, 4.0)
        w = tf.add(c, 0.5)
        hook = Counting()

        def step_fn(step_context):
            a = step_context.session.run(fetches=v, feed_dict={c: 0.5})
            if a <= 4.5:
                step_context.request_stop()
            return step_context.run_with_hooks(fetches=w, feed_dict={c: 0.1})

        with tf.train.MonitoredSession(hooks=[hook]) as session:
            assert hook.before == 0
            with pytest.raises(StopIteration, match="step_fn has requested the iterations"):
                session.run_step_fn(step_fn)
            assert not session.should_stop()  # as TensorFlow's: StopIteration is the signal
            assert hook.before == 0  # the raw session runs no hook

        def plain_step(step_context):
            return step_context.run_with_hooks(fetches=w, feed_dict={c: 0.25})

        with tf.train.MonitoredSession(hooks=[hook]) as session:
            assert session.run_step_fn(plain_step) == pytest.approx(0.75)
            assert hook.before == 1 and not session.should_stop()


def test_run_step_fn_stops_a_loop_in_a_with_block_and_takes_methods():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        advance = tf.assign_add(step, 1)

        class Model:
            def step_fn(self, step_context):
                value = step_context.run_with_hooks(advance)
                if value >= 3:
                    step_context.request_stop()
                return value

        seen = []
        with tf.train.MonitoredSession() as session:
            while not session.should_stop():
                seen.append(session.run_step_fn(Model().step_fn))
        assert seen == [1, 2]  # the third call stopped the loop through StopIteration

        import functools

        class Callable:
            def __call__(self, step_context):
                return step_context.run_with_hooks(advance)

        def with_extra(extra, step_context):
            return step_context.run_with_hooks(advance) + extra
        with tf.train.MonitoredSession() as session:
            assert session.run_step_fn(Callable()) == 1  # a new session: a new global step
            assert session.run_step_fn(functools.partial(with_extra, 10)) == 12
            assert session.run_step_fn(functools.partial(Model.step_fn, Model())) == 3


def test_run_step_fn_refuses_functions_of_other_arguments():
    with tf.Graph().as_default():
        tf.constant(1)
        with tf.train.MonitoredSession() as session:
            for bad in (lambda: None, lambda ctx: None, lambda step_context, x: None):
                with pytest.raises(ValueError, match="`step_fn` may either have one "
                                                     "`step_context` argument"):
                    session.run_step_fn(bad)
        with pytest.raises(RuntimeError, match="closed MonitoredSession"):
            session.run_step_fn(lambda step_context: None)
