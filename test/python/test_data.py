"""tf.data: ports of TensorFlow 1.x's dataset tests (range, from_tensor_slices, batch,
shuffle, repeat/take/skip/shard, zip, concatenate, map, filter, prefetch, the record readers
and the iterators), checked against the results TensorFlow documents, and the errors for bad
input."""

import collections
import os
import re

import numpy as np
import pytest

import troupe as tf


def drain(next_element, sess, limit=10000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("no end of sequence after %d elements" % limit)


def values(dataset):
    with tf.Session() as sess:
        return drain(dataset.make_one_shot_iterator().get_next(), sess)


# --- range_dataset_op_test ---

def test_range_with_stop_start_and_step():
    assert values(tf.data.Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(tf.data.Dataset.range(2, 5)) == [2, 3, 4]
    assert values(tf.data.Dataset.range(2, 10, 3)) == [2, 5, 8]
    assert values(tf.data.Dataset.range(10, 2, -3)) == [10, 7, 4]
    assert values(tf.data.Dataset.range(5, 2)) == []
    with pytest.raises(ValueError, match="step must be a non-zero integer"):
        tf.data.Dataset.range(2, 10, 0)


def test_range_takes_tensors_fed_at_initialization():
    start = tf.placeholder(tf.int64, shape=[])
    stop = tf.placeholder(tf.int64, shape=[])
    iterator = tf.data.Dataset.range(start, stop).make_initializable_iterator()
    nxt = iterator.get_next()
    assert nxt.dtype == tf.int64 and nxt.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={start: 2, stop: 5})
        assert drain(nxt, sess) == [2, 3, 4]
        sess.run(iterator.initializer, feed_dict={start: 0, stop: 2})
        assert drain(nxt, sess) == [0, 1]


# --- from_tensor_slices / from_tensors ---

def test_from_tensor_slices_of_a_tuple():
    components = (np.tile(np.array([[1], [2], [3], [4]]), 20),
                  np.tile(np.array([[12], [13], [14], [15]]), 22),
                  np.array([37.0, 38.0, 39.0, 40.0]))
    dataset = tf.data.Dataset.from_tensor_slices(components)
    assert [s.as_list() for s in dataset.output_shapes] == [[20], [22], []]
    got = values(dataset)
    assert len(got) == 4
    for i, element in enumerate(got):
        for component, value in zip(components, element):
            np.testing.assert_array_equal(component[i], value)


def test_from_tensor_slices_of_a_dict_and_a_namedtuple():
    dataset = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [[3.0], [4.0]]})
    assert dataset.output_types == {"a": tf.int32, "b": tf.float32}
    got = values(dataset)
    assert [e["a"] for e in got] == [1, 2]
    np.testing.assert_array_equal(got[1]["b"], [4.0])
    Point = collections.namedtuple("Point", ["x", "y"])
    got = values(tf.data.Dataset.from_tensor_slices(Point([1, 2], [3, 4])))
    assert got == [Point(1, 3), Point(2, 4)]


def test_from_tensor_slices_with_a_placeholder_and_bad_components():
    x = tf.placeholder(tf.float32, shape=[None, 2])
    iterator = tf.data.Dataset.from_tensor_slices(x).make_initializable_iterator()
    nxt = iterator.get_next()
    assert nxt.shape.as_list() == [2]
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={x: [[1, 2], [3, 4], [5, 6]]})
        assert [v.tolist() for v in drain(nxt, sess)] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="scalar"):
        tf.data.Dataset.from_tensor_slices(3.0)
    with pytest.raises(ValueError, match="different first dimensions"):
        tf.data.Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_from_tensors_is_one_element():
    got = values(tf.data.Dataset.from_tensors(([1, 2, 3], "s")))
    assert len(got) == 1
    np.testing.assert_array_equal(got[0][0], [1, 2, 3])
    assert got[0][1] == b"s"


# --- batch_dataset_op_test ---

def test_batch_and_drop_remainder():
    dataset = tf.data.Dataset.range(10)
    got = values(dataset.batch(4))
    assert [v.tolist() for v in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert dataset.batch(4).output_shapes.as_list() == [None]
    dropped = dataset.batch(4, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [4]
    assert [v.tolist() for v in values(dropped)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(ValueError, match="batch_size must be greater than zero"):
        dataset.batch(0)


def test_batch_of_different_shapes_is_an_error():
    dataset = tf.data.Dataset.range(1, 4).map(
        lambda x: tf.fill(tf.reshape(tf.cast(x, tf.int32), [1]), x))
    nxt = dataset.batch(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Cannot batch tensors with different shapes in component 0. "
                                 "First element had shape \\[1\\] and element 1 had "
                                 "shape \\[2\\]"):
            sess.run(nxt)


def test_padded_batch_as_tensorflow_documents_it():
    d = tf.data.Dataset.range(1, 5).map(
        lambda x: tf.fill(tf.reshape(tf.cast(x, tf.int32), [1]), x))
    padded = d.padded_batch(2, padded_shapes=[None])
    assert padded.output_shapes.as_list() == [None, None]
    assert [v.tolist() for v in values(padded)] == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = d.padded_batch(3, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64),
                           drop_remainder=True)
    assert fixed.output_shapes.as_list() == [3, 5]
    assert [v.tolist() for v in values(fixed)] == [[[1, -1, -1, -1, -1], [2, 2, -1, -1, -1],
                                                    [3, 3, 3, -1, -1]]]
    pairs = tf.data.Dataset.zip((d, tf.data.Dataset.from_tensor_slices(["a", "b", "c", "d"])))
    got = values(pairs.padded_batch(4, padded_shapes=([None], [])))
    assert got[0][0].shape == (4, 4) and list(got[0][1]) == [b"a", b"b", b"c", b"d"]
    too_small = d.padded_batch(4, padded_shapes=[2]).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="dimension 0 of size 4, larger than its padded shape's 2"):
            sess.run(too_small)
    with pytest.raises(ValueError, match="another rank"):
        d.padded_batch(2, padded_shapes=[None, None])


def test_cache_replays_the_first_pass():
    noisy = tf.data.Dataset.range(5).map(
        lambda x: x + tf.cast(tf.random_uniform([]) * 1000, tf.int64))
    cached = values(noisy.cache().repeat(3))
    assert cached[:5] == cached[5:10] == cached[10:]
    uncached = values(noisy.repeat(2))
    assert uncached[:5] != uncached[5:]


# --- cache_dataset_op_test's FileCacheDatasetTest, ported ---

def _cached_components(prefix, components):
    """A cache(prefix) of from_tensor_slices of placeholders fed with `components`, read to
    its end twice (repeat(2)) as the test does."""
    placeholders = [tf.placeholder(tf.as_dtype(c.dtype), shape=c.shape) for c in components]
    dataset = tf.data.Dataset.from_tensor_slices(tuple(placeholders)).cache(prefix).repeat(2)
    iterator = dataset.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, dict(zip(placeholders, components)))
        return drain(nxt, sess)


