"""tf.train.Coordinator and tf.train.LooperThread: threads that stop together.

Coordinator, as TensorFlow 1.x's: any thread calls request_stop(), with an exception if it
failed; the others see should_stop() and end; join(threads) waits for them, gives them
stop_grace_period_secs once a stop was requested, and re-raises the first reported exception
(or RuntimeError naming the threads still running). OutOfRangeError (the end of an input
queue) is a clean stop, not an error, unless clean_stop_exception_types says otherwise.

LooperThread runs a function every `timer_interval_secs` (or as fast as it can) until the
coordinator stops; an exception in it is reported to the coordinator.
"""

import contextlib
import sys
import threading
import time

from .. import errors
from .. import logging


class Coordinator:
    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None  # (type, value, traceback) of the first error reported
        self._joined = False
        self._registered_threads = set()

    def _is_clean_stop(self, ex):
        value = ex[1] if isinstance(ex, tuple) else ex
        return isinstance(value, self._clean_stop_exception_types)

    def request_stop(self, ex=None):
        """Asks every thread to stop. `ex`, an exception being handled or a sys.exc_info()
        tuple, is re-raised by join() if it is the first one reported."""
        with self._lock:
            if ex is not None and self._is_clean_stop(ex):
                ex = None
            if self._joined and ex is not None:
                # Nobody will join again to see it: raise it here.
                raise ex[1] if isinstance(ex, tuple) else ex
            if self._stop_event.is_set():
                return
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    info = ex
                else:
                    info = sys.exc_info()
                    if info[1] is not ex:
                        # Not raised: make it one, with its own traceback.
                        try:
                            raise ex
                        except BaseException:
                            info = sys.exc_info()
                if len(info) != 3 or info[0] is None or info[1] is None:
                    try:
                        raise ValueError("ex must be a tuple or sys.exc_info must return the "
                                         "current exception: %s" % (info,))
                    except ValueError:
                        info = sys.exc_info()
                logging.info("Error reported to Coordinator: %s", info[1])
                self._exc_info_to_raise = info
            self._stop_event.set()

    def clear_stop(self):
        """Makes should_stop() False again and forgets the reported exception."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self):
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Reports an exception raised in the block to request_stop() (and swallows it)."""
        try:
            yield
        except:  # noqa: E722  (as TensorFlow: any exception, KeyboardInterrupt included)
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits up to `timeout` seconds (None: for ever) for a stop; whether there was one."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits until every thread of `threads` and every registered one has ended, or a stop
        was requested and `stop_grace_period_secs` have passed since; then re-raises the
        first reported exception, or raises RuntimeError naming the threads still running
        (unless ignore_live_threads)."""
        with self._lock:
            joining = set(self._registered_threads)
            if threads is not None:
                joining |= set(threads)
            joining = list(joining)
        while any(t.is_alive() for t in joining) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        pause = 0.001
        while any(t.is_alive() for t in joining) and time.monotonic() < deadline:
            time.sleep(min(pause, max(deadline - time.monotonic(), 0.001)))
            pause = min(pause * 2, 0.5)
        stragglers = [t.name for t in joining if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]
            if stragglers:
                message = "Coordinator stopped with threads still running: %s" % " ".join(
                    stragglers)
                if not ignore_live_threads:
                    raise RuntimeError(message)
                logging.info(message)

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception reported to request_stop(), if any."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling target(*args, **kwargs) every interval."""
        looper = LooperThread(self, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper


class LooperThread(threading.Thread):
    """Calls `target` (or the subclass's run_loop) every `timer_interval_secs` seconds — or in
    a tight loop when that is None — until `coord` stops. Registered with the coordinator;
    an exception is reported to it."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if target is not None:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_at = time.monotonic()
                while not self._coord.wait_for_stop(max(next_at - time.monotonic(), 0)):
                    next_at += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop."""

    def stop_loop(self):
        """Called once after the loop."""

    def run_loop(self):
        if self._target is not None:
            self._target(*self._args, **self._kwargs)
        else:
            raise NotImplementedError("LooperThread.run_loop")
