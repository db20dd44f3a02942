"""tf.train.MonitoredTrainingSession: a session that initialises or restores the model (the
chief) or waits for it (the others), runs hooks around every step, saves checkpoints, and
recovers from a lost ps task by opening a new session and restoring the newest checkpoint
(apps/training/monitored_session.hpp). Use it in a `with` block."""

from .. import _troupe
from .. import errors
from ..framework import get_default_graph
from ..session import ConfigProto, _FetchMapper, _feeds, _local_server
from .hooks import SessionRunArgs, _HookAdapter
from .optimizer import _SyncReplicasHookSpec

USE_DEFAULT = object()


class _MonitoredTrainingSession:
    def __init__(self, master, is_chief, checkpoint_dir, hooks, chief_only_hooks, checkpoints,
                 summary_dir, summaries, config, max_wait_secs):
        self._graph = get_default_graph()
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
            get_or_create_global_step()
            summary_op = _summary_op(self._graph) if is_chief and summary_dir else None
        # The C++ session adds nodes (ready checks, saver) without the GIL: meanwhile only the
        # hooks' begin() may build; afterwards the graph is finalized, as TensorFlow's is.
        self._graph._preparing = True
        try:
            self._native = _troupe.MonitoredTrainingSession.create(
                self._graph._scope.root(), target, bool(is_chief), checkpoint_dir or "",
                checkpoints[0], checkpoints[1], summaries[0], native_config,
                int(max_wait_secs * 1000), python_hooks, native_hooks, summary_dir or "",
                summaries[1], summary_op._output if summary_op is not None else None)
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
        self._current_args = SessionRunArgs(fetches, feed_dict, options)
        values = self._native.run(feeds, mapper.tensors, mapper.targets)
        return mapper.build(values)

    def should_stop(self):
        return self._native is None or self._native.should_stop()

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


def _summary_op(graph):
    """As TensorFlow's Scaffold: the graph's SUMMARY_OP, else merge_all() of its summaries
    (recorded as SUMMARY_OP); None when it has none."""
    from ..framework import GraphKeys
    from ..summary import merge_all
    ops = graph.get_collection(GraphKeys.SUMMARY_OP)
    if ops:
        return ops[0]
    op = merge_all()
    if op is not None:
        graph.add_to_collection(GraphKeys.SUMMARY_OP, op)
    return op


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
    if scaffold is not None:
        raise ValueError("MonitoredTrainingSession: scaffold is not supported by troupe")
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
                                     config, max_wait_secs)