def test_file_cache_passes_through_then_serves_later_runs_from_its_files(tmp_path):
    prefix = str(tmp_path / "cache")
    components = (np.array([1, 2, 3, 4], np.int64), np.array([5, 6, 7, 8], np.int64),
                  np.array([9.0, 10.0, 11.0, 12.0]), np.array([b"a", b"bb", b"", b"d"]))
    rows = [tuple(c[i] for c in components) for i in range(4)]

    def equal(got, want):
        return len(got) == len(want) and all(
            all(np.array_equal(a, b) for a, b in zip(g, w)) for g, w in zip(got, want))
    assert equal(_cached_components(prefix, components), rows + rows)
    assert os.path.exists(prefix + ".index") and os.path.exists(prefix + ".data")
    assert not os.path.exists(prefix + ".lockfile")
    # Another pipeline run over zeros with the same cache: the cached elements come out.
    zeros = tuple(np.zeros_like(c) for c in components)
    assert equal(_cached_components(prefix, zeros), rows + rows)
    # A cache of other dtypes is refused, naming the file.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"'%s.index' holds elements of \[int64, int64, float64, string\], "
                             r"the dataset's are \[float32\]" % prefix):
        _cached_components(prefix, (np.zeros(4, np.float32),))


def test_file_cache_concurrent_writers_and_readers(tmp_path):
    prefix = str(tmp_path / "cache")
    dataset = tf.data.Dataset.range(5).cache(prefix)
    first, second = (dataset.make_one_shot_iterator().get_next() for _ in range(2))
    with tf.Session() as sess:
        assert sess.run(first) == 0
        with pytest.raises(tf.errors.AlreadyExistsError,
                           match=r"There appears to be a concurrent caching iterator running - "
                                 r"cache lockfile already exists \('%s.lockfile'\)" % prefix):
            sess.run(second)
        assert drain(first, sess) == [1, 2, 3, 4]
    readers = [dataset.make_one_shot_iterator().get_next() for _ in range(2)]
    with tf.Session() as sess:
        interleaved = [sess.run(readers[i % 2]) for i in range(10)]
        assert interleaved == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]


def test_a_writer_made_before_the_cache_completed_reads_it_and_leaves_it_whole(tmp_path):
    """Both iterators are made (initialised) while there is no cache, so both are writers; the
    first completes it, and the second, at its first element, reads it instead of writing over
    it; dropped early, it leaves the cache whole."""
    prefix = str(tmp_path / "cache")
    dataset = tf.data.Dataset.range(5).cache(prefix)
    first, second = dataset.make_initializable_iterator(), dataset.make_initializable_iterator()
    with tf.Session() as sess:
        sess.run([first.initializer, second.initializer])
        assert drain(first.get_next(), sess) == [0, 1, 2, 3, 4]
        assert [sess.run(second.get_next()) for _ in range(2)] == [0, 1]
        sess.run(second.initializer)  # drops the partly read iterator
    assert values(dataset) == [0, 1, 2, 3, 4]
    assert sorted(os.listdir(str(tmp_path))) == ["cache.data", "cache.index"]


def test_file_cache_partly_read_is_discarded(tmp_path):
    """cleaning up cache files: a pass stopped before the end leaves no cache and no lock, so
    the next pass writes it again."""
    prefix = str(tmp_path / "cache")
    for i in range(0, 7):
        nxt = tf.data.Dataset.range(5).cache(prefix).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            got = [sess.run(nxt) for _ in range(min(i, 5))]
            assert got == list(range(min(i, 5)))
            if i > 5:
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(nxt)
        complete = os.path.exists(prefix + ".index")
        assert complete == (i > 5), i
        assert not os.path.exists(prefix + ".lockfile")
    # take(k) before the cache completes it; after, it would not.
    assert values(tf.data.Dataset.range(9).take(2).cache(str(tmp_path / "t")).repeat(2)) \
        == [0, 1, 0, 1]


