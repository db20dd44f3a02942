"""Queues of many and queue-based input pipelines: FIFOQueue.enqueue_many/dequeue_many/
dequeue_up_to, RandomShuffleQueue, Tensor.set_shape, and tf.train's limit_epochs,
string/range/slice_input_producer, batch, shuffle_batch, batch_join and shuffle_batch_join
(the cases of TensorFlow 1.x's input_test and fifo/random_shuffle queue tests, re-expressed)."""

import os

import numpy as np
import pytest

import troupe as tf

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


def _run_threads(sess):
    coord = tf.train.Coordinator()
    return coord, tf.train.start_queue_runners(sess=sess, coord=coord)


def _stop(coord, threads):
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)


class QueueOfManyTest(tf.test.TestCase):

    def test_enqueue_many_then_dequeue_many_and_up_to(self):
        with self.test_session() as sess:
            q = tf.FIFOQueue(10, [tf.int32, tf.string], shapes=[[2], []])
            sess.run(q.enqueue_many([[[1, 2], [3, 4], [5, 6]], [b"a", b"b", b"c"]]))
            self.assertEqual(3, sess.run(q.size()))
            numbers, names = q.dequeue_many(2)
            self.assertEqual([2, 2], numbers.shape.as_list())
            got_numbers, got_names = sess.run([numbers, names])
            self.assertAllEqual([[1, 2], [3, 4]], got_numbers)
            self.assertEqual([b"a", b"b"], list(got_names))
            sess.run(q.close())
            with self.assertRaisesRegex(tf.errors.OutOfRangeError,
                                        "requested 2, current size 1"):
                sess.run(q.dequeue_many(2))
            rest = q.dequeue_up_to(2)
            self.assertIsNone(rest[0].shape.as_list()[0])
            got_numbers, got_names = sess.run(rest)
            self.assertAllEqual([[5, 6]], got_numbers)
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(q.dequeue_up_to(2))

    def test_a_dequeue_of_many_may_ask_for_more_than_the_capacity(self):
        with self.test_session() as sess:
            q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
            enqueue = q.enqueue_many([list(range(5))])
            qr = tf.train.QueueRunner(q, [enqueue])
            coord = tf.train.Coordinator()
            threads = qr.create_threads(sess, coord=coord, start=True)
            self.assertEqual(list(range(5)), list(sess.run(q.dequeue_many(5))))
            _stop(coord, threads)

    def test_a_dequeue_of_many_needs_specified_shapes(self):
        with self.test_session() as sess:
            q = tf.FIFOQueue(10, tf.int32)
            sess.run(q.enqueue_many([[1, 2, 3]]))
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError,
                                        "shapes fully specified"):
                sess.run(q.dequeue_many(2))
            self.assertEqual(3, sess.run(q.size()))  # nothing was taken
            empty = tf.FIFOQueue(1, tf.int32, shapes=[]).dequeue_many(0)
            self.assertEqual(0, len(sess.run(empty)))  # at once, though the queue is empty

    def test_a_padding_fifo_queue_pads_dequeues_of_many(self):
        with self.test_session() as sess:
            q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None, 2], [None]])
            for numbers, names in [([[1, 2]], [b"a"]), ([[3, 4], [5, 6], [7, 8]], [b"b", b"c"]),
                                   (np.zeros([0, 2], np.int32), [])]:
                sess.run(q.enqueue([numbers, names]))
            padded_numbers, padded_names = q.dequeue_many(3)
            self.assertEqual([3, None, 2], padded_numbers.shape.as_list())
            numbers, names = sess.run([padded_numbers, padded_names])
            self.assertAllEqual([[[1, 2], [0, 0], [0, 0]],
                                 [[3, 4], [5, 6], [7, 8]],
                                 [[0, 0], [0, 0], [0, 0]]], numbers)
            self.assertEqual([[b"a", b""], [b"b", b"c"], [b"", b""]], names.tolist())
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "must have shape"):
                sess.run(q.enqueue([[1, 2, 3], [b"x"]]))
        with self.assertRaisesRegex(ValueError, "shapes must be provided"):
            tf.PaddingFIFOQueue(10, [tf.int32], shapes=None)

    def test_enqueue_many_checks_its_components(self):
        with self.test_session() as sess:
            q = tf.FIFOQueue(10, [tf.int32, tf.int32], shapes=[[], []])
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "dimension 0"):
                sess.run(q.enqueue_many([[1, 2, 3], [1, 2]]))
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "must have shape"):
                sess.run(q.enqueue_many([[[1], [2]], [1, 2]]))

    def test_a_random_shuffle_queue_keeps_min_after_dequeue_until_closed(self):
        with self.test_session() as sess:
            q = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=4, dtypes=tf.int32,
                                      shapes=[[]], seed=7)
            sess.run(q.enqueue_many([list(range(10))]))
            first = sess.run(q.dequeue_many(6))
            self.assertEqual(4, sess.run(q.size()))
            sess.run(q.close())
            rest = sess.run(q.dequeue_many(4))
            self.assertEqual(list(range(10)), sorted(list(first) + list(rest)))
            self.assertNotEqual(list(range(6)), list(first))

    def test_a_seeded_random_shuffle_queue_repeats_its_order(self):
        def order():
            with tf.Graph().as_default(), tf.Session() as sess:
                q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]], seed=3)
                sess.run(q.enqueue_many([list(range(20))]))
                return list(sess.run(q.dequeue_many(20)))
        self.assertEqual(order(), order())

    def test_bad_random_shuffle_queue_arguments(self):
        with self.assertRaisesRegex(ValueError, "min_after_dequeue"):
            tf.RandomShuffleQueue(10, -1, tf.int32)
        with self.assertRaisesRegex(Exception, "below capacity"):
            tf.RandomShuffleQueue(10, 10, tf.int32)

    def test_set_shape_narrows_and_refuses_a_conflict(self):
        x = tf.placeholder(tf.float32, shape=[None, None])
        x.set_shape([None, 3])
        self.assertEqual([None, 3], x.shape.as_list())
        y = tf.matmul(x, tf.ones([3, 2]))
        self.assertEqual([None, 2], y.shape.as_list())
        with self.assertRaisesRegex(ValueError, "incompatible"):
            x.set_shape([None, 4])


