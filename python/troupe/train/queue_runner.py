"""tf.train.QueueRunner, add_queue_runner and start_queue_runners: threads that keep a queue
filled, as TensorFlow 1.x's input pipelines start them.

A QueueRunner holds enqueue ops for one queue; create_threads(sess, coord) starts one thread per
enqueue op, each running its op until the queue is closed (OutOfRangeError or CancelledError
from the op: the end of the input, a clean stop) or the coordinator stops. When the last
enqueue thread ends the runner closes the queue, so its consumers get OutOfRangeError once it
is empty; with a coordinator, one more thread cancels the queue's pending enqueues when a stop
is requested. Other errors are reported to the coordinator (and kept in exceptions_raised).
"""

import itertools
import threading
import weakref

from .. import errors
from .. import logging
from ..framework import get_default_graph

QUEUE_RUNNERS = "queue_runners"

# Step tags of the runners' steps: negative, so they never meet the module's own (positive).
_tags = itertools.count(-1, -1)
_tags_lock = threading.Lock()


def _new_tag():
    with _tags_lock:
        return next(_tags)


class QueueRunner:
    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise ValueError("QueueRunner: queue_runner_def is not supported by troupe")
        if queue is None:
            raise ValueError("QueueRunner: a queue is needed")
        if not enqueue_ops:
            raise ValueError("QueueRunner: enqueue_ops must be a non-empty list")
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError, errors.CancelledError)
        elif not isinstance(queue_closed_exception_types, tuple) or not all(
                isinstance(t, type) and issubclass(t, errors.OpError)
                for t in queue_closed_exception_types):
            raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "
                            "tf.error types, but saw: %s" % (queue_closed_exception_types,))
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = queue_closed_exception_types
        self._lock = threading.Lock()
        # Per session: how many enqueue threads still run.
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """The exceptions the threads raised that were not a closed queue."""
        return self._exceptions_raised

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None, tag=0):
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    if tag and hasattr(sess, "_run_tagged"):
                        sess._run_tagged(enqueue_op, tag)
                    else:
                        sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    # The queue is closed (the end of the input): close it for the others too
                    # once the last enqueue thread ends.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001
                                logging.info("Ignored exception: %s", e)
                    return
        except Exception as e:  # noqa: BLE001
            if coord is not None:
                coord.request_stop(e)
            else:
                logging.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord, tags):
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001
            logging.info("Ignored exception: %s", e)
        # A step blocked elsewhere than on this queue (the chief's update waiting for
        # gradients) does not see the close: cancel the runner's steps.
        if hasattr(sess, "_cancel_tagged"):
            for tag in tags:
                try:
                    sess._cancel_tagged(tag)
                except Exception as e:  # noqa: BLE001
                    logging.info("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """One thread per enqueue op for `sess` (and, with `coord`, one that cancels the
        queue's pending enqueues at a stop). None are made while this runner's threads for
        `sess` still run."""
        with self._lock:
            try:
                if self._runs_per_session[sess] > 0:
                    return []
            except KeyError:
                pass
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        tags = [_new_tag() for _ in self._enqueue_ops]
        threads = [threading.Thread(target=self._run, args=(sess, op, coord, tag))
                   for op, tag in zip(self._enqueue_ops, tags)]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord, tags)))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def add_queue_runner(qr, collection=QUEUE_RUNNERS):
    """Adds `qr` to the graph's collection `collection` (start_queue_runners starts them)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in the graph's `collection` for `sess` (the
    default session if None); returns them."""
    from ..session import get_default_session
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not hasattr(sess, "run"):
        raise TypeError("sess must be a `tf.Session` object. Given class: %s" % type(sess))
    graph = sess.graph
    threads = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