def test_file_cache_damaged_or_unwritable_is_a_typed_error(tmp_path):
    prefix = str(tmp_path / "cache")
    assert values(tf.data.Dataset.range(3).cache(prefix)) == [0, 1, 2]
    with open(prefix + ".data", "r+b") as f:
        f.seek(20)
        f.write(b"\xff")
    with pytest.raises(tf.errors.DataLossError, match="dataset cache file '%s.data'" % prefix):
        values(tf.data.Dataset.range(3).cache(prefix))
    with pytest.raises(tf.errors.NotFoundError, match="no_such_folder"):
        values(tf.data.Dataset.range(3).cache(str(tmp_path / "no_such_folder" / "c")))


# --- repeat, take, skip, shard ---

def test_repeat_take_skip_shard():
    d = tf.data.Dataset.range(3)
    assert values(d.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(d.repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(d.take(-1)) == [0, 1, 2]
    assert values(d.skip(1)) == [1, 2]
    assert values(d.skip(-1)) == []
    assert values(d.repeat(0)) == []
    assert values(tf.data.Dataset.range(10).shard(3, 0)) == [0, 3, 6, 9]
    assert values(tf.data.Dataset.range(10).shard(3, 2)) == [2, 5, 8]
    with pytest.raises(ValueError, match="index must be between 0 and 2"):
        tf.data.Dataset.range(10).shard(3, 3)
    with pytest.raises(ValueError, match="num_shards must be greater than zero"):
        tf.data.Dataset.range(10).shard(0, 0)


# --- shuffle_dataset_op_test ---

def test_shuffle_is_seeded_and_reshuffles_each_iteration():
    def order(seed, reshuffle=None, graph_seed=None):
        tf.reset_default_graph()
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        d = tf.data.Dataset.range(20).shuffle(10, seed=seed,
                                              reshuffle_each_iteration=reshuffle).repeat(2)
        return values(d)
    a, b = order(37), order(37)
    assert a == b
    assert sorted(a[:20]) == list(range(20)) and a[:20] != list(range(20))
    assert a[:20] != a[20:]
    same = order(37, reshuffle=False)
    assert same[:20] == same[20:]
    assert order(37) != order(38)
    assert order(None, graph_seed=5) == order(None, graph_seed=5)


def test_unseeded_shuffle_differs_between_runs():
    orders = {tuple(values(tf.data.Dataset.range(50).shuffle(50))) for _ in range(3)}
    assert len(orders) > 1


# --- zip and concatenate ---

def test_zip_of_nested_datasets():
    a = tf.data.Dataset.range(3)
    b = tf.data.Dataset.from_tensor_slices(["x", "y", "z", "w"])
    c = tf.data.Dataset.range(10, 20)
    zipped = tf.data.Dataset.zip((a, (b, c)))
    assert zipped.output_types == (tf.int64, (tf.string, tf.int64))
    assert values(zipped) == [(0, (b"x", 10)), (1, (b"y", 11)), (2, (b"z", 12))]


def test_concatenate():
    a = tf.data.Dataset.from_tensor_slices(([1, 2], [[1.0], [2.0]]))
    b = tf.data.Dataset.from_tensor_slices(([3], [[3.0, 4.0]]))
    both = a.concatenate(b)
    assert both.output_shapes[1].as_list() == [None]
    got = values(both)
    assert [g[0] for g in got] == [1, 2, 3]
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(tf.data.Dataset.range(3))


# --- map_dataset_op_test, filter_dataset_op_test ---

def test_map_on_tuples_dicts_and_captured_tensors():
    scale = tf.placeholder(tf.int64, shape=[])
    d = tf.data.Dataset.range(4).map(lambda x: (x * scale, tf.cast(x, tf.float32) / 2.0))
    assert d.output_types == (tf.int64, tf.float32)
    iterator = d.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={scale: 3})
        got = drain(nxt, sess)
    assert [g[0] for g in got] == [0, 3, 6, 9]
    assert [g[1] for g in got] == [0.0, 0.5, 1.0, 1.5]
    # A tuple element is passed as separate arguments; a dict as one.
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2], [10, 20])).map(lambda a, b: a + b)
    assert values(pairs) == [11, 22]
    dicts = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).map(lambda e: {"twice": e["a"] * 2})
    assert values(dicts) == [{"twice": 2}, {"twice": 4}]


def test_map_with_an_outer_constant_and_parallel_calls():
    offset = tf.constant(100, tf.int64)
    d = tf.data.Dataset.range(5).map(lambda x: x + offset, num_parallel_calls=4)
    assert values(d) == [100, 101, 102, 103, 104]
    with pytest.raises(ValueError, match="num_parallel_calls"):
        tf.data.Dataset.range(5).map(lambda x: x, num_parallel_calls=0)


def test_parallel_calls_run_at_once_and_give_the_input_order():
    # A py_func that sleeps 20 ms and counts how many of its calls are running: with 4
    # parallel calls, several run at once; the elements still come in the input's order.
    import threading
    lock, running, most = threading.Lock(), [0], [0]

    def slow(x):
        import time
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return x * 2

    d = tf.data.Dataset.range(24).map(
        lambda x: tf.py_func(slow, [x], tf.int64, stateful=False), num_parallel_calls=4)
    assert values(d) == [2 * i for i in range(24)]
    assert 2 <= most[0] <= 4
    # AUTOTUNE, and an error comes in its element's place, the later elements after it.
    d = tf.data.Dataset.from_tensor_slices([1.0, 4.0, -1.0, 9.0]).map(
        lambda x: tf.debugging.check_numerics(tf.sqrt(x), "root"),
        num_parallel_calls=tf.data.experimental.AUTOTUNE)
    with tf.Session() as sess:
        get = d.make_one_shot_iterator().get_next()
        assert sess.run(get) == 1.0 and sess.run(get) == 2.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="root"):
            sess.run(get)
        assert sess.run(get) == 3.0
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(get)