class InputProducerTest(tf.test.TestCase):

    def test_limit_epochs(self):
        with self.test_session() as sess:
            love_me = tf.constant("Love Me")
            love_me_two_times = tf.train.limit_epochs(love_me, num_epochs=2)
            sess.run(tf.local_variables_initializer())
            self.assertEqual(b"Love Me", sess.run(love_me_two_times))
            self.assertEqual(b"Love Me", sess.run(love_me_two_times))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(love_me_two_times)
        with self.assertRaisesRegex(ValueError, "num_epochs must be > 0"):
            tf.train.limit_epochs(tf.constant(1), num_epochs=0)

    def test_string_input_producer_in_order_for_num_epochs(self):
        with self.test_session() as sess:
            strings = [b"to", b"be", b"or", b"not", b"to", b"be"]
            num_epochs = 3
            queue = tf.train.string_input_producer(strings, num_epochs=num_epochs,
                                                   shuffle=False)
            dequeue_many = queue.dequeue_many(len(strings) * num_epochs)
            dequeue = queue.dequeue()
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertEqual(strings * num_epochs, list(sess.run(dequeue_many)))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(dequeue)
            _stop(coord, threads)

    def test_string_input_producer_shuffles_each_epoch(self):
        with self.test_session() as sess:
            strings = [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"]
            num_epochs = 4
            queue = tf.train.string_input_producer(strings, num_epochs=num_epochs,
                                                   shuffle=True, seed=271828)
            dequeue_many = queue.dequeue_many(len(strings))
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            epochs = [list(sess.run(dequeue_many)) for _ in range(num_epochs)]
            for epoch in epochs:
                self.assertEqual(sorted(strings), sorted(epoch))
            self.assertTrue(any(epoch != strings for epoch in epochs))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(queue.dequeue())
            _stop(coord, threads)

    def test_string_input_producer_refuses_no_strings(self):
        with self.assertRaisesRegex(ValueError, "requires a non-null input tensor"):
            tf.train.string_input_producer([])
        with self.test_session() as sess:
            names = tf.placeholder(tf.string, shape=[None])
            queue = tf.train.string_input_producer(names, num_epochs=1)
            sess.run(tf.local_variables_initializer())
            qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError, "non-null"):
                sess.run(qr.enqueue_ops[0], feed_dict={names: []})
            del queue

    def test_range_and_slice_input_producers(self):
        with self.test_session() as sess:
            range_q = tf.train.range_input_producer(5, num_epochs=2, shuffle=False)
            numbers = range_q.dequeue_many(10)
            source_strings = [b"Alpha", b"Beta", b"Delta", b"Gamma"]
            source_ints = [2, 3, 5, 7]
            slices = tf.train.slice_input_producer([source_strings, source_ints], num_epochs=2,
                                                   shuffle=False)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertEqual([0, 1, 2, 3, 4] * 2, list(sess.run(numbers)))
            pairs = [tuple(sess.run(slices)) for _ in range(8)]
            self.assertEqual(list(zip(source_strings, source_ints)) * 2, pairs)
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(slices)
            _stop(coord, threads)


