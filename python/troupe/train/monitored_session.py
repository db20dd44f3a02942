"""tf.train.MonitoredTrainingSession, MonitoredSession, SingularMonitoredSession and the
session creators (ChiefSessionCreator, WorkerSessionCreator): a session that initialises or
restores the model (the chief) or waits for it (the others) as its Scaffold says, runs hooks
around every step, saves checkpoints and summaries (MonitoredTrainingSession only), and recovers
from a lost task by opening a new session and making the model ready again
(apps/training/monitored_session.hpp). Use it in a `with` block."""

from .. import _troupe
from .. import errors
from ..framework import get_default_graph
from ..session import (ConfigProto, RunMetadata, RunOptions, _check_run_metadata, _FetchMapper,
                       _feeds, _LentSession, _local_server, _run_options)
from .hooks import SessionRunArgs, _HookAdapter
from .optimizer import _SyncReplicasHookSpec
from .scaffold import Scaffold

USE_DEFAULT = object()


class _MonitoredTrainingSession:
    def __init__(self, master, is_chief, checkpoint_dir, hooks, chief_only_hooks, checkpoints,
                 summary_dir, summaries, config, max_wait_secs, scaffold=None,
                 checkpoint_filename_with_path=None, recovers=True, create_global_step=True):
        self._graph = get_default_graph()
        self._scaffold = scaffold = scaffold if scaffold is not None else Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError("scaffold must be a tf.train.Scaffold, got %r" % (scaffold,))
        self._current_args = None
        python_hooks, native_hooks = [], []
        native_config = config._to_native() if config is not None else None
        self._server = None if master else _local_server(native_config)
        target = master or self._server.target
        all_hooks = list(hooks or []) + (list(chief_only_hooks or []) if is_chief else [])
        for hook in all_hooks:
            if isinstance(hook, _SyncReplicasHookSpec):
                native_hooks.append(hook._native_hook(target, native_config))
            elif hasattr(hook, "before_run") and hasattr(hook, "after_run"):
                python_hooks.append(_HookAdapter(hook, self._graph, self))
            else:
                raise TypeError("hooks: expected SessionRunHook instances, got %r" % (hook,))
        from .training_util import get_or_create_global_step
        with self._graph.as_default():
            if create_global_step:
                get_or_create_global_step()
            scaffold._create_defaults()
            scaffold._check_types()
            summary_op = scaffold.summary_op if is_chief and summary_dir else None
            init_feeds = _feeds(self._graph, scaffold.init_feed_dict)
        init_fn = scaffold.init_fn
        graph = self._graph
        native_init_fn = ((lambda handle: init_fn(_LentSession(handle, graph)))
                          if init_fn is not None else None)
        op = (lambda o: o._op if o is not None else None)  # noqa: E731
        output = (lambda t: t._output if t is not None else None)  # noqa: E731
        saver = scaffold.saver._native if scaffold.saver is not None else None
        # The C++ session adds nodes (ready checks, saver) without the GIL: meanwhile only the
        # hooks' begin() may build; afterwards the graph is finalized, as TensorFlow's is.
        self._graph._preparing = True
        try:
            self._native = _troupe.MonitoredTrainingSession.create(
                self._graph._scope.root(), target, bool(is_chief), checkpoint_dir or "",
                checkpoints[0], checkpoints[1], summaries[0], native_config,
                int(max_wait_secs * 1000), python_hooks, native_hooks, summary_dir or "",
                summaries[1], output(summary_op), op(scaffold.init_op), init_feeds,
                native_init_fn, output(scaffold.ready_op),
                output(scaffold.ready_for_local_init_op), op(scaffold.local_init_op), saver,
                checkpoint_filename_with_path or "", 300000 if recovers else 0)
        except BaseException:
            if self._server is not None:
                self._server.stop()
            raise
        finally:
            self._graph._preparing = False
            self._graph._preparer = None
        self._graph.finalize()

    @property
    def graph(self):
        return self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """One step: the fetches' values, in their structure. A lost task is recovered from."""
        if self._native is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        mapper = _FetchMapper(self._graph, fetches)
        feeds = _feeds(self._graph, feed_dict)
        timeout, trace_level, partition_graphs = _run_options(options)
        _check_run_metadata(run_metadata)
        self._current_args = SessionRunArgs(fetches, feed_dict, options)
        # As TensorFlow's: the hooks' options are merged into the caller's (in place), and the
        # caller and every hook see the same options and the same RunMetadata.
        self._step_options = options if options is not None else RunOptions()
        self._step_metadata = run_metadata if run_metadata is not None else RunMetadata()
        self._step_metadata_read = False
        values, metadata = self._native.run(feeds, mapper.tensors, mapper.targets, timeout,
                                            trace_level, partition_graphs)
        self._read_step_metadata(metadata)
        return mapper.build(values)

    def _read_step_metadata(self, metadata):
        """Fills the step's RunMetadata from the step's serialized one, once per step."""
        if not self._step_metadata_read:
            self._step_metadata.ParseFromString(metadata or b"")
            self._step_metadata_read = True

    def should_stop(self):
        return self._native is None or self._native.should_stop()

    class StepContext:
        """What run_step_fn gives its step_fn: the raw `session` (run() without hooks), and
        run_with_hooks() (a MonitoredSession.run) and request_stop()."""

        def __init__(self, session, run_with_hooks_fn):
            self._session = session
            self._run_with_hooks_fn = run_with_hooks_fn

        @property
        def session(self):
            return self._session

        def run_with_hooks(self, *args, **kwargs):
            """Same as MonitoredSession.run, with the same arguments."""
            return self._run_with_hooks_fn(*args, **kwargs)

        def request_stop(self):
            """Ends the training loop: raises StopIteration out of step_fn and
            run_step_fn (a `with` block of the session swallows it)."""
            raise StopIteration("step_fn has requested the iterations to stop.")

    def run_step_fn(self, step_fn):
        """Calls step_fn(step_context) (a function of one argument named step_context, or a
        method taking it) and returns what it returns. StopIteration, raised by
        step_context.request_stop(), goes through to the caller (a `with` block of the
        session swallows it)."""
        arguments = _fn_args(step_fn)
        if arguments not in (("step_context",), ("self", "step_context")):
            raise ValueError("`step_fn` may either have one `step_context` argument, or `self` "
                             "and `step_context` arguments if it's an instance method. Got %s "
                             "instead." % (arguments,))
        if self._native is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        return step_fn(self.StepContext(_RawSession(self), self.run))

    @property
    def scaffold(self):
        return self._scaffold

    def close(self):
        self._close(run_end_hooks=True)

    def _close(self, run_end_hooks):
        if self._native is not None:
            native, self._native = self._native, None
            try:
                native.close(run_end_hooks)
            finally:
                if self._server is not None:
                    self._server.stop()
                    self._server = None

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close(run_end_hooks=exception_type is None)
        return exception_type is None