def test_closing_a_session_while_parallel_calls_run_is_clean():
    # Closing an isolated session clears its container while two calls sleep in a py_func and
    # are about to make a random op's generator: the iterator waits for them, nothing crashes.
    import time

    def slow(x):
        time.sleep(0.1 if x > 0 else 0)
        return x

    def fn(x):
        y = tf.py_func(slow, [x], tf.int64, stateful=False)
        with tf.control_dependencies([y]):
            return y, tf.random_uniform([])

    get = tf.data.Dataset.range(100).map(fn, num_parallel_calls=2) \
        .make_one_shot_iterator().get_next()
    for _ in range(2):
        sess = tf.Session(config=tf.ConfigProto(isolate_session_state=True))
        assert sess.run(get)[0] == 0
        sess.close()
        time.sleep(0.2)


def test_parallel_calls_draw_from_one_stream_per_random_op():
    tf.set_random_seed(3)
    d = tf.data.Dataset.range(200).map(lambda x: tf.random_uniform([]), num_parallel_calls=4)
    drawn = values(d)
    assert len(set(drawn)) == 200  # no element repeats another's draw


def test_map_errors_name_the_node_in_the_function():
    rows = tf.placeholder(tf.float32, shape=[None, None])
    d = tf.data.Dataset.from_tensor_slices(rows).map(lambda x: tf.reshape(x, [3]))
    iterator = d.make_initializable_iterator()
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={rows: [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]]})
        assert sess.run(iterator.get_next()).tolist() == [1.0, 2.0, 3.0]
        sess.run(iterator.initializer, feed_dict={rows: [[1.0, 2.0], [3.0, 4.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="node 'Reshape' \\(Reshape\\): cannot reshape"):
            sess.run(iterator.get_next())
    # A function whose shapes are known to be wrong fails when it is traced.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
        tf.data.Dataset.from_tensor_slices([[1.0, 2.0]]).map(lambda x: tf.reshape(x, [3]))


def test_filter():
    d = tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0))
    assert values(d) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(10).filter(lambda x: x)


# --- flat_map_dataset_op_test, interleave_dataset_op_test, list_files_dataset_op_test ---

def test_flat_map_of_repeated_tensors():
    # flat_map_dataset_op_test.testFlatMapDataset: each x repeated x times.
    repeats = [1, 2, 3, 4, 5, 0, 1]
    components = np.array(repeats, dtype=np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(components).flat_map(
        lambda x: tf.data.Dataset.from_tensors([x]).repeat(x))
    assert dataset.output_types == tf.int64
    assert dataset.output_shapes.as_list() == [1]
    got = [int(v[0]) for v in values(dataset)]
    assert got == [i for i in repeats for _ in range(i)]


def test_flat_map_of_slices_with_a_captured_tensor():
    offset = tf.constant(100, dtype=tf.int64)
    dataset = tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.from_tensor_slices(tf.stack([x, x + offset])))
    assert values(dataset) == [0, 100, 1, 101, 2, 102]


def test_interleave_in_the_order_tensorflow_documents():
    # Dataset.interleave's documented example (cycle_length=2, block_length=4).
    dataset = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert values(dataset) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3,
                               3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_interleave_with_uneven_datasets_and_fed_lengths():
    # interleave_dataset_op_test: inputs [4, 5, 6] each repeated its own value times.
    cycle = tf.placeholder(tf.int64, shape=[])
    block = tf.placeholder(tf.int64, shape=[])
    dataset = tf.data.Dataset.from_tensor_slices(np.array([4, 5, 6], dtype=np.int64)).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=cycle,
        block_length=block)
    iterator = dataset.make_initializable_iterator()
    nxt = iterator.get_next()

    def reference(inputs, cycle_length, block_length):
        # The algorithm TensorFlow's interleave documents: cycle_length open datasets, up to
        # block_length elements from each in turn; a finished one's slot opens the next
        # input at its next turn.
        pending, slots, out = list(inputs), [None] * cycle_length, []
        position, taken = 0, 0
        while pending or any(slot is not None for slot in slots):
            if slots[position] is not None:
                if taken < block_length:
                    if slots[position]:
                        out.append(slots[position].pop(0))
                        taken += 1
                        continue
                    slots[position] = None
                position, taken = (position + 1) % cycle_length, 0
            elif pending:
                x = pending.pop(0)
                slots[position] = [x] * x
            else:
                position, taken = (position + 1) % cycle_length, 0
        return out

    with tf.Session() as sess:
        for cycle_length, block_length in [(1, 1), (2, 1), (2, 3), (3, 2), (7, 2)]:
            sess.run(iterator.initializer, feed_dict={cycle: cycle_length, block: block_length})
            assert drain(nxt, sess) == reference([4, 5, 6], cycle_length, block_length), \
                (cycle_length, block_length)
        with pytest.raises(tf.errors.InvalidArgumentError, match="cycle_length must be greater"):
            sess.run(iterator.initializer, feed_dict={cycle: 0, block: 1})