class BatchTest(tf.test.TestCase):

    def _counter(self, limit):
        examples = tf.Variable(tf.constant(0, dtype=tf.int64), trainable=False,
                               collections=[tf.GraphKeys.LOCAL_VARIABLES])
        return examples.count_up_to(limit)

    def test_batch_in_order_then_out_of_range(self):
        with self.test_session() as sess:
            batch_size, num_batches = 10, 3
            counter = self._counter(num_batches * batch_size)
            batched = tf.train.batch([counter, "string"], batch_size=batch_size)
            self.assertEqual([batch_size], batched[0].shape.as_list())
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            for i in range(num_batches):
                numbers, strings = sess.run(batched)
                self.assertAllEqual(np.arange(i * batch_size, (i + 1) * batch_size), numbers)
                self.assertEqual([b"string"] * batch_size, list(strings))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_a_smaller_final_batch_when_allowed(self):
        with self.test_session() as sess:
            counter = self._counter(25)
            batched = tf.train.batch({"n": counter}, batch_size=10,
                                     allow_smaller_final_batch=True)
            self.assertEqual(["n"], list(batched))
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            sizes = [len(sess.run(batched)["n"]) for _ in range(3)]
            self.assertEqual([10, 10, 5], sizes)
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_batch_of_batches_with_enqueue_many(self):
        with self.test_session() as sess:
            counter = self._counter(20)
            pre_batched = tf.train.batch([counter, "string"], batch_size=2)
            batched = tf.train.batch(pre_batched, enqueue_many=True, batch_size=10)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertAllEqual(np.arange(10), sess.run(batched)[0])
            self.assertAllEqual(np.arange(10, 20), sess.run(batched)[0])
            _stop(coord, threads)

    def test_maybe_batch_enqueues_only_what_keep_input_keeps(self):
        with self.test_session() as sess:
            counter = self._counter(30)
            keep = tf.equal(tf.mod(counter, 3), 0)
            batched = tf.train.maybe_batch([counter], keep, batch_size=5)
            self.assertEqual([5], batched.shape.as_list())
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertAllEqual([0, 3, 6, 9, 12], sess.run(batched))
            self.assertAllEqual([15, 18, 21, 24, 27], sess.run(batched))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_maybe_batch_of_batches_row_by_row_or_whole(self):
        with self.test_session() as sess:
            counter = self._counter(20)
            pairs = tf.train.batch([counter], batch_size=2)
            # A vector keeps row by row: the first of each pair.
            rows = tf.train.maybe_batch([pairs], [True, False], batch_size=5, enqueue_many=True,
                                        name="rows")
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertAllEqual([0, 2, 4, 6, 8], sess.run(rows))
            self.assertAllEqual([10, 12, 14, 16, 18], sess.run(rows))
            _stop(coord, threads)
        with self.test_session() as sess:
            counter = self._counter(8)
            pairs = tf.train.batch([counter], batch_size=2)
            # A scalar keeps or drops a whole batch.
            whole = tf.train.maybe_batch([pairs], tf.less(pairs[0], 4), batch_size=4,
                                         enqueue_many=True, allow_smaller_final_batch=True)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertAllEqual([0, 1, 2, 3], sess.run(whole))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(whole)
            _stop(coord, threads)

    def test_maybe_shuffle_batch_and_joins_keep_each_kept_example_once(self):
        with self.test_session() as sess:
            counter = self._counter(40)
            keep = tf.equal(tf.mod(counter, 2), 0)
            batched = tf.train.maybe_shuffle_batch([counter], batch_size=5, capacity=16,
                                                   min_after_dequeue=4, keep_input=keep,
                                                   seed=7, allow_smaller_final_batch=True)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            seen = []
            while True:
                try:
                    seen.extend(sess.run(batched))
                except tf.errors.OutOfRangeError:
                    break
            self.assertEqual(list(range(0, 40, 2)), sorted(seen))
            _stop(coord, threads)
        with self.test_session() as sess:
            a, b = self._counter(10), tf.constant(100, dtype=tf.int64)
            joined = tf.train.maybe_batch_join([[a], [b]], tf.constant(True), batch_size=4)
            shuffled = tf.train.maybe_shuffle_batch_join(
                [[a], [b]], batch_size=2, capacity=8, min_after_dequeue=0, keep_input=False)
            self.assertEqual([4], joined.shape.as_list())
            self.assertEqual([2], shuffled.shape.as_list())

    def test_bad_keep_input(self):
        with tf.Graph().as_default():
            x = tf.constant(1)
            with self.assertRaisesRegex(ValueError, "cannot be a vector when `enqueue_many"):
                tf.train.maybe_batch([x], [True], batch_size=2)
            with self.assertRaisesRegex(ValueError, "must be 0 or 1 dimensions"):
                tf.train.maybe_batch([tf.constant([1, 2])], [[True, False]], batch_size=2,
                                     enqueue_many=True)
            with self.assertRaisesRegex(ValueError, "must be known at graph construction"):
                keep = tf.placeholder(tf.bool)
                tf.train.maybe_batch([x], keep, batch_size=2)
            with self.assertRaisesRegex(TypeError, "must be a bool scalar, got float32"):
                tf.train.maybe_batch([x], tf.constant(3.5), batch_size=2)
            # As TensorFlow: a Python number keeps by its truth, a numeric vector its ones.
            tf.train.maybe_batch([x], 1, batch_size=2)
            tf.train.maybe_batch([tf.constant([1, 2])], [1, 0], batch_size=2, enqueue_many=True)

    def test_shuffle_batch_gives_every_example_once_not_in_order(self):
        with self.test_session() as sess:
            counter = self._counter(30)
            batched = tf.train.shuffle_batch([counter, "string"], batch_size=10, capacity=32,
                                             min_after_dequeue=16, seed=141421)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            seen = []
            for _ in range(3):
                numbers, strings = sess.run(batched)
                seen.extend(numbers)
                self.assertEqual([b"string"] * 10, list(strings))
            self.assertEqual(list(range(30)), sorted(seen))
            self.assertNotEqual(list(range(30)), seen)
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_batch_join_and_shuffle_batch_join_take_from_every_input(self):
        for shuffle in (False, True):
            with tf.Graph().as_default(), tf.Session() as sess:
                a = self._counter(10)
                b = self._counter(10) + 100
                if shuffle:
                    batched = tf.train.shuffle_batch_join([[a, "a"], [b, "b"]], batch_size=5,
                                                          capacity=20, min_after_dequeue=5,
                                                          seed=3)
                else:
                    batched = tf.train.batch_join([[a, "a"], [b, "b"]], batch_size=5)
                sess.run(tf.local_variables_initializer())
                coord, threads = _run_threads(sess)
                numbers, names = [], []
                for _ in range(4):
                    n, s = sess.run(batched)
                    numbers.extend(n)
                    names.extend(s)
                _stop(coord, threads)
                self.assertTrue(set(numbers) <= set(range(10)) | set(range(100, 110)))
                self.assertEqual(20, len(set(numbers)))
                for n, s in zip(numbers, names):
                    self.assertEqual(b"b" if n >= 100 else b"a", s)

    def test_batch_with_dynamic_pad_pads_each_batch_to_its_longest(self):
        # TensorFlow's testBatchWithDynamicPad, re-expressed: element i is range(i) (and a
        # string), batches of 3 padded with zeros to their longest.
        with self.test_session() as sess:
            counter = self._counter(6)
            row = tf.range(tf.cast(counter, tf.int32))
            batched = tf.train.batch([row, "s"], batch_size=3, dynamic_pad=True)
            self.assertEqual([3, None], batched[0].shape.as_list())
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            first, _ = sess.run(batched)
            self.assertAllEqual([[0, 0], [0, 0], [0, 1]], first)  # range(0), (1), (2)
            second, names = sess.run(batched)
            self.assertAllEqual([[0, 1, 2, 0, 0], [0, 1, 2, 3, 0], [0, 1, 2, 3, 4]], second)
            self.assertEqual([b"s"] * 3, list(names))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_bad_batch_arguments(self):
        with self.assertRaisesRegex(ValueError, "All shapes must be fully defined"):
            tf.train.batch([tf.placeholder(tf.float32)], batch_size=2)
        with self.assertRaisesRegex(ValueError, "at least one tensor"):
            tf.train.batch([], batch_size=2)
        with self.assertRaisesRegex(TypeError, "wrap it in a list"):
            tf.train.batch(tf.constant(1), batch_size=2)
        with self.assertRaisesRegex(ValueError, "at least one input"):
            tf.train.batch_join([], batch_size=2)
        with self.assertRaisesRegex(ValueError, "rank >= 1"):
            tf.train.input_producer(tf.constant(1.0))
        with self.assertRaisesRegex(ValueError, "All shapes must be fully defined"):
            tf.train.batch([tf.placeholder(tf.float32)], batch_size=2, shapes=[None])
        # One shape (ints) stands for a list of one, as TensorFlow's rule.
        batched = tf.train.batch([tf.placeholder(tf.float32)], batch_size=2, shapes=[3])
        self.assertEqual([2, 3], batched.shape.as_list())


