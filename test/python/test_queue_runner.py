"""tf.train.QueueRunner, add_queue_runner and start_queue_runners: enqueue threads that end
cleanly at the end of the input, close the queue behind them, report other errors to the
coordinator, and stop when it does (the cases of TensorFlow 1.x's queue_runner_test,
re-expressed)."""

import time

import pytest

import troupe as tf

# A thread's error is raised in the thread too (as TensorFlow's runners do): pytest reports it.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


class QueueRunnerTest(tf.test.TestCase):

    def test_basic(self):
        with self.test_session() as sess:
            var = tf.Variable(tf.constant(0, dtype=tf.int64))
            count_up_to = var.count_up_to(3)
            queue = tf.FIFOQueue(10, tf.float32)
            tf.global_variables_initializer().run()
            qr = tf.train.QueueRunner(queue, [count_up_to])
            threads = qr.create_threads(sess)
            self.assertEqual(1, len(threads))  # no coordinator: no closing thread
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(0, len(qr.exceptions_raised))
            self.assertEqual(3, self.evaluate(var))

    def test_two_ops(self):
        with self.test_session() as sess:
            var0 = tf.Variable(tf.constant(0, dtype=tf.int64))
            var1 = tf.Variable(tf.constant(0, dtype=tf.int64))
            queue = tf.FIFOQueue(10, tf.float32)
            qr = tf.train.QueueRunner(queue, [var0.count_up_to(3), var1.count_up_to(30)])
            threads = qr.create_threads(sess)
            tf.global_variables_initializer().run()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(0, len(qr.exceptions_raised))
            self.assertEqual(3, var0.eval())
            self.assertEqual(30, var1.eval())

    def test_exceptions_are_captured(self):
        with self.test_session() as sess:
            queue = tf.FIFOQueue(10, tf.float32)
            qr = tf.train.QueueRunner(queue, ["i fail", "so fail"])
            threads = qr.create_threads(sess)
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            exceptions = qr.exceptions_raised
            self.assertEqual(2, len(exceptions))
            for e in exceptions:
                self.assertIn("Operation not in the graph", str(e))

    def test_real_dequeue_enqueue_closes_the_queue_behind_it(self):
        with self.test_session() as sess:
            q0 = tf.FIFOQueue(3, tf.float32)
            enqueue0 = q0.enqueue((10.0,))
            close0 = q0.close()
            q1 = tf.FIFOQueue(30, tf.float32)
            enqueue1 = q1.enqueue((q0.dequeue(),))
            dequeue1 = q1.dequeue()
            qr = tf.train.QueueRunner(q1, [enqueue1])
            threads = qr.create_threads(sess, start=True)
            enqueue0.run()
            enqueue0.run()
            close0.run()
            for t in threads:
                t.join()
            self.assertEqual(0, len(qr.exceptions_raised))
            self.assertEqual(10.0, dequeue1.eval())
            self.assertEqual(10.0, dequeue1.eval())
            with self.assertRaisesRegex(tf.errors.OutOfRangeError, "is closed"):
                dequeue1.eval()

    def test_respects_a_stopped_coordinator(self):
        with self.test_session() as sess:
            var = tf.Variable(tf.constant(0, dtype=tf.int64))
            count_up_to = var.count_up_to(3)
            queue = tf.FIFOQueue(10, tf.float32)
            tf.global_variables_initializer().run()
            qr = tf.train.QueueRunner(queue, [count_up_to])
            coord = tf.train.Coordinator()
            coord.request_stop()
            threads = qr.create_threads(sess, coord, start=True)
            coord.join(threads)
            self.assertEqual(0, len(qr.exceptions_raised))
            self.assertEqual(0, var.eval())

    def test_an_error_stops_the_coordinator_and_join_raises_it(self):
        with self.test_session() as sess:
            queue = tf.FIFOQueue(10, tf.float32)
            qr = tf.train.QueueRunner(queue, ["not an op"])
            coord = tf.train.Coordinator()
            threads = qr.create_threads(sess, coord, start=True)
            with self.assertRaisesRegex(ValueError, "Operation not in the graph"):
                coord.join(threads)

    def test_a_stop_cancels_a_blocked_enqueue_within_the_grace_period(self):
        with self.test_session() as sess:
            queue = tf.FIFOQueue(2, tf.float32)
            enqueue = queue.enqueue((10.0,))
            dequeue = queue.dequeue()
            qr = tf.train.QueueRunner(queue, [enqueue])
            coord = tf.train.Coordinator()
            threads = qr.create_threads(sess, coord, start=True)
            dequeue.op.run()
            time.sleep(0.02)
            coord.request_stop()
            # The stop closes the queue, cancelling the enqueue that waits for room.
            coord.join(threads, stop_grace_period_secs=5)

    def test_no_second_set_of_threads_while_one_runs(self):
        with self.test_session() as sess:
            var = tf.Variable(tf.constant(0, dtype=tf.int64))
            queue = tf.FIFOQueue(10, tf.float32)
            tf.global_variables_initializer().run()
            coord = tf.train.Coordinator()
            qr = tf.train.QueueRunner(queue, [var.count_up_to(3)])
            threads = qr.create_threads(sess, coord=coord)
            self.assertEqual([], qr.create_threads(sess, coord=coord))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=0.5)

    def test_threads_can_be_made_again_once_the_last_ended(self):
        with self.test_session() as sess:
            var = tf.Variable(tf.constant(0, dtype=tf.int64))
            queue = tf.FIFOQueue(10, tf.float32)
            tf.global_variables_initializer().run()
            qr = tf.train.QueueRunner(queue, [var.count_up_to(3), "bad op"])
            for _ in range(2):
                threads = qr.create_threads(sess, start=True)
                for t in threads:
                    t.join()
                self.assertEqual(1, len(qr.exceptions_raised))
                self.assertIn("Operation not in the graph", str(qr.exceptions_raised[0]))

    def test_name_and_collection(self):
        with tf.name_scope("scope"):
            queue = tf.FIFOQueue(10, tf.float32, name="queue")
        qr = tf.train.QueueRunner(queue, [tf.no_op()])
        self.assertEqual("scope/queue", qr.name)
        tf.train.add_queue_runner(qr)
        self.assertEqual(1, len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS, "scope")))

    def test_start_queue_runners_fills_the_queue_of_the_default_session(self):
        var = tf.Variable(tf.constant(0, dtype=tf.int64))
        queue = tf.FIFOQueue(10, tf.int64)
        tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(
            var.count_up_to(5))]))
        dequeue = queue.dequeue()
        with self.test_session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(coord=coord)
            self.assertEqual(2, len(threads))  # the enqueue thread and the closing one
            self.assertEqual([0, 1, 2, 3, 4], [sess.run(dequeue) for _ in range(5)])
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(dequeue)  # the end of the input closed the queue
            coord.request_stop()
            coord.join(threads)

    def test_start_queue_runners_needs_a_session(self):
        with self.assertRaisesRegex(ValueError, "No default session"):
            tf.train.start_queue_runners()
        with self.assertRaisesRegex(TypeError, "tf.Session"):
            tf.train.start_queue_runners(sess=3)
        with self.assertRaises(TypeError):
            tf.train.QueueRunner(tf.FIFOQueue(1, tf.float32), [tf.no_op()],
                                 queue_closed_exception_types=(ValueError,))