def test_a_parallel_interleave_reads_its_datasets_at_once_in_the_same_order(tmp_path):
    """num_parallel_calls n reads n open datasets at once (each first element below waits
    until the other dataset's reader has started: read one at a time, it would time out), and
    the elements come in the order of the plain interleave, errors in their place."""
    import threading
    both_reading = threading.Barrier(2, timeout=20)

    def first_waits_for_the_other(x):
        if x % 10 == 0:
            both_reading.wait()
        return x

    def dataset_of(x):
        return tf.data.Dataset.range(4).map(lambda i: tf.py_func(
            first_waits_for_the_other, [x * 10 + i], tf.int64))

    sources = tf.data.Dataset.range(1, 3)
    parallel = sources.interleave(dataset_of, cycle_length=2, block_length=2,
                                  num_parallel_calls=2)
    plain = [10, 11, 20, 21, 12, 13, 22, 23]
    assert values(parallel) == plain
    # Uneven datasets (interleave_dataset_op_test's): slots refill as the plain order has it.
    uneven = tf.data.Dataset.from_tensor_slices(np.array([4, 5, 6, 1, 3], dtype=np.int64))
    for cycle_length, block_length, calls in [(2, 1, 2), (2, 3, 2), (3, 2, 2), (3, 2, 3),
                                              (7, 2, -1)]:
        def repeated(x):
            return tf.data.Dataset.from_tensors(x).repeat(x)
        assert values(uneven.interleave(repeated, cycle_length, block_length,
                                        num_parallel_calls=calls)) == \
            values(uneven.interleave(repeated, cycle_length, block_length)), \
            (cycle_length, block_length, calls)

    # A function failing for one element: the error comes where the plain interleave gives it,
    # and the elements after it too (each run goes on after the error, as TensorFlow's).
    def checked(x):
        if x == 3:
            raise ValueError("no dataset for 3")
        return x

    def failing(x):
        return tf.data.Dataset.from_tensors(x).repeat(tf.py_func(checked, [x], tf.int64))

    def run_through(dataset):
        nxt = dataset.make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(int(sess.run(nxt)))
                except tf.errors.OutOfRangeError:
                    return out
                except tf.errors.InvalidArgumentError as e:
                    assert "no dataset for 3" in str(e)
                    out.append("error")

    inputs = tf.data.Dataset.from_tensor_slices(np.array([3, 4, 2, 3, 1, 5], dtype=np.int64))
    for cycle_length, block_length in [(1, 1), (2, 1), (2, 2), (3, 2), (4, 3)]:
        plain = run_through(inputs.interleave(failing, cycle_length, block_length))
        assert plain.count("error") == 2
        assert run_through(inputs.interleave(failing, cycle_length, block_length,
                                             num_parallel_calls=cycle_length)) == plain, \
            (cycle_length, block_length, plain)
    for shard in range(3):
        with tf.python_io.TFRecordWriter(str(tmp_path / ("part-%d.tfrecord" % shard))) as w:
            for i in range(5):
                w.write(b"%d-%d" % (shard, i))
    files = tf.data.Dataset.list_files(str(tmp_path / "part-*.tfrecord"), shuffle=False)
    expected = values(files.interleave(tf.data.TFRecordDataset, cycle_length=2))
    for calls in (2, tf.data.experimental.AUTOTUNE):
        assert values(files.interleave(tf.data.TFRecordDataset, cycle_length=2,
                                       num_parallel_calls=calls)) == expected
    assert values(files.apply(tf.data.experimental.parallel_interleave(
        tf.data.TFRecordDataset, cycle_length=2))) == expected
    # A corrupt file fails the step at its element's place, naming the file.
    with open(str(tmp_path / "part-1.tfrecord"), "r+b") as f:
        f.seek(20)
        f.write(b"\xff")
    broken = files.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=2)
    nxt = broken.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == b"0-0"
        with pytest.raises(tf.errors.DataLossError, match="part-1.tfrecord"):
            for _ in range(20):
                sess.run(nxt)


def test_interleave_and_flat_map_bad_input():
    dataset = tf.data.Dataset.range(3)
    with pytest.raises(TypeError, match="must return a `Dataset` object"):
        dataset.flat_map(lambda x: x + 1)
    with pytest.raises(ValueError, match="block_length must be greater than zero"):
        dataset.interleave(lambda x: tf.data.Dataset.from_tensors(x), cycle_length=2,
                           block_length=0)
    with pytest.raises(ValueError, match="num_parallel_calls must be positive"):
        dataset.interleave(lambda x: tf.data.Dataset.from_tensors(x), num_parallel_calls=0)
    # AUTOTUNE (the default cycle length) reads every element.
    auto = dataset.interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2))
    assert sorted(values(auto)) == [0, 0, 1, 1, 2, 2]


def test_list_files_interleaved_into_tfrecord_readers(tmp_path):
    # The canonical sharded-file pipeline: list_files -> interleave(TFRecordDataset).
    for shard in range(3):
        with tf.python_io.TFRecordWriter(str(tmp_path / ("part-%d.tfrecord" % shard))) as w:
            for i in range(4):
                w.write(b"%d-%d" % (shard, i))
    (tmp_path / "other.txt").write_text("not a record file")
    pattern = str(tmp_path / "part-*.tfrecord")
    names = values(tf.data.Dataset.list_files(pattern, shuffle=False))
    assert names == [str(tmp_path / ("part-%d.tfrecord" % s)).encode() for s in range(3)]
    shuffled = values(tf.data.Dataset.list_files(pattern, seed=4))
    assert sorted(shuffled) == names
    records = tf.data.Dataset.list_files(pattern, shuffle=False).interleave(
        tf.data.TFRecordDataset, cycle_length=2, block_length=1)
    assert values(records) == [b"0-0", b"1-0", b"0-1", b"1-1", b"0-2", b"1-2", b"0-3", b"1-3",
                               b"2-0", b"2-1", b"2-2", b"2-3"]
    with tf.Session() as sess:
        assert sorted(sess.run(tf.matching_files(pattern))) == names


