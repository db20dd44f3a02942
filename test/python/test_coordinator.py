"""tf.train.Coordinator and LooperThread: stopping threads together, reporting and re-raising
their exceptions, the grace period, clean-stop exceptions (the cases of TensorFlow 1.x's
coordinator_test, re-expressed)."""

import sys
import threading
import time

import troupe as tf


def stop_at(coord, event, wait_for_stop=False):
    event.wait()
    if wait_for_stop:
        coord.wait_for_stop()
    coord.request_stop()


def raise_in(coord, n_secs, ex, report):
    try:
        time.sleep(n_secs)
        raise ex
    except RuntimeError as e:
        if report:
            coord.request_stop(e)
        else:
            coord.request_stop(sys.exc_info())


def sleep_until_stopped(coord):
    while not coord.should_stop():
        time.sleep(0.001)


class CoordinatorTest(tf.test.TestCase):

    def test_stop_api(self):
        coord = tf.train.Coordinator()
        self.assertFalse(coord.should_stop())
        self.assertFalse(coord.wait_for_stop(0.01))
        coord.request_stop()
        self.assertTrue(coord.should_stop())
        self.assertTrue(coord.wait_for_stop(0.01))

    def test_stop_async(self):
        coord = tf.train.Coordinator()
        self.assertFalse(coord.should_stop())
        self.assertFalse(coord.wait_for_stop(0.1))
        threading.Thread(target=lambda: (time.sleep(0.05), coord.request_stop())).start()
        self.assertFalse(coord.should_stop())
        self.assertTrue(coord.wait_for_stop(10.0))
        self.assertTrue(coord.should_stop())

    def test_join_when_all_threads_stop(self):
        coord = tf.train.Coordinator()
        events = [threading.Event() for _ in range(3)]
        threads = [threading.Thread(target=stop_at, args=(coord, e)) for e in events]
        for t in threads:
            t.start()
        for e in events:
            e.set()
        coord.join(threads)
        self.assertTrue(coord.joined)

    def test_join_and_register_threads(self):
        coord = tf.train.Coordinator()
        events = [threading.Event() for _ in range(3)]
        threads = [threading.Thread(target=stop_at, args=(coord, e)) for e in events]
        coord.register_thread(threads[0])
        coord.register_thread(threads[1])  # and one passed to join only
        for t in threads:
            t.start()
        for e in events:
            e.set()
        coord.join([threads[2]])
        self.assertFalse(any(t.is_alive() for t in threads))

    def test_join_returns_after_the_grace_period_with_ignore_live_threads(self):
        coord = tf.train.Coordinator()
        never = threading.Event()
        t = threading.Thread(target=never.wait, daemon=True)
        t.start()
        coord.request_stop()
        start = time.monotonic()
        coord.join([t], stop_grace_period_secs=0.05, ignore_live_threads=True)
        self.assertLess(time.monotonic() - start, 5)
        never.set()

    def test_a_thread_still_running_after_the_grace_period_is_named(self):
        coord = tf.train.Coordinator()
        never = threading.Event()
        t = threading.Thread(target=never.wait, name="laggard", daemon=True)
        t.start()
        coord.request_stop()
        with self.assertRaisesRegex(RuntimeError, "threads still running: laggard"):
            coord.join([t], stop_grace_period_secs=0.05)
        never.set()

    def test_an_exception_reported_is_raised_by_join(self):
        for report_exception in (True, False):
            coord = tf.train.Coordinator()
            threads = [threading.Thread(target=raise_in,
                                        args=(coord, 0.01, RuntimeError("First"),
                                              report_exception)),
                       threading.Thread(target=raise_in,
                                        args=(coord, 0.05, RuntimeError("Second"),
                                              report_exception))]
            for t in threads:
                t.start()
            with self.assertRaisesRegex(RuntimeError, "First"):
                coord.join(threads)

    def test_an_exception_after_join_is_raised_at_once(self):
        coord = tf.train.Coordinator()
        coord.request_stop()
        coord.join([])
        try:
            raise RuntimeError("late")
        except RuntimeError as e:
            with self.assertRaisesRegex(RuntimeError, "late"):
                coord.request_stop(e)

    def test_clean_stop_exceptions_are_not_errors(self):
        coord = tf.train.Coordinator()
        try:
            raise tf.errors.OutOfRangeError(None, None, "end of input")
        except tf.errors.OutOfRangeError as e:
            coord.request_stop(e)
        self.assertTrue(coord.should_stop())
        coord.join([])  # nothing raised

        coord = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
        try:
            raise ValueError("clean")
        except ValueError as e:
            coord.request_stop(e)
        coord.join([])

    def test_stop_on_exception_reports_and_clear_stop_forgets(self):
        coord = tf.train.Coordinator()
        with coord.stop_on_exception():
            raise RuntimeError("inside")
        self.assertTrue(coord.should_stop())
        with self.assertRaisesRegex(RuntimeError, "inside"):
            coord.raise_requested_exception()
        coord.clear_stop()
        self.assertFalse(coord.should_stop())
        coord.raise_requested_exception()  # forgotten
        coord.request_stop()
        coord.join([])

    def test_request_stop_with_an_exception_not_raised(self):
        coord = tf.train.Coordinator()
        coord.request_stop(RuntimeError("never raised"))
        with self.assertRaisesRegex(RuntimeError, "never raised"):
            coord.join([])


class LooperThreadTest(tf.test.TestCase):

    def test_target_runs_until_stop(self):
        coord = tf.train.Coordinator()
        calls = []
        looper = tf.train.LooperThread.loop(coord, 0.01, target=calls.append, args=(1,))
        time.sleep(0.1)
        coord.request_stop()
        coord.join([looper])
        self.assertGreater(len(calls), 2)

    def test_tight_loop_and_exceptions_reach_the_coordinator(self):
        coord = tf.train.Coordinator()
        count = [0]

        def work():
            count[0] += 1
            if count[0] == 100:
                raise RuntimeError("looper failed")
        looper = coord.loop(None, work)
        with self.assertRaisesRegex(RuntimeError, "looper failed"):
            coord.join([looper])
        self.assertEqual(count[0], 100)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(ValueError, "Coordinator"):
            tf.train.LooperThread(None, 1)
        with self.assertRaisesRegex(ValueError, "target"):
            tf.train.LooperThread(tf.train.Coordinator(), 1, args=(1,))