def _cadence(what, steps, secs, steps_default, secs_default):
    """TensorFlow's reading of a (steps, secs) pair of MonitoredTrainingSession: both unset gives
    the defaults, one set leaves the other unset; None or 0 turns it off. As (steps, secs) for
    the C++ session: 0 is off."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        steps, secs = steps_default, secs_default
    steps = None if steps is USE_DEFAULT else steps
    secs = None if secs is USE_DEFAULT else secs
    for name, value in (("steps", steps), ("secs", secs)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float))):
            raise TypeError("MonitoredTrainingSession: save_%s_%s must be a number or None, "
                            "got %r" % (what, name, value))
    steps = int(steps) if steps and steps > 0 else 0
    secs = float(secs) if secs and secs > 0 else 0.0
    if steps and secs:
        raise ValueError("MonitoredTrainingSession: give save_%s_steps or save_%s_secs, not "
                         "both (TensorFlow's SecondOrStepTimer: 'Cannot provide both "
                         "every_n_secs and every_n_steps')" % (what, what))
    return steps, secs


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """tf.train.MonitoredTrainingSession. The chief restores the newest checkpoint of
    checkpoint_dir and saves one every save_checkpoint_secs (600 when neither that nor
    save_checkpoint_steps is given) or save_checkpoint_steps, at the start and at the end; it
    writes the graph, global_step/sec and the summary op (the graph's SUMMARY_OP, else
    tf.summary.merge_all()) to summary_dir (default: checkpoint_dir) every save_summaries_steps
    (100 when neither that nor save_summaries_secs is given) or save_summaries_secs. None or 0
    turns either off. A non-chief waits up to max_wait_secs for the chief to make the model
    ready."""
    if not isinstance(master, str):
        raise TypeError("master must be a string, got %r" % (master,))
    if config is not None and not isinstance(config, ConfigProto):
        raise TypeError("config must be a tf.ConfigProto, got %r" % (config,))
    for name, value in (("checkpoint_dir", checkpoint_dir), ("summary_dir", summary_dir)):
        if value is not None and not isinstance(value, str):
            raise TypeError("MonitoredTrainingSession: %s must be a string or None, got %r"
                            % (name, value))
    checkpoints = _cadence("checkpoint", save_checkpoint_steps, save_checkpoint_secs, None, 600)
    summaries = _cadence("summaries", save_summaries_steps, save_summaries_secs, 100, None)
    return _MonitoredTrainingSession(master, is_chief, checkpoint_dir, hooks, chief_only_hooks,
                                     checkpoints, summary_dir or checkpoint_dir, summaries,
                                     config, max_wait_secs, scaffold)


def _fn_args(fn):
    """The names of fn's arguments as TensorFlow's function_utils.fn_args gives them: a
    bound method's without self, a callable object's __call__'s, a functools.partial's less
    those it binds."""
    import functools
    import inspect
    if isinstance(fn, functools.partial):
        args = _fn_args(fn.func)
        return tuple(a for a in args[len(fn.args):] if a not in (fn.keywords or {}))
    if not inspect.isfunction(fn) and not inspect.ismethod(fn) and callable(fn):
        fn = fn.__call__
    try:
        args = list(inspect.getfullargspec(fn).args)
    except TypeError:
        return None
    if inspect.ismethod(fn) and args and args[0] == "self":
        args.pop(0)
    return tuple(args)


class SessionCreator:
    """tf.train.SessionCreator: subclass it and define create_session() (a tf.Session, prepared
    as the program wants) to give MonitoredSession sessions of your own."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for %s" % type(self))