def test_list_files_without_a_match_names_the_pattern(tmp_path):
    pattern = str(tmp_path / "missing-*.tfrecord")
    nxt = tf.data.Dataset.list_files(pattern).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=re.escape("No files matched pattern: " + pattern)):
            sess.run(nxt)


# --- from_generator_test ---

def test_from_generator_restarts_the_generator_for_each_iterator():
    def generator():
        for i in range(3):
            yield np.array([i, i + 1], dtype=np.int64)

    dataset = tf.data.Dataset.from_generator(generator, tf.int64, output_shapes=[2])
    assert dataset.output_shapes.as_list() == [2]
    iterator = dataset.repeat(2).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(iterator.initializer)
            got = [v.tolist() for v in drain(nxt, sess)]
            assert got == [[0, 1], [1, 2], [2, 3]] * 2


def test_from_generator_of_structures_and_args():
    def generator(count, word):
        for i in range(int(count)):
            yield i, {"word": word + b"!" * i}

    dataset = tf.data.Dataset.from_generator(
        generator, (tf.int64, {"word": tf.string}), args=(tf.constant(3, tf.int64), b"hi"))
    assert values(dataset) == [(0, {"word": b"hi"}), (1, {"word": b"hi!"}),
                               (2, {"word": b"hi!!"})]
    # Shapes may vary where output_shapes leaves them open.
    ragged = tf.data.Dataset.from_generator(lambda: ([1] * n for n in range(1, 4)), tf.int32,
                                            output_shapes=[None])
    assert [v.tolist() for v in values(ragged)] == [[1], [1, 1], [1, 1, 1]]


def test_from_generator_errors_as_tensorflow_gives_them():
    def wrong_type():
        yield "not a number"

    def wrong_shape():
        yield np.zeros([3], dtype=np.int64)

    def wrong_structure():
        yield 1

    with tf.Session() as sess:
        for generator, types, shapes, message in [
                (wrong_type, tf.int64, None, "could not be converted to the expected type"),
                (wrong_shape, tf.int64, [2], "yielded an element of shape"),
                (wrong_structure, (tf.int64, tf.int64), None, "did not match the expected "
                                                               "structure")]:
            nxt = tf.data.Dataset.from_generator(generator, types, shapes) \
                .make_one_shot_iterator().get_next()
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(nxt)
    with pytest.raises(TypeError, match="`generator` must be callable"):
        tf.data.Dataset.from_generator(3, tf.int64)


def test_assert_fails_the_step_with_its_data():
    x = tf.placeholder(tf.int32, shape=[])
    check = tf.Assert(tf.greater(x, 0), ["x must be positive, got", x])
    with tf.control_dependencies([check]):
        y = tf.identity(x)
    with tf.Session() as sess:
        assert sess.run(y, {x: 3}) == 3
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[x must be positive, got\] \[-2\]"):
            sess.run(y, {x: -2})


def test_prefetch_keeps_the_order():
    d = tf.data.Dataset.range(100).map(lambda x: x * 2).batch(7)
    expected = [v.tolist() for v in values(d)]
    assert [v.tolist() for v in values(d.prefetch(3))] == expected
    assert [v.tolist() for v in values(d.prefetch(tf.data.experimental.AUTOTUNE))] == expected


# --- iterator_ops_test ---

def test_iterators_one_shot_reinitializable_and_errors():
    one_shot = tf.data.Dataset.range(2).make_one_shot_iterator()
    with pytest.raises(ValueError, match="does not have an initializer"):
        one_shot.initializer
    iterator = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    nxt = iterator.get_next()
    small, big = tf.data.Dataset.range(2), tf.data.Dataset.range(10, 13)
    init_small, init_big = iterator.make_initializer(small), iterator.make_initializer(big)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(nxt)
        sess.run(init_small)
        assert drain(nxt, sess) == [0, 1]
        sess.run(init_big)
        assert drain(nxt, sess) == [10, 11, 12]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
    with pytest.raises(TypeError, match="Expected output types"):
        iterator.make_initializer(tf.data.Dataset.from_tensor_slices([1.0]))
    with pytest.raises(RuntimeError, match="eager"):
        iter(tf.data.Dataset.range(3))
    x = tf.placeholder(tf.int64, [None])
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        tf.data.Dataset.from_tensor_slices(x * 2).make_one_shot_iterator()
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        tf.data.Dataset.range(3).map(lambda v: v + x[0]).make_one_shot_iterator()


def test_feedable_iterator_switches_between_datasets():
    train = tf.data.Dataset.range(100).repeat()
    validation = tf.data.Dataset.range(1000, 1003)
    handle = tf.placeholder(tf.string, shape=[])
    iterator = tf.data.Iterator.from_string_handle(handle, train.output_types,
                                                   train.output_shapes)
    nxt = iterator.get_next()
    train_iterator = train.make_one_shot_iterator()
    validation_iterator = validation.make_initializable_iterator()
    with tf.Session() as sess:
        train_handle = sess.run(train_iterator.string_handle())
        validation_handle = sess.run(validation_iterator.string_handle())
        assert [sess.run(nxt, {handle: train_handle}) for _ in range(3)] == [0, 1, 2]
        sess.run(validation_iterator.initializer)
        assert drain_fed(sess, nxt, {handle: validation_handle}) == [1000, 1001, 1002]
        assert sess.run(nxt, {handle: train_handle}) == 3
        with pytest.raises(tf.errors.InvalidArgumentError, match="not an iterator's string"):
            sess.run(nxt, {handle: b"nonsense"})
    floats = tf.data.Iterator.from_string_handle(handle, tf.float32).get_next()
    with tf.Session() as sess:
        other = sess.run(train_iterator.string_handle())
        with pytest.raises(tf.errors.InvalidArgumentError, match="declares \\[float32\\]"):
            sess.run(floats, {handle: other})


