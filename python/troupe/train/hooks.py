"""tf.train.SessionRunHook and the standard hooks: StopAtStepHook, CheckpointSaverHook (with
CheckpointSaverListener), LoggingTensorHook, StepCounterHook, NanTensorHook, SummarySaverHook,
GlobalStepWaiterHook, FeedFnHook, FinalOpsHook, ProfilerHook, and SecondOrStepTimer.

Hooks written in Python run around each step of a MonitoredTrainingSession as TensorFlow's do:
begin() before the session exists (add ops then), after_create_session(session, coord),
before_run(run_context) -> SessionRunArgs or None, after_run(run_context, run_values), and
end(session). SessionRunArgs may fetch Tensors and Operations (any structure) and feed values
(a tensor fed by the caller and a hook, or by two hooks, is InvalidArgumentError);
run_context.session and the sessions given to after_create_session and end work for the length
of that call.
"""

import collections
import logging
import os
import threading
import time

import numpy as np

from .. import _troupe
from ..framework import Operation, Tensor, get_default_graph
from ..session import _FetchMapper, _LentSession

logger = logging.getLogger("troupe")


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    pass


class SessionRunContext:
    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


class SessionRunHook:
    """Subclass and override any of these."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class _HookAdapter:
    """Presents a SessionRunHook to the extension (training_bindings.cpp)."""

    def __init__(self, hook, graph, monitored):
        self._hook = hook
        self._graph = graph
        self._monitored = monitored
        self._context = None
        self._mapper = None

    def _begin(self):
        self._graph._preparer = threading.get_ident()  # this thread may build (framework.py)
        with self._graph.as_default():  # the thread's own default graph may be another
            self._hook.begin()

    def _after_create_session(self, handle):
        self._hook.after_create_session(_LentSession(handle, self._graph), None)

    def _before_run(self, handle):
        """(fetched tensors, feeds, operations to run, (trace level, timeout in ms, partition
        graphs)) for the coming step; the hook's options are merged into the step's as
        TensorFlow merges them."""
        from ..session import RunOptions, _feeds
        self._context = SessionRunContext(self._monitored._current_args,
                                          _LentSession(handle, self._graph))
        args = self._hook.before_run(self._context)
        self._mapper = None
        if args is None:
            return [], [], [], (0, 0, False)
        if not isinstance(args, SessionRunArgs):
            raise TypeError("%s.before_run must return a SessionRunArgs or None, got %r"
                            % (type(self._hook).__name__, args))
        options = (0, 0, False)
        if args.options is not None:
            if not isinstance(args.options, RunOptions):
                raise TypeError("%s.before_run: SessionRunArgs.options must be a tf.RunOptions, "
                                "got %r" % (type(self._hook).__name__, args.options))
            self._monitored._step_options._merge(args.options)
            options = (args.options.trace_level, args.options.timeout_in_ms,
                       args.options.output_partition_graphs)
        feeds = _feeds(self._graph, args.feed_dict)
        if args.fetches is None:
            return [], feeds, [], options
        mapper = _FetchMapper(self._graph, args.fetches)
        self._mapper = mapper
        return mapper.tensors, feeds, list(mapper.targets), options

    def _after_run(self, values, handle, metadata):
        context = self._context
        context._session = _LentSession(handle, self._graph)
        results = self._mapper.build(values) if self._mapper is not None else None
        monitored = self._monitored
        monitored._read_step_metadata(metadata)
        self._hook.after_run(context, SessionRunValues(results, monitored._step_options,
                                                       monitored._step_metadata))
        return context.stop_requested

    def _end(self, handle):
        self._hook.end(_LentSession(handle, self._graph))


def _as_tensor(value, what):
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_as_graph_element"):
        return value._as_graph_element()
    if isinstance(value, str):
        return get_default_graph().get_tensor_by_name(value)
    raise TypeError("%s: expected a Tensor or tensor name, got %r" % (what, value))


class SecondOrStepTimer:
    """Triggers every every_secs seconds or every every_steps steps (exactly one of them), as
    TensorFlow's timer of the same name: always at the first step asked about."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and \
                time.time() >= self._last_triggered_time + self._every_secs:
            return True
        if self._every_steps is not None and \
                step >= self._last_triggered_step + self._every_steps:
            return True
        return False

    def update_last_triggered_step(self, step):
        """(seconds, steps) since the last trigger (None, None the first time)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time, self._last_triggered_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


def _global_step_or_raise(hook):
    from .training_util import get_global_step
    step = get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % hook)
    return step


class StopAtStepHook(SessionRunHook):
    """Requests stop once the global step reaches last_step, or num_steps after it started."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        for what, value in (("num_steps", num_steps), ("last_step", last_step)):
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError("StopAtStepHook: %s must be an int >= 0, got %r"
                                 % (what, value))
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        from .training_util import get_global_step
        self._global_step_tensor = get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            step = int(session.run(self._global_step_tensor))
            self._last_step = step + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            # The step that just ran advanced the global step to results + 1 (or more).
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Called around the saves of a CheckpointSaverHook: begin(), before_save(session,
    global_step_value), after_save(session, global_step_value) (returning True requests a
    stop), end(session, global_step_value). Subclass and override."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves the checkpoint "<checkpoint_dir>/model.ckpt-<step>" (with the scaffold's saver,
    sharded by default: one .npz per task holding variables) at the start, every save_steps
    or save_secs, and at the end (docs/checkpoints.md)."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs or save_steps must be set")
        if checkpoint_basename != "model.ckpt":
            raise ValueError("CheckpointSaverHook: troupe names checkpoints model.ckpt-<step>")
        if not isinstance(checkpoint_dir, str) or not checkpoint_dir:
            raise ValueError("CheckpointSaverHook: checkpoint_dir must be a directory name")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._dir = checkpoint_dir
        self._save_secs = save_secs
        self._save_steps = save_steps
        self._saver = saver
        self._scaffold = scaffold
        self._listeners = list(listeners or [])
        self._last_step = None
        self._last_time = None

    def begin(self):
        from .training_util import get_global_step
        self._global_step_tensor = get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        if self._saver is None and self._scaffold is None:
            from ..framework import GraphKeys
            from .saver import Saver
            savers = get_default_graph().get_collection(GraphKeys.SAVERS)
            self._saver = savers[0] if savers else Saver()
        for listener in self._listeners:
            listener.begin()

    def _save(self, session, step):
        """Saves; True when a listener asked to stop."""
        saver = self._saver if self._saver is not None else self._scaffold.saver
        for listener in self._listeners:
            listener.before_save(session, step)
        saver._save_handle(session, self._dir, step)
        self._last_step, self._last_time = step, time.time()
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop

    def after_create_session(self, session, coord):
        self._save(session, int(session.run(self._global_step_tensor)))

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        due = (self._save_steps is not None and step >= self._last_step + self._save_steps) or \
            (self._save_secs is not None and time.time() >= self._last_time + self._save_secs)
        if due and self._save(run_context.session, int(run_context.session.run(
                self._global_step_tensor))):
            run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step_tensor))
        if step != self._last_step:
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)


