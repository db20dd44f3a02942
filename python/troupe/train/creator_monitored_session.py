"""A MonitoredSession over a SessionCreator of the program's own: TensorFlow 1.x's layers
(_HookedSession, _CoordinatedSession, _RecoverableSession) in Python, around whatever session
create_session() returns. The hooks run around every run(), the graph's queue runners are
started with a Coordinator, and a lost task (AbortedError, UnavailableError) makes the creator
create a new session, then the step (or run_step_fn's step_fn) runs again. troupe's own
creators (ChiefSessionCreator, WorkerSessionCreator, unless a subclass overrides
create_session) take the native path in monitored_session.py instead."""

from .. import errors
from .. import logging
from ..framework import get_default_graph
from ..session import RunMetadata, RunOptions
from .coordinator import Coordinator
from .hooks import SessionRunArgs, SessionRunContext, SessionRunValues
from .queue_runner import QUEUE_RUNNERS, start_queue_runners

# What a lost task or a restarted session looks like (TensorFlow's _PREEMPTION_ERRORS).
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)


class _CreatorSession:
    """The state of one MonitoredSession made by a SessionCreator of the program's own."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._graph = get_default_graph()
        self._creator = session_creator
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            if not (hasattr(hook, "before_run") and hasattr(hook, "after_run")):
                raise TypeError("hooks: expected SessionRunHook instances, got %r" % (hook,))
        self._grace = stop_grace_period_secs
        with self._graph.as_default():
            for hook in self._hooks:
                hook.begin()
        self._sess = None
        self._coord = None
        self._threads = []
        self._stop_requested = False  # by a hook, in this session
        self._create()

    def _create(self):
        """A new session from the creator; retried while the cluster is not reachable."""
        while True:
            try:
                self._sess = self._creator.create_session()
                break
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised while a session was being created. This may "
                             "be due to a preemption of a connected worker or parameter server. "
                             "A new session will be created. Error: %s", e)
        self._coord = Coordinator(clean_stop_exception_types=[])
        self._stop_requested = False
        self._threads = []
        if self._graph.get_collection(QUEUE_RUNNERS):
            self._threads = start_queue_runners(sess=self._sess, coord=self._coord)
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    def _drop(self):
        """Stops the queue runners and closes the session (TensorFlow's
        _CoordinatedSession.close): an error a queue runner reported is raised; the session's
        own close is forgiven a preemption error."""
        sess, coord, threads = self._sess, self._coord, self._threads
        self._sess, self._coord, self._threads = None, None, []
        try:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=self._grace, ignore_live_threads=True)
        finally:
            try:
                sess.close()
            except _PREEMPTION_ERRORS:
                pass

    def _recovering(self, attempt):
        """attempt() until it does not end in a preemption error, a new session each time."""
        while True:
            if self._sess is None:
                self._create()
            try:
                return attempt()
            except _PREEMPTION_ERRORS as e:
                logging.info("An error was raised. This may be due to a preemption in a "
                             "connected worker or parameter server. The current session will be "
                             "closed and a new session will be created. Error: %s", e)
                self._drop()

    def run(self, fetches, feed_dict, options, run_metadata):
        return self._recovering(lambda: self._hooked_run(fetches, feed_dict, options,
                                                         run_metadata))

    def run_step_fn(self, step_fn, make_context):
        """step_fn(make_context(raw session)), run again on a new session after a preemption
        error (TensorFlow's _RecoverableSession.run_step_fn)."""
        return self._recovering(lambda: step_fn(make_context(self._sess)))

    def _hooked_run(self, fetches, feed_dict, options, run_metadata):
        """TensorFlow's _HookedSession.run: the hooks' fetches beside the caller's, their feeds
        and options merged in."""
        if self._stop_requested:
            raise RuntimeError("Run called even after should_stop requested.")
        self._coord.raise_requested_exception()
        actual_fetches = {"caller": fetches}
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._sess)
        options = options if options is not None else RunOptions()
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(context)
            if request is None:
                continue
            if not isinstance(request, SessionRunArgs):
                raise TypeError("%s.before_run must return a SessionRunArgs or None, got %r"
                                % (type(hook).__name__, request))
            if request.fetches is not None:
                actual_fetches[hook] = request.fetches
            if request.feed_dict:
                if set(hook_feeds) & set(request.feed_dict):
                    raise RuntimeError("Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options is not None:
                options._merge(request.options)
        if hook_feeds:
            if feed_dict and set(hook_feeds) & set(feed_dict):
                raise RuntimeError("Same tensor is fed by a SessionRunHook and user.")
            feed_dict = dict(feed_dict or {})
            feed_dict.update(hook_feeds)
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(context, SessionRunValues(outputs.get(hook), options, run_metadata))
        self._stop_requested = self._stop_requested or context.stop_requested
        return outputs["caller"]

    def should_stop(self):
        return self._sess is None or self._stop_requested or self._coord.should_stop()

    def close(self, run_end_hooks):
        if self._sess is None:
            return
        try:
            if run_end_hooks:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._drop()