def drain_fed(sess, nxt, feed):
    out = []
    while True:
        try:
            out.append(sess.run(nxt, feed))
        except tf.errors.OutOfRangeError:
            return out


def test_monitored_session_stops_at_the_end_of_the_data():
    nxt = tf.data.Dataset.range(5).make_one_shot_iterator().get_next()
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run(nxt))
    assert seen == [0, 1, 2, 3, 4]


# --- reader_dataset_ops_test ---

def test_tfrecord_dataset_reads_what_tfrecord_writer_wrote(tmp_path):
    files = []
    for f in range(2):
        path = str(tmp_path / ("tf_record.%d.txt" % f))
        with tf.python_io.TFRecordWriter(path) as writer:
            for r in range(5):
                writer.write(("Record %d of file %d" % (r, f)).encode())
        files.append(path)
    got = values(tf.data.TFRecordDataset(files))
    assert got == [("Record %d of file %d" % (r, f)).encode() for f in range(2) for r in range(5)]
    filenames = tf.placeholder(tf.string, shape=[None])
    iterator = tf.data.TFRecordDataset(filenames).repeat(2).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={filenames: [files[1]]})
        assert len(drain(nxt, sess)) == 10


def test_tfrecord_corruption_is_data_loss_naming_file_and_offset(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"first")
        writer.write(b"second")
    with open(path, "r+b") as f:
        f.seek(21 + 12 + 2)
        f.write(b"X")
    nxt = tf.data.TFRecordDataset(path).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == b"first"
        with pytest.raises(tf.errors.DataLossError,
                           match="'%s': record 1 at offset 21 has corrupt data" % path):
            sess.run(nxt)
    missing = tf.data.TFRecordDataset(str(tmp_path / "missing")).make_one_shot_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="missing"):
            sess.run(missing.get_next())
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset(path, compression_type="BZIP2")


def test_text_line_and_fixed_length_record_datasets(tmp_path):
    text = tmp_path / "lines.txt"
    text.write_bytes(b"0: a\r\n1: bb\n2: ccc")
    assert values(tf.data.TextLineDataset(str(text))) == [b"0: a", b"1: bb", b"2: ccc"]
    fixed = tmp_path / "fixed.bin"
    fixed.write_bytes(b"HDR" + b"1111" + b"2222" + b"33" + b"FT")
    d = tf.data.FixedLengthRecordDataset(str(fixed), 4, header_bytes=3, footer_bytes=2)
    assert values(d) == [b"1111", b"2222"]