class ReaderTest(tf.test.TestCase):
    """TensorFlow 1.x's reader_ops_test cases, re-expressed: each reader's records and keys, the
    files taken from a queue in turn, the counts, and the end of the input."""

    def _write_tfrecords(self, names, records_per_file):
        paths = []
        for i, name in enumerate(names):
            path = self.get_temp_dir() + "/" + name
            with tf.python_io.TFRecordWriter(path) as writer:
                for j in range(records_per_file):
                    writer.write(b"Record %d of file %d" % (j, i))
            paths.append(path)
        return paths

    def _read_all(self, sess, key, value, count):
        return [sess.run([key, value]) for _ in range(count)]

    def test_tfrecord_reader_takes_files_from_the_queue_in_turn(self):
        paths = self._write_tfrecords(["a.tfrecord", "b.tfrecord"], 3)
        with self.test_session() as sess:
            reader = tf.TFRecordReader(name="test_reader")
            queue = tf.FIFOQueue(99, [tf.string], shapes=())
            key, value = reader.read(queue)
            sess.run(queue.enqueue_many([paths]))
            sess.run(queue.close())
            got = self._read_all(sess, key, value, 6)
            offset = 0
            for n, (k, v) in enumerate(got):
                i, j = divmod(n, 3)
                if j == 0:
                    offset = 0
                self.assertEqual(("%s:%d" % (paths[i], offset)).encode(), k)
                self.assertEqual(b"Record %d of file %d" % (j, i), v)
                offset += 16 + len(v)  # length, its CRC, the data, its CRC
            with self.assertRaisesRegex(tf.errors.OutOfRangeError, "is closed"):
                sess.run([key, value])
            self.assertEqual(6, sess.run(reader.num_records_produced()))
            self.assertEqual(2, sess.run(reader.num_work_units_completed()))
            sess.run(reader.reset())
            self.assertEqual(0, sess.run(reader.num_records_produced()))

    def test_read_up_to_reads_every_record_in_batches_that_end_with_their_file(self):
        # reader_ops_test's TFRecordReaderTest.testReadUpTo, with the batches TensorFlow's
        # ReaderBase::ReadUpTo makes: up to batch_size, fewer where a file ends.
        paths = self._write_tfrecords(["a.tfrecord", "b.tfrecord"], 7)
        with self.test_session() as sess:
            reader = tf.TFRecordReader(name="test_reader")
            queue = tf.FIFOQueue(99, [tf.string], shapes=())
            keys, values = reader.read_up_to(queue, 3)
            self.assertEqual([None], keys.shape.as_list())
            sess.run(queue.enqueue_many([paths]))
            sess.run(queue.close())
            got = []
            while True:
                try:
                    got.append(sess.run([keys, values]))
                except tf.errors.OutOfRangeError:
                    break
            self.assertEqual([3, 3, 1, 3, 3, 1], [len(k) for k, _ in got])
            self.assertEqual([b"Record %d of file %d" % (j, i)
                              for i in range(2) for j in range(7)],
                             [v for _, vs in got for v in vs])
            self.assertTrue(all(k.startswith(paths[0].encode() + b":") for k in got[0][0]))
            self.assertEqual(14, sess.run(reader.num_records_produced()))
            self.assertEqual(2, sess.run(reader.num_work_units_completed()))
            # 0 records: empty vectors at once; fewer is InvalidArgument.
            self.assertEqual(0, len(sess.run(reader.read_up_to(queue, 0).keys)))
            with self.assertRaisesRegex(tf.errors.InvalidArgumentError,
                                        "num_records must be >= 0, got -1"):
                sess.run(reader.read_up_to(queue, -1))

    def test_read_up_to_of_text_lines_feeds_a_batch(self):
        path = self.get_temp_dir() + "/many.txt"
        with open(path, "wb") as f:
            f.write(b"".join(b"%d\n" % i for i in range(10)))
        with self.test_session() as sess:
            queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
            _, lines = tf.TextLineReader().read_up_to(queue, 4)
            numbers = tf.train.batch([tf.string_to_number(lines, tf.int32)], batch_size=5,
                                     enqueue_many=True, allow_smaller_final_batch=True)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            self.assertEqual([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]],
                             [list(sess.run(numbers)) for _ in range(2)])
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(numbers)
            _stop(coord, threads)

    def test_text_line_reader_skips_header_lines(self):
        path = self.get_temp_dir() + "/lines.txt"
        with open(path, "wb") as f:
            f.write(b"header\nfirst\r\nsecond\nlast")
        with self.test_session() as sess:
            reader = tf.TextLineReader(skip_header_lines=1)
            queue = tf.FIFOQueue(9, [tf.string], shapes=())
            key, value = reader.read(queue)
            sess.run(queue.enqueue([path]))
            sess.run(queue.close())
            got = self._read_all(sess, key, value, 3)
            self.assertEqual([[("%s:%d" % (path, n)).encode(), line] for n, line in
                              [(2, b"first"), (3, b"second"), (4, b"last")]],
                             [list(g) for g in got])
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(value)

    def test_match_filenames_once_feeds_a_reader_pipeline(self):
        directory = self.get_temp_dir() + "/matched"
        os.makedirs(directory, exist_ok=True)
        for name, text in [("b.txt", b"b1\nb2\n"), ("a.txt", b"a1\n"), ("c.dat", b"no\n")]:
            with open(os.path.join(directory, name), "wb") as f:
                f.write(text)
        with self.test_session() as sess:
            files = tf.train.match_filenames_once(directory + "/*.txt")
            self.assertEqual("matching_filenames:0", files.name)
            self.assertIsNone(files.shape.ndims)  # validate_shape=False: unknown to the graph
            self.assertIn(files, tf.local_variables())
            queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
            key, value = tf.TextLineReader().read(queue)
            sess.run(tf.local_variables_initializer())
            self.assertEqual([(directory + "/a.txt").encode(), (directory + "/b.txt").encode()],
                             list(sess.run(files)))
            coord, threads = _run_threads(sess)
            self.assertEqual([b"a1", b"b1", b"b2"], [sess.run(value) for _ in range(3)])
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(value)
            _stop(coord, threads)

    def test_fixed_length_and_whole_file_readers(self):
        path = self.get_temp_dir() + "/fixed.bin"
        with open(path, "wb") as f:
            f.write(b"HH" + b"abc" + b"def" + b"gh" + b"FFF")  # a partial last record
        with self.test_session() as sess:
            reader = tf.FixedLengthRecordReader(record_bytes=3, header_bytes=2, footer_bytes=3)
            queue = tf.FIFOQueue(9, [tf.string], shapes=())
            key, value = reader.read(queue)
            sess.run(queue.enqueue([path]))
            sess.run(queue.close())
            got = self._read_all(sess, key, value, 2)
            self.assertEqual([[("%s:0" % path).encode(), b"abc"],
                              [("%s:1" % path).encode(), b"def"]], [list(g) for g in got])
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(value)
            whole = tf.WholeFileReader()
            files = tf.FIFOQueue(9, [tf.string], shapes=())
            wkey, wvalue = whole.read(files)
            sess.run(files.enqueue([path]))
            sess.run(files.close())
            self.assertEqual([path.encode(), b"HHabcdefghFFF"], sess.run([wkey, wvalue]))

    def test_reads_of_one_reader_from_many_threads_lose_no_record(self):
        # Each read waits for the one before it, as TensorFlow's reader holds its lock across
        # its wait for a file name: two reads waiting at once would each open a file, and the
        # second would drop what is left of the first.
        paths = self._write_tfrecords(["c%d.tfrecord" % i for i in range(4)], 5)
        with self.test_session() as sess:
            filenames = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
            read = tf.TFRecordReader().read(filenames)
            key, value = read
            self.assertIs(read.value, value)  # TensorFlow's (key, value) namedtuple
            batched = tf.train.batch([value], batch_size=20, num_threads=4)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            got = sorted(sess.run(batched))
            expected = sorted(b"Record %d of file %d" % (j, i) for i in range(4)
                              for j in range(5))
            self.assertEqual(expected, got)
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(batched)
            _stop(coord, threads)

    def test_two_reads_waiting_for_file_names_lose_no_record(self):
        # Both reads wait on an empty name queue; then two names arrive. Served one at a time,
        # the second read continues the first file; served at once, the second would open the
        # second file over the first and drop the first file's other records. (Whatever the
        # timing, the outcome with one read at a time is the same: the sleep only makes the
        # broken case likely.)
        import threading
        import time
        paths = self._write_tfrecords(["w0.tfrecord", "w1.tfrecord"], 3)
        with self.test_session() as sess:
            reader = tf.TFRecordReader()
            queue = tf.FIFOQueue(9, [tf.string], shapes=())
            _, value = reader.read(queue)
            got = []
            readers = [threading.Thread(target=lambda: got.append(sess.run(value)))
                       for _ in range(2)]
            for t in readers:
                t.start()
            time.sleep(0.3)
            sess.run(queue.enqueue_many([paths]))
            sess.run(queue.close())
            for t in readers:
                t.join(30)
            while True:
                try:
                    got.append(sess.run(value))
                except tf.errors.OutOfRangeError:
                    break
            self.assertEqual(sorted(b"Record %d of file %d" % (j, i) for i in range(2)
                                    for j in range(3)), sorted(got))

    def test_a_missing_file_is_not_found_naming_it(self):
        with self.test_session() as sess:
            reader = tf.TFRecordReader()
            queue = tf.FIFOQueue(9, [tf.string], shapes=())
            _, value = reader.read(queue)
            sess.run(queue.enqueue(["/no/such/file.tfrecord"]))
            with self.assertRaisesRegex(tf.errors.NotFoundError, "/no/such/file.tfrecord"):
                sess.run(value)

    def test_bad_reader_arguments(self):
        with self.assertRaisesRegex(ValueError, "record_bytes must be > 0"):
            tf.FixedLengthRecordReader(record_bytes=0)
        with self.assertRaisesRegex(ValueError, "Not a valid compression_type"):
            tf.TFRecordReader(options=tf.python_io.TFRecordOptions("BZIP2"))
        with self.assertRaisesRegex(TypeError, "TFRecordOptions"):
            tf.TFRecordReader(options="GZIP")
        with self.assertRaisesRegex(TypeError, "queue"):
            tf.TFRecordReader().read("not a queue")

    def test_a_tfrecord_pipeline_trains_batches_from_files(self):
        """The TF1 input pipeline end to end: file names, a reader, parsing, shuffle_batch."""
        paths = []
        for i in range(2):
            path = self.get_temp_dir() + "/examples-%d.tfrecord" % i
            with tf.python_io.TFRecordWriter(path) as writer:
                for j in range(10):
                    example = tf.train.Example(features=tf.train.Features(feature={
                        "x": tf.train.Feature(float_list=tf.train.FloatList(
                            value=[float(10 * i + j), 1.0])),
                        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}))
                    writer.write(example.SerializeToString())
            paths.append(path)
        with self.test_session() as sess:
            filenames = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
            _, serialized = tf.TFRecordReader().read(filenames)
            features = tf.parse_single_example(serialized, {
                "x": tf.FixedLenFeature([2], tf.float32), "y": tf.FixedLenFeature([], tf.int64)})
            xs, ys = tf.train.shuffle_batch([features["x"], features["y"]], batch_size=5,
                                            capacity=20, min_after_dequeue=5, seed=1)
            sess.run(tf.local_variables_initializer())
            coord, threads = _run_threads(sess)
            seen = []
            for _ in range(4):
                x, y = sess.run([xs, ys])
                self.assertEqual((5, 2), x.shape)
                for row, label in zip(x, y):
                    self.assertEqual(int(row[0]) // 10, label)
                    seen.append(int(row[0]))
            self.assertEqual(list(range(20)), sorted(seen))
            with self.assertRaises(tf.errors.OutOfRangeError):
                sess.run(xs)
            _stop(coord, threads)


def test_a_queue_shared_by_name_must_be_the_one_asked_for():
    """As TensorFlow's queues: a node that finds a queue of its shared_name checks its kind,
    capacity, component types and shapes (and a shuffling queue's min_after_dequeue and seeds),
    instead of silently using a queue of another type."""
    def fails(second, message):
        with tf.Graph().as_default():
            first = tf.RandomShuffleQueue(10, 2, [tf.int32], shapes=[[2]], seed=1,
                                          shared_name="shared") \
                if isinstance(second, tuple) else \
                tf.FIFOQueue(10, [tf.int32], shapes=[[2]], shared_name="shared")
            other = second[0]() if isinstance(second, tuple) else second()
            with tf.Session() as sess:
                sess.run(first.size())
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(other.size())

    fails(lambda: tf.FIFOQueue(5, [tf.int32], shapes=[[2]], shared_name="shared"),
          "Shared queue 'shared' has capacity 10 but requested capacity was 5")
    fails(lambda: tf.FIFOQueue(10, [tf.int64], shapes=[[2]], shared_name="shared"),
          "Shared queue 'shared' has component types int32 but requested component types "
          "were int64")
    fails(lambda: tf.FIFOQueue(10, [tf.int32], shapes=[[3]], shared_name="shared"),
          r"Shared queue 'shared' has component shapes \[\[2\]\] but requested component "
          r"shapes were \[\[3\]\]")
    fails(lambda: tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[2]], shared_name="shared"),
          "Shared queue 'shared' has type 'FIFOQueue' that does not match type of Node")
    fails((lambda: tf.RandomShuffleQueue(10, 3, [tf.int32], shapes=[[2]], seed=1,
                                         shared_name="shared"),),
          "has min_after_dequeue 2 but requested min_after_dequeue was 3")
    fails((lambda: tf.RandomShuffleQueue(10, 2, [tf.int32], shapes=[[2]], seed=7,
                                         shared_name="shared"),),
          r"Shared queue 'shared' has random seeds \(\d+, 1\) but requested seeds are "
          r"\(\d+, 7\)")
    with tf.Graph().as_default():  # the same queue, asked for again: one queue
        a = tf.FIFOQueue(10, [tf.int32], shapes=[[2]], shared_name="same")
        b = tf.FIFOQueue(10, [tf.int32], shapes=[[2]], shared_name="same")
        with tf.Session() as sess:
            sess.run(a.enqueue([[1, 2]]))
            assert sess.run(b.size()) == 1


