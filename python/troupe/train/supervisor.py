"""tf.train.Supervisor: TensorFlow 1.x's wrapper of a training program's session, as its
distributed trainers (mnist_replica and its kind) use it.

    sv = tf.train.Supervisor(is_chief=(task_index == 0), logdir=train_dir, init_op=init_op,
                             global_step=global_step, recovery_wait_secs=1)
    sess = sv.prepare_or_wait_for_session(server.target)      # or: with sv.managed_session()
    while not sv.should_stop(): sess.run(train_op)
    sv.stop()

The chief restores the newest checkpoint of `logdir` or runs init_op (and init_fn), writes the
graph to TensorBoard and starts the standard services: every save_summaries_secs the
summary_op (merge_all() by default) and global_step/sec are written, every save_model_secs a
checkpoint "<logdir>/<checkpoint_basename>-<step>" (with a CHECKPOINT session log). Other
tasks wait until ready_op (report_uninitialized_variables() by default) says the model is
ready. Every task starts the graph's queue runners. Defaults come from the graph's
collections first (INIT_OP, READY_OP, SAVERS, SUMMARY_OP, GLOBAL_STEP, ...), as TensorFlow's
do. Creating a Supervisor finalizes the graph.
"""

import contextlib
import os
import time

from .. import logging
from ..framework import GraphKeys, get_default_graph
from ..ops import group
from ..summary import FileWriter, merge_all
from ..summary_pb import SessionLog, Summary
from ..variables import (global_variables, global_variables_initializer,
                         local_variables_initializer, report_uninitialized_variables)
from . import training_util
from .coordinator import Coordinator, LooperThread
from .saver import Saver
from .session_manager import SessionManager


class Supervisor:
    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        graph = graph if graph is not None else get_default_graph()
        with graph.as_default():
            self._init_ready_op(graph, ready_op, ready_for_local_init_op)
            self._init_init_op(graph, init_op, init_feed_dict)
            self._init_local_init_op(graph, local_init_op)
            self._init_saver(graph, saver)
            self._init_summary_op(graph, summary_op)
            self._init_global_step(graph, global_step)
        self._graph = graph
        self._is_chief = bool(is_chief)
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        self._owns_summary_writer = False
        self._graph_added_to_summary = False
        if self._is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if logdir:
                    self._summary_writer = FileWriter(logdir)
                    self._owns_summary_writer = True
            else:
                self._summary_writer = summary_writer
        if session_manager is None:
            session_manager = SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
                recovery_wait_secs=recovery_wait_secs,
                local_init_run_options=local_init_run_options)
        self._session_manager = session_manager
        self._verify_setup()
        graph.finalize()

    # --- defaults, from the graph's collections first ---
    @staticmethod
    def _first_in_collection(graph, key):
        items = graph.get_collection(key)
        if len(items) > 1:
            logging.info("Found %d %s operations. Returning the first one.", len(items), key)
        return items[0] if items else None

    def _init_ready_op(self, graph, ready_op, ready_for_local_init_op):
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = self._first_in_collection(graph, GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = report_uninitialized_variables()
                graph.add_to_collection(GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = self._first_in_collection(
                graph, GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, graph, init_op, init_feed_dict):
        if init_op is Supervisor.USE_DEFAULT:
            init_op = self._first_in_collection(graph, GraphKeys.INIT_OP)
            if init_op is None:
                init_op = global_variables_initializer()
                graph.add_to_collection(GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, graph, local_init_op):
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = self._first_in_collection(graph, GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                local_init_op = group(local_variables_initializer())
                graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, graph, saver):
        if saver is Supervisor.USE_DEFAULT:
            saver = self._first_in_collection(graph, GraphKeys.SAVERS)
            if saver is None and global_variables():
                saver = Saver()
                graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, graph, summary_op):
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = self._first_in_collection(graph, GraphKeys.SUMMARY_OP)
            if summary_op is None:
                summary_op = merge_all()
                if summary_op is not None:
                    graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, graph, global_step):
        if global_step is Supervisor.USE_DEFAULT:
            global_step = self._first_in_collection(graph, GraphKeys.GLOBAL_STEP)
            if global_step is None:
                try:
                    step = graph.get_tensor_by_name("global_step:0")
                    if step.dtype.name in ("int32", "int64"):
                        global_step = step
                    else:
                        logging.warning("Found 'global_step' is not an int type: %s",
                                        step.dtype.name)
                except (KeyError, ValueError):
                    global_step = None
                if global_step is not None:
                    graph.add_to_collection(GraphKeys.GLOBAL_STEP, global_step)
        self._global_step = global_step

    def _verify_setup(self):
        # Replicas share variables only if every variable is placed (on a ps task, usually).
        if not self._is_chief:
            for op in self._graph.get_operations():
                if op.type == "Variable" and not op.device:
                    raise ValueError("When using replicas, all Variables must have their "
                                     "device set: %s" % op.name)

    # --- properties ---
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # --- sessions ---
    def _write_graph(self):
        if self._logdir:
            from .training_util import write_graph
            write_graph(self._graph, self._logdir, "graph.pbtxt")
        if self._summary_writer is not None and not self._graph_added_to_summary:
            self._summary_writer.add_graph(self._graph)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the summary, step-counter and checkpoint threads of the chief; returns
        them (the coordinator joins them at stop())."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because "
                               "only chief supervisors can write events.")
        if not self._logdir:
            logging.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer is not None:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads = []
        if self._save_summaries_secs and self._summary_writer is not None:
            if self._summary_op is not None:
                threads.append(_SummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(_StepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs:
            threads.append(_CheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """The chief: a Session with the model restored or initialized (and its services
        started); the others: a Session once the model is ready."""
        self._coord.clear_stop()
        if self._summary_writer is not None:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
                config=config, init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logging.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            logging.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services and queue runners (joined within stop_grace_secs) and closes the
        summary writer; re-raises an exception a thread reported. Does not close the
        session."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        return self._coord.should_stop()

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes `summary` (a tf.Summary or its bytes) at `global_step` (the current one by
        default)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = training_util.global_step(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A Session for a `with` block: prepared (or waited for) on entry; on exit the
        services stop, the session closes, and an exception from the block or a service is
        raised again (OutOfRangeError, the end of the input, is a clean stop)."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001  (reported to the coordinator, re-raised by stop)
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001
                        pass


class _SummaryThread(LooperThread):
    """Writes the summary op's value every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer is not None:
            logging.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class _StepCounterThread(LooperThread):
    """Writes "<global step's name>/sec" every save_summaries_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._tag = "%s/sec" % sv.global_step.op.name
        self._last_time = 0.0
        self._last_step = 0

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._sv.global_step)

    def run_loop(self):
        step = training_util.global_step(self._sess, self._sv.global_step)
        now = time.time()
        elapsed = now - self._last_time
        rate = (step - self._last_step) / elapsed if elapsed > 0 else float("inf")
        self._last_time, self._last_step = now, step
        summary = Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)])
        if self._sv.summary_writer is not None:
            self._sv.summary_writer.add_summary(summary, step)
        logging.info("%s: %g", self._tag, rate)


class _CheckpointThread(LooperThread):
    """Saves a checkpoint every save_model_secs."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        logging.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer is not None and self._sv.global_step is not None:
            step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path),
                step)