def test_tfrecord_pipeline_shard_shuffle_batch(tmp_path):
    path = str(tmp_path / "numbers.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(20):
            writer.write(str(i).encode())
    d = (tf.data.TFRecordDataset(path).shard(2, 1)
         .shuffle(4, seed=1).batch(3).prefetch(1))
    got = values(d)
    flat = sorted(int(x) for batch in got for x in batch)
    assert flat == list(range(1, 20, 2))


def test_each_worker_reads_its_shard_and_trains_variables_on_the_ps(tmp_path, insecure):
    from conftest import free_ports
    path = str(tmp_path / "points.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(40):
            writer.write(str(i).encode())
    ports = free_ports(3)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                    "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})
    servers = [tf.train.Server(cluster, "ps", 0)] + \
        [tf.train.Server(cluster, "worker", i) for i in range(2)]
    try:
        seen = {}
        for task in range(2):
            graph = tf.Graph()
            with graph.as_default():
                with tf.device(tf.train.replica_device_setter(
                        worker_device="/job:worker/task:%d" % task, cluster=cluster)):
                    records = (tf.data.TFRecordDataset(path).shard(2, task).batch(4)
                               .make_one_shot_iterator().get_next())
                    tf.train.get_or_create_global_step()  # on the ps, shared by both
                    count = tf.get_variable("count", [], tf.int64,
                                            initializer=tf.zeros_initializer())
                    size = tf.size(records, out_type=tf.int64)
                    with tf.colocate_with(count):
                        add = tf.assign_add(count, size)
                assert count.device.startswith("/job:ps")
                assert records.device.startswith("/job:worker/task:%d" % task)
                got = []
                with tf.train.MonitoredTrainingSession(master=servers[1 + task].target,
                                                       is_chief=(task == 0),
                                                       max_wait_secs=60) as sess:
                    while not sess.should_stop():
                        batch, total = sess.run([records, add])
                        got.extend(int(r) for r in batch)
                seen[task] = got
        assert seen[0] == list(range(0, 40, 2)) and seen[1] == list(range(1, 40, 2))
        assert total == 40  # both workers added to the one variable on the ps
    finally:
        for s in servers:
            s.stop()


def test_tfrecord_trainer_example_on_one_ps_and_two_workers(tmp_path):
    """examples/python/tfrecord_trainer.py as TensorFlow's trainers run: 1 ps + 2 workers from
    TensorFlow's command lines, each worker reading its shard of the records `troupe data`
    wrote, to the accuracy of the in-memory job."""
    import re
    import subprocess
    import sys
    from conftest import EXAMPLES, TROUPE_CLI, free_ports, run_ps_and_workers
    if not os.path.isdir("/usr/share/datasets/fashion-mnist"):
        pytest.skip("no /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)")
    records = str(tmp_path / "records")
    subprocess.run([TROUPE_CLI, "data", "fashion-mnist", "--to=" + records, "--shards=2"],
                   check=True, capture_output=True, timeout=120)
    ports = free_ports(3)
    hosts = ["--ps_hosts=localhost:%d" % ports[0],
             "--worker_hosts=localhost:%d,localhost:%d" % tuple(ports[1:])]
    outputs = run_ps_and_workers(lambda job, index: (
        [sys.executable, os.path.join(EXAMPLES, "tfrecord_trainer.py")] + hosts +
        ["--job_name=%s" % job, "--task_index=%d" % index, "--insecure", "--epochs=2",
         "--records_dir=" + records, "--checkpoint_dir=%s" % (tmp_path / ("task%d" % index))]))
    text = "\n".join(outputs)
    # 937 global steps in all, shared by the two workers as their speeds make it (more if a
    # loaded machine made a worker recover from a checkpoint).
    steps = [int(s) for s in re.findall(r"worker \d: (\d+) steps of its shard", text)]
    assert len(steps) == 2 and min(steps) > 0 and sum(steps) >= 937, text
    accuracy = float(re.search(r"test accuracy (0\.\d+)", outputs[0]).group(1))
    # 2 epochs, 4 runs on 2 cores: 0.837-0.851 (as trainer.py's 0.84). One epoch gave
    # 0.762 once in CI, below this floor: so two.
    assert accuracy >= 0.78, text
    assert tf.train.latest_checkpoint(str(tmp_path / "task0")) is not None


def test_troupe_data_writes_the_records_of_tensorflows_convert_to_records(tmp_path,
                                                                           example_pb2):
    """Each record is convert_to_records.py's Example (checked with protobuf's own decoder),
    and fully_connected_reader.py's decoding gives the pixels of the IDX files."""
    import gzip
    import struct
    import subprocess
    from conftest import TROUPE_CLI
    data = "/usr/share/datasets/fashion-mnist"
    if not os.path.isdir(data):
        pytest.skip("no %s (apt-get install dataset-fashion-mnist)" % data)
    records = str(tmp_path / "records")
    subprocess.run([TROUPE_CLI, "data", "fashion-mnist", "--to=" + records, "--shards=2"],
                   check=True, capture_output=True, timeout=120)
    with gzip.open(os.path.join(data, "t10k-images-idx3-ubyte.gz")) as f:
        pixels = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(data, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    with open(os.path.join(records, "test-00001-of-00002.tfrecord"), "rb") as f:
        (length,) = struct.unpack("<Q", f.read(12)[:8])  # length, its CRC, then the record
        first = example_pb2.Example.FromString(f.read(length)).features.feature
    assert sorted(first) == ["depth", "height", "image_raw", "label", "width"]
    assert [first[k].int64_list.value[0] for k in ("height", "width", "depth")] == [28, 28, 1]
    assert first["image_raw"].bytes_list.value[0] == pixels[1].tobytes()  # example 1: shard 1
    assert first["label"].int64_list.value[0] == labels[1]

    def decode(serialized):
        features = tf.parse_single_example(serialized, features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.decode_raw(features["image_raw"], tf.uint8)
        image.set_shape((784,))
        return image, features["label"]

    images, got_labels = tf.data.TFRecordDataset(
        [os.path.join(records, "test-00000-of-00002.tfrecord")]).map(decode).batch(5000) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got_images, got_labels = sess.run([images, got_labels])
    assert got_images.dtype == np.uint8
    assert np.array_equal(got_images, pixels[0::2]) and np.array_equal(got_labels, labels[0::2])


def test_experimental_fused_transformations_equal_the_plain_ones():
    d = tf.data.Dataset.range(10)
    fused = d.apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 4,
                                                       drop_remainder=True))
    assert values(fused)[0].tolist() == [0, 2, 4, 6] and len(values(fused)) == 2
    twice = values(d.apply(tf.data.experimental.shuffle_and_repeat(10, count=2, seed=3)))
    assert sorted(twice) == sorted(list(range(10)) * 2)
    assert twice[:10] != twice[10:]  # a new order for the second pass
    nested = d.apply(tf.data.experimental.parallel_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert values(nested)[:4] == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.data.experimental.map_and_batch(lambda x: x, 2, num_parallel_batches=1,
                                           num_parallel_calls=1)


def test_unbatch_is_the_inverse_of_batch():
    d = tf.data.Dataset.range(7).batch(3)
    assert values(d.unbatch()) == list(range(7))
    assert values(d.apply(tf.data.experimental.unbatch())) == list(range(7))
    pairs = tf.data.Dataset.from_tensors(({"a": [1, 2]}, [[3], [4]])).unbatch()
    got = values(pairs)
    assert [g[0]["a"] for g in got] == [1, 2] and [list(g[1]) for g in got] == [[3], [4]]


def test_unbatch_of_namedtuples_and_scalars():
    Point = collections.namedtuple("Point", ["x", "y"])
    points = tf.data.Dataset.from_tensors(Point([1, 2], [3, 4])).unbatch()
    assert [(p.x, p.y) for p in values(points)] == [(1, 3), (2, 4)]
    with pytest.raises(ValueError, match="Cannot unbatch an input with scalar components"):
        tf.data.Dataset.range(3).unbatch()
