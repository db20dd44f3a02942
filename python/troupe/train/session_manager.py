"""tf.train.SessionManager: makes a Session whose model is ready, as TensorFlow 1.x's does.

The chief prepares the model (prepare_session: restore the newest checkpoint of
checkpoint_dir, else run init_op and init_fn), the others wait until it is ready
(wait_for_session, checking every recovery_wait_secs). "Ready" is what ready_op says: a 1-D
string tensor naming what is not initialized (tf.report_uninitialized_variables()), empty when
the model is ready; None means no check. local_init_op runs in every new session once
ready_for_local_init_op is empty.
"""

import time

import numpy as np

from .. import errors
from .. import logging
from ..framework import get_default_graph
from ..session import Session
from .saver import get_checkpoint_state


class SessionManager:
    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             "local_init_op , ready_for_local_init_op [%s]"
                             % ready_for_local_init_op)
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """A new Session, and whether a checkpoint was restored into it."""
        self._target = master
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        state = get_checkpoint_state(checkpoint_dir)
        while state is None or not state.model_checkpoint_path:
            if not wait_for_checkpoint or waited >= max_wait_secs:
                return sess, False
            logging.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            state = get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, state.model_checkpoint_path)
        saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A Session with the model restored from a checkpoint or initialized; RuntimeError if
        neither makes it ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        local_ok, msg = self._try_run_local_init_op(sess)
        if not local_ok:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               "Init op: %s, init fn: %s, error: %s"
                               % ("None" if init_op is None else init_op.name, init_fn, msg))
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: %s, init "
                               "fn: %s, local_init_op: %s, error: %s"
                               % (None if init_op is None else init_op.name, init_fn,
                                  self._local_init_op, msg))
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """A Session, and whether it was restored from a checkpoint and is ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        local_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        if not local_ok:
            logging.info("Restoring model from %s did not make model ready for local init: %s",
                         checkpoint_dir, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logging.info("Restoring model from %s did not make model ready: %s",
                         checkpoint_dir, msg)
            return sess, False
        logging.info("Restored model from %s", checkpoint_dir)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A Session once another task (the chief) has made the model ready; after
        max_wait_secs, DeadlineExceededError."""
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready, not_ready_local = None, None
            local_ok, not_ready_local = self._try_run_local_init_op(sess)
            if local_ok:
                ready, not_ready = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs." % max_wait_secs)
            logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, "
                         "ready: %s", not_ready_local, not_ready)
            time.sleep(self._recovery_wait_secs)

    @staticmethod
    def _safe_close(sess):
        try:
            sess.close()
        except Exception:  # noqa: BLE001  (as TensorFlow: a failed close does not matter here)
            pass

    def _ready(self, op, sess, msg):
        """(True, None) when `op` says ready, else (False, why)."""
        if op is None:
            return True, None
        try:
            value = sess.run(op)
        except errors.FailedPreconditionError as e:
            if "uninitialized" not in str(e):
                logging.warning("%s : error [%s]", msg, str(e))
                raise
            return False, str(e)
        value = np.asarray(value) if value is not None else None
        if value is None or value.dtype == np.int32 or value.size == 0:
            return True, None
        names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                          for v in value.reshape(-1))
        return False, "Variables not initialized: " + names

    def _model_ready(self, sess):
        return self._ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return self._ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        return True, None