class ChiefSessionCreator(SessionCreator):
    """Makes the model ready as a chief: restores checkpoint_filename_with_path, or the newest
    checkpoint of checkpoint_dir, or else runs the scaffold's init_op and init_fn; then its
    local_init_op. create_session() alone gives a tf.Session so prepared
    (tf.train.SessionManager); MonitoredSession does the same and recovers."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        _check_creator_args(scaffold, master, config)
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._is_chief = True
        self._max_wait_secs = 7200

    def create_session(self):
        from .session_manager import SessionManager
        self._scaffold.finalize()
        return SessionManager(
            local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=get_default_graph()).prepare_session(
                self._master, saver=self._scaffold.saver,
                checkpoint_dir=self._checkpoint_dir,
                checkpoint_filename_with_path=self._checkpoint_filename_with_path,
                config=self._config, init_op=self._scaffold.init_op,
                init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Waits, up to max_wait_secs, until the chief has made the model ready, running the
    scaffold's local_init_op once ready_for_local_init_op is empty."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        _check_creator_args(scaffold, master, config)
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs
        self._is_chief = False
        self._checkpoint_dir = None
        self._checkpoint_filename_with_path = None

    def create_session(self):
        from .session_manager import SessionManager
        self._scaffold.finalize()
        return SessionManager(
            local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=get_default_graph()).wait_for_session(
                self._master, config=self._config, max_wait_secs=self._max_wait_secs)


def _check_creator_args(scaffold, master, config):
    if scaffold is not None and not isinstance(scaffold, Scaffold):
        raise TypeError("scaffold must be a tf.train.Scaffold, got %r" % (scaffold,))
    if not isinstance(master, str):
        raise TypeError("master must be a string, got %r" % (master,))
    if config is not None and not isinstance(config, ConfigProto):
        raise TypeError("config must be a tf.ConfigProto, got %r" % (config,))


def _creator_args(session_creator, hooks, recovers):
    """_MonitoredTrainingSession's arguments for a session made by session_creator, with no
    checkpoints or summaries saved."""
    if session_creator is None:
        session_creator = ChiefSessionCreator()
    if not isinstance(session_creator, (ChiefSessionCreator, WorkerSessionCreator)):
        raise TypeError("session_creator: expected a tf.train.SessionCreator (an object with "
                        "create_session()), got %r" % (session_creator,))
    c = session_creator
    return (c._master, c._is_chief, c._checkpoint_dir, hooks, None, (0, 0.0), None, (0, 0.0),
            c._config, c._max_wait_secs, c._scaffold, c._checkpoint_filename_with_path, recovers,
            False)


class MonitoredSession(_MonitoredTrainingSession):
    """tf.train.MonitoredSession: a session made by session_creator (ChiefSessionCreator()
    by default) that runs `hooks` around every step and recovers from a lost task (a new
    session, the model made ready again, the step run again). Unlike MonitoredTrainingSession
    it adds no hooks of its own: no checkpoints or summaries are saved."""

    _own_creator = False  # made with a SessionCreator of the program's own

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        if _is_own_creator(session_creator):
            from .creator_monitored_session import _CreatorSession
            self._own_creator = True
            self._graph = get_default_graph()
            self._scaffold = getattr(session_creator, "_scaffold", None)
            self._server = None
            self._native = None
            self._creator_session = _CreatorSession(session_creator, hooks,
                                                    stop_grace_period_secs)
            return
        super().__init__(*_creator_args(session_creator, hooks, recovers=True))

    # With a creator of the program's own, the Python session (creator_monitored_session.py)
    # runs; otherwise the native one.

    def _own_session(self):
        if self._creator_session is None:
            raise RuntimeError("Run called on a closed MonitoredSession.")
        return self._creator_session

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if not self._own_creator:
            return super().run(fetches, feed_dict, options, run_metadata)
        return self._own_session().run(fetches, feed_dict, options, run_metadata)

    def should_stop(self):
        if not self._own_creator:
            return super().should_stop()
        return self._creator_session is None or self._creator_session.should_stop()

    def run_step_fn(self, step_fn):
        if not self._own_creator:
            return super().run_step_fn(step_fn)
        arguments = _fn_args(step_fn)
        if arguments not in (("step_context",), ("self", "step_context")):
            raise ValueError("`step_fn` may either have one `step_context` argument, or `self` "
                             "and `step_context` arguments if it's an instance method. Got %s "
                             "instead." % (arguments,))
        return self._own_session().run_step_fn(step_fn,
                                               lambda raw: self.StepContext(raw, self.run))

    def _close(self, run_end_hooks):
        if not self._own_creator:
            return super()._close(run_end_hooks)
        session, self._creator_session = self._creator_session, None
        if session is not None:
            session.close(run_end_hooks)


def _is_own_creator(session_creator):
    """Whether session_creator is the program's own (anything with create_session()), not one
    of troupe's creators, which the native monitored session runs (a subclass of one that
    overrides create_session is the program's own)."""
    if session_creator is None or not callable(getattr(session_creator, "create_session", None)):
        return False
    for native in (ChiefSessionCreator, WorkerSessionCreator):
        if isinstance(session_creator, native):
            return type(session_creator).create_session is not native.create_session
    return True


class SingularMonitoredSession(_MonitoredTrainingSession):
    """tf.train.SingularMonitoredSession: a chief's MonitoredSession that does not recover
    (a lost task ends it with the error), with raw_session() for steps without hooks."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(*_creator_args(creator, hooks, recovers=False))

    def raw_session(self):
        """The session itself: run() without hooks (until this session is closed)."""
        return _RawSession(self)


class _RawSession:
    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def graph(self):
        return self._monitored.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        native = self._monitored._native
        if native is None:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = _FetchMapper(self.graph, fetches)
        timeout, trace_level, partition_graphs = _run_options(options)
        _check_run_metadata(run_metadata)
        values, metadata = native.run_raw(_feeds(self.graph, feed_dict), mapper.tensors,
                                          mapper.targets, timeout, trace_level,
                                          partition_graphs)
        if run_metadata is not None:
            run_metadata.ParseFromString(metadata or b"")
        return mapper.build(values)
