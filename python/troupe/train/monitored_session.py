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
    def __init__(self, master, is_chief, checkpoint_dir, hooks, chief_only_hooks,
                 save_checkpoint_secs, save_checkpoint_steps, save_summaries_steps, config,
                 max_wait_secs):
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
        steps = 0 if save_checkpoint_steps is None else int(save_checkpoint_steps)
        secs = 600.0 if save_checkpoint_secs is USE_DEFAULT else \
            (0.0 if save_checkpoint_secs is None else float(save_checkpoint_secs))
        if checkpoint_dir and steps == 0 and secs == 0.0:
            steps = 1 << 62  # neither: only the saves at the start and the end
        # The C++ session adds nodes (ready checks, saver) without the GIL: meanwhile only the
        # hooks' begin() may build; afterwards the graph is finalized, as TensorFlow's is.
        self._graph._preparing = True
        try:
            self._native = _troupe.MonitoredTrainingSession.create(
                self._graph._scope.root(), target, bool(is_chief), checkpoint_dir or "", steps,
                secs, int(save_summaries_steps or 0), native_config, int(max_wait_secs * 1000),
                python_hooks, native_hooks, [])
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


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None,  # noqa: N802
                             hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """tf.train.MonitoredTrainingSession. Checkpoints go to checkpoint_dir every
    save_checkpoint_secs (600) or save_checkpoint_steps, and at the start and end; summaries
    (global_step/sec) every save_summaries_steps (100). A non-chief waits up to max_wait_secs
    for the chief to make the model ready."""
    if scaffold is not None:
        raise ValueError("MonitoredTrainingSession: scaffold is not supported by troupe")
    if summary_dir is not None and summary_dir != checkpoint_dir:
        raise ValueError("MonitoredTrainingSession: troupe writes summaries to checkpoint_dir")
    if not isinstance(master, str):
        raise TypeError("master must be a string, got %r" % (master,))
    if config is not None and not isinstance(config, ConfigProto):
        raise TypeError("config must be a tf.ConfigProto, got %r" % (config,))
    if save_checkpoint_steps is not USE_DEFAULT and save_checkpoint_steps is not None and \
            save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    if save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    summaries = 100 if save_summaries_steps is USE_DEFAULT else save_summaries_steps
    if save_summaries_secs not in (USE_DEFAULT, None):
        raise ValueError("MonitoredTrainingSession: troupe saves summaries by steps "
                         "(save_summaries_steps)")
    return _MonitoredTrainingSession(master, is_chief, checkpoint_dir, hooks, chief_only_hooks,
                                     save_checkpoint_secs, save_checkpoint_steps, summaries,
                                     config, max_wait_secs)