class LoggingTensorHook(SessionRunHook):
    """Logs the given tensors every_n_iter steps or every_n_secs seconds (and at_end):
    "loss = 0.42, accuracy = 0.9" through the "troupe" logger, or formatter(values)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = {tag: t for tag, t in zip(self._tag_order, tensors)}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._every_n_iter = every_n_iter
        self._every_n_secs = every_n_secs
        self._at_end = at_end
        self._formatter = formatter
        self._iter = 0
        self._last_time = None

    def begin(self):
        self._current = {tag: _as_tensor(t, "LoggingTensorHook tensor %r" % tag)
                         for tag, t in self._tensors.items()}

    def _due(self):
        if self._every_n_iter is not None:
            return self._iter % self._every_n_iter == 0
        if self._every_n_secs is not None:
            return self._last_time is None or time.time() >= self._last_time + self._every_n_secs
        return False

    def before_run(self, run_context):
        self._should_log = self._due()
        return SessionRunArgs(self._current) if self._should_log else None

    def _log(self, values):
        if self._formatter:
            logger.info(self._formatter(values))
        else:
            logger.info(", ".join("%s = %s" % (tag, np.array2string(np.asarray(values[tag])))
                                  for tag in self._tag_order))
        self._last_time = time.time()

    def after_run(self, run_context, run_values):
        if self._should_log:
            self._log(run_values.results)
        self._iter += 1

    def end(self, session):
        if self._at_end:
            self._log(session.run(self._current))


class NanTensorHook(SessionRunHook):
    """Fails with NanLossDuringTrainingError (or stops) when the loss is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss = loss_tensor
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail:
                raise NanLossDuringTrainingError
            logger.warning("Model diverged with loss = NaN.")
            run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class StepCounterHook(SessionRunHook):
    """Logs global_step/sec every every_n_steps steps or every_n_secs seconds, and writes it
    as a summary when given output_dir or summary_writer."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._writer = summary_writer

    def begin(self):
        if self._writer is None and self._output_dir:
            from ..summary import FileWriterCache
            self._writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_or_raise("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs is not None and secs > 0:
                rate = steps / secs
                logger.info("%s: %g", self._summary_tag, rate)
                if self._writer is not None:
                    from ..summary_pb import Summary
                    summary = Summary(value=[Summary.Value(tag=self._summary_tag,
                                                           simple_value=rate)])
                    self._writer.add_summary(summary, step)


class SummarySaverHook(SessionRunHook):
    """Runs summary_op (or the scaffold's) every save_steps steps or save_secs seconds and
    writes it, with the global step, to output_dir (or summary_writer)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._scaffold = scaffold
        self._output_dir = output_dir
        self._writer = summary_writer
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._writer is None and self._output_dir:
            from ..summary import FileWriterCache
            self._writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_or_raise("SummarySaver")
        self._next_step = None

    def _ops(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return []
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context):
        self._request = self._next_step is None or \
            self._timer.should_trigger_for_step(self._next_step)
        fetches = {"global_step": self._global_step_tensor}
        if self._request:
            fetches["summary"] = self._ops()
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._writer is None:
            return
        step = int(run_values.results["global_step"])
        if self._next_step is None:
            from ..summary_pb import SessionLog
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", []):
                self._writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._writer is not None:
            self._writer.flush()


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first step until the global step reaches wait_until_step (a worker that
    should start once the model has trained a little, as TensorFlow's)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _global_step_or_raise("GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started or self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        last_logged = None
        while True:
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if last_logged != step:
                logger.info("Waiting for global step %d before starting training; now %d.",
                            self._wait_until_step, step)
                last_logged = step
            time.sleep(0.5)


class FeedFnHook(SessionRunHook):
    """Feeds feed_fn()'s dict to every step."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Fetches final_ops (Tensors) when the session ends; final_ops_values holds them."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._feed = final_ops_feed_dict
        self.final_ops_values = None

    def end(self, session):
        self.final_ops_values = session.run(self._final_ops, feed_dict=self._feed)


class ProfilerHook(SessionRunHook):
    """Traces a step every save_steps global steps or every save_secs seconds (exactly one;
    never the first step) and writes it as a Chrome trace, `output_dir/timeline-<step>.json`
    (troupe.python.client.timeline), and as the run metadata "step_<step>" of the event file
    in output_dir, as TensorFlow's ProfilerHook. Needs a global step."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        try:
            output_dir = os.fspath(output_dir)
        except TypeError:
            raise TypeError("ProfilerHook: output_dir must be a path, got %r"
                            % (output_dir,)) from None
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        from ..summary import FileWriterCache
        self._file_writer = FileWriterCache.get(output_dir or ".")
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step_or_raise("ProfilerHook")

    def before_run(self, run_context):
        from ..config import RunOptions
        self._request_summary = (self._next_step is not None and
                                 self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary \
            else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step),
                       run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, "step_%d" % global_step)
        self._next_step = global_step + 1

    def _save(self, step, save_path, step_stats):
        from ..python.client import timeline
        logger.info("Saving timeline for %d into '%s'.", step, save_path)
        trace = timeline.Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        with open(save_path, "w") as f:
            f.write(trace)