def test_queues_with_named_components():
    """TensorFlow 1.x's fifo_queue_test testEnqueueDequeueDictionary and its errors, ported:
    with names, enqueues take a dict and dequeues give one."""
    q = tf.FIFOQueue(10, [tf.int32, tf.string], shapes=[[], []], names=["x", "y"])
    assert q.names == ["x", "y"]
    put = q.enqueue({"y": "a", "x": 1})
    put_many = q.enqueue_many({"x": [2, 3], "y": ["b", "c"]})
    one = q.dequeue()
    many = q.dequeue_many(2)
    assert set(one) == {"x", "y"} and many["x"].shape.as_list() == [2]
    with tf.Session() as sess:
        sess.run([put])
        sess.run(put_many)
        assert sess.run(one) == {"x": 1, "y": b"a"}
        got = sess.run(many)
        assert list(got["x"]) == [2, 3] and list(got["y"]) == [b"b", b"c"]
    with pytest.raises(ValueError, match="same length as dtypes"):
        tf.FIFOQueue(10, [tf.int32], names=["x", "y"])
    with pytest.raises(ValueError, match="must enqueue a dictionary"):
        q.enqueue([1, "a"])
    with pytest.raises(ValueError, match="do not match names of Queue"):
        q.enqueue({"x": 1, "z": "a"})
    plain = tf.FIFOQueue(10, [tf.int32])
    with pytest.raises(ValueError, match="must have names to enqueue a dictionary"):
        plain.enqueue({"x": 1})
