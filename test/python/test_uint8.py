"""tf.uint8 as TensorFlow 1.x programs use it: images and raw bytes that are fed, decoded,
moved, stored and cast to float before any arithmetic (TensorFlow's own reading_data
examples: decode_raw(image_raw, tf.uint8), then tf.cast(image, tf.float32) * (1. / 255))."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

import troupe as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_the_dtype_is_tensorflows():
    assert tf.uint8.name == "uint8"
    assert tf.uint8.as_numpy_dtype is np.uint8
    assert tf.uint8.is_integer and not tf.uint8.is_floating
    assert (tf.uint8.min, tf.uint8.max, tf.uint8.size) == (0, 255, 1)
    assert tf.as_dtype(np.uint8) == tf.uint8 and tf.as_dtype("uint8") is tf.uint8
    assert tf.dtypes.uint8 is tf.uint8
    with pytest.raises(TypeError, match="uint16"):
        tf.as_dtype(np.uint16)


def test_constants_and_feeds_keep_their_bytes():
    pixels = np.array([[0, 1, 127], [128, 254, 255]], dtype=np.uint8)
    c = tf.constant(pixels)
    assert c.dtype == tf.uint8 and c.shape.as_list() == [2, 3]
    p = tf.placeholder(tf.uint8, [None, 3])
    got_c, got_p = run([c, tf.identity(p)], {p: pixels[::-1]})
    assert got_c.dtype == np.uint8 and np.array_equal(got_c, pixels)
    assert got_p.dtype == np.uint8 and np.array_equal(got_p, pixels[::-1])
    assert run(tf.constant(200, dtype=tf.uint8)) == 200
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.uint8)


def test_cast_to_and_from_uint8_converts_as_cpp_does():
    pixels = np.array([0, 3, 128, 255], dtype=np.uint8)
    as_float = tf.cast(tf.constant(pixels), tf.float32) * (1. / 255)
    assert as_float.dtype == tf.float32
    np.testing.assert_allclose(run(as_float), pixels / 255.0, rtol=1e-6)
    back = tf.cast(tf.constant([0.0, 2.9, 255.0], tf.float32), tf.uint8)
    assert back.dtype == tf.uint8 and run(back).tolist() == [0, 2, 255]
    ints = run([tf.cast(tf.constant(pixels), tf.int32), tf.cast(tf.constant(pixels), tf.int64),
                tf.cast(tf.constant(pixels), tf.bool), tf.to_float(tf.constant(pixels))])
    assert ints[0].tolist() == [0, 3, 128, 255] and ints[1].dtype == np.int64
    assert ints[2].tolist() == [False, True, True, True]
    assert ints[3].tolist() == [0.0, 3.0, 128.0, 255.0]
    # Python 3 division of uint8 goes through float32, as TensorFlow's truediv table says.
    half = tf.constant(pixels) / tf.constant(np.full(4, 2, np.uint8))
    assert half.dtype == tf.float32 and run(half).tolist() == [0.0, 1.5, 64.0, 127.5]


def test_decode_raw_reads_bytes_as_uint8():
    raw = tf.constant([bytes([1, 2, 3, 250]), bytes([0, 0, 255, 7])])
    decoded = tf.decode_raw(raw, tf.uint8)
    assert decoded.dtype == tf.uint8 and decoded.shape.as_list() == [2, None]
    assert run(decoded).tolist() == [[1, 2, 3, 250], [0, 0, 255, 7]]
    assert run(tf.io.decode_raw(tf.constant(b""), tf.uint8)).shape == (0,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        run(tf.decode_raw(tf.constant([b"ab", b"c"]), tf.uint8))


def test_data_movement_ops_carry_uint8_as_numpy_does():
    rng = np.random.RandomState(3)
    a = rng.randint(0, 256, size=(2, 3, 4)).astype(np.uint8)
    b = rng.randint(0, 256, size=(2, 3, 4)).astype(np.uint8)
    x, y = tf.constant(a), tf.constant(b)
    cases = {
        "reshape": (tf.reshape(x, [6, 4]), a.reshape(6, 4)),
        "transpose": (tf.transpose(x, [2, 0, 1]), a.transpose(2, 0, 1)),
        "concat": (tf.concat([x, y], axis=1), np.concatenate([a, b], axis=1)),
        "stack": (tf.stack([x, y]), np.stack([a, b])),
        "unstack": (tf.unstack(x, axis=1)[2], a[:, 2]),
        "slice": (x[1:, ::2, tf.newaxis, 1], a[1:, ::2, np.newaxis, 1]),
        "gather": (tf.gather(x, [1, 0, 1]), a[[1, 0, 1]]),
        "gather_nd": (tf.gather_nd(x, [[0, 2], [1, 1]]), a[[0, 1], [2, 1]]),
        "tile": (tf.tile(x, [1, 2, 1]), np.tile(a, (1, 2, 1))),
        "pad": (tf.pad(x, [[0, 0], [1, 0], [0, 2]]), np.pad(a, [(0, 0), (1, 0), (0, 2)])),
        "reverse": (tf.reverse(x, [2]), a[:, :, ::-1]),
        "expand_squeeze": (tf.squeeze(tf.expand_dims(x, 0), [0]), a),
        "split": (tf.split(x, 2, axis=2)[1], a[:, :, 2:]),
        "where": (tf.where(tf.constant(a > b), x, y), np.where(a > b, a, b)),
        "fill": (tf.fill([2, 2], tf.constant(9, tf.uint8)), np.full((2, 2), 9, np.uint8)),
        "shape": (tf.shape(x), np.array([2, 3, 4], np.int32)),
    }
    names = sorted(cases)
    got = run([cases[n][0] for n in names])
    for name, value in zip(names, got):
        want = cases[name][1]
        assert value.dtype == want.dtype, name
        assert np.array_equal(value, want), name


def test_arithmetic_and_comparisons_on_uint8_wrap_as_tensorflows_cpu_kernels():
    """Add, Sub, Mul, Div, FloorDiv and the comparisons take uint8, as TensorFlow 1.x's CPU
    kernels do: results wrap modulo 256 (as numpy's), division by zero is an error."""
    a = np.array([250, 7, 0, 255, 128], np.uint8)
    b = np.array([10, 255, 3, 2, 128], np.uint8)
    x, y = tf.constant(a), tf.constant(b)
    with np.errstate(over="ignore"):
        cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (tf.div(x, y), a // b),
                 (x // y, a // b), (tf.add(x, 6), a + np.uint8(6)),
                 (tf.subtract(np.uint8(3), x), np.uint8(3) - a)]
    for tensor, want in cases:
        assert tensor.dtype == tf.uint8
        got = run(tensor)
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)
    for tensor, want in [(x < y, a < b), (x <= y, a <= b), (x > y, a > b), (x >= y, a >= b),
                         (tf.equal(x, y), a == b), (tf.not_equal(x, y), a != b)]:
        np.testing.assert_array_equal(run(tensor), want)
    assert run(x / y).dtype == np.float32  # truediv casts first, as TensorFlow's
    with pytest.raises(tf.errors.InvalidArgumentError, match="integer division by zero"):
        run(tf.div(x, tf.constant(np.array([1, 1, 0, 1, 1], np.uint8))))


def test_what_tensorflow_has_no_uint8_kernel_for_names_the_op_and_the_types_it_takes():
    x = tf.constant(np.array([1, 2], np.uint8))
    for op, name in [(tf.maximum, "Maximum"), (tf.minimum, "Minimum"), (tf.mod, "FloorMod")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"'T' is uint8, which %s" % name):
            run(op(x, x))


def test_a_uint8_variable_is_saved_and_restored(tmp_path):
    v = tf.Variable(np.array([[5, 250]], np.uint8), name="pixels")
    update = tf.assign(v, tf.constant(np.array([[7, 8]], np.uint8)))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
        sess.run(update)
        assert sess.run(v).tolist() == [[7, 8]]
        saver.restore(sess, path)
        restored = sess.run(v)
    assert restored.dtype == np.uint8 and restored.tolist() == [[5, 250]]
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_dtype_map()["pixels"] == tf.uint8


def test_datasets_and_queues_carry_uint8():
    images = np.arange(24, dtype=np.uint8).reshape(6, 4) * 10
    batch = tf.data.Dataset.from_tensor_slices(images).shuffle(6, seed=1).batch(3) \
        .make_one_shot_iterator().get_next()
    assert batch.dtype == tf.uint8
    queue = tf.FIFOQueue(4, [tf.uint8], shapes=[[4]])
    enqueue = queue.enqueue_many([tf.constant(images[:2])])
    with tf.Session() as sess:
        first, second = sess.run(batch), sess.run(batch)
        sess.run(enqueue)
        dequeued = sess.run(queue.dequeue_many(2))
    assert first.dtype == np.uint8
    assert sorted(np.concatenate([first, second]).tolist()) == sorted(images.tolist())
    assert np.array_equal(dequeued, images[:2])


def test_tensorflows_reading_data_idiom_trains_from_image_raw_records(tmp_path):
    """convert_to_records.py's Examples (image_raw bytes, label) read as
    fully_connected_reader.py reads them."""
    rng = np.random.RandomState(0)
    pixels = rng.randint(0, 256, size=(5, 784)).astype(np.uint8)
    path = str(tmp_path / "train.tfrecords")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i, image in enumerate(pixels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            }))
            writer.write(example.SerializeToString())

    def decode(serialized):
        features = tf.parse_single_example(serialized, features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64)})
        image = tf.decode_raw(features["image_raw"], tf.uint8)
        image.set_shape((784,))
        image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
        return image, tf.cast(features["label"], tf.int32)

    images, labels = tf.data.TFRecordDataset(path).map(decode).batch(5) \
        .make_one_shot_iterator().get_next()
    got_images, got_labels = run([images, labels])
    np.testing.assert_allclose(got_images, pixels * (1. / 255) - 0.5, rtol=1e-6, atol=1e-7)
    assert got_labels.tolist() == [0, 1, 2, 3, 4]


def test_uint8_tensors_cross_processes(insecure):
    from conftest import free_ports
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": ["127.0.0.1:%d" % ps_port], "worker": ["127.0.0.1:%d" % worker_port]}
    env = dict(os.environ, TROUPE_INSECURE="1")
    ps = subprocess.Popen([sys.executable, "-c",
                           "import troupe as tf\n"
                           "tf.train.Server(%r, job_name='ps', task_index=0).join()" % cluster],
                          env=env)
    try:
        worker = tf.train.Server(cluster, job_name="worker", task_index=0)
        pixels = np.arange(256, dtype=np.uint8).reshape(16, 16)
        with tf.device("/job:ps/task:0"):
            stored = tf.Variable(pixels, name="stored")
            doubled_on_ps = tf.cast(stored, tf.int32) * 2
        with tf.device("/job:worker/task:0"):
            fed = tf.placeholder(tf.uint8, [16, 16])
        with tf.device("/job:ps/task:0"):
            echoed = tf.reverse(fed, [1])
        deadline = time.time() + 60
        with tf.Session(worker.target) as sess:
            while True:  # the ps process may still be starting
                try:
                    sess.run(stored.initializer)
                    break
                except tf.errors.UnavailableError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.2)
            got_stored, got_doubled, got_echoed = sess.run(
                [stored, doubled_on_ps, echoed], {fed: pixels})
        worker.stop()
    finally:
        ps.kill()
        ps.wait()
    assert got_stored.dtype == np.uint8 and np.array_equal(got_stored, pixels)
    assert np.array_equal(got_doubled, pixels.astype(np.int32) * 2)
    assert got_echoed.dtype == np.uint8 and np.array_equal(got_echoed, pixels[:, ::-1])


def test_an_image_summary_of_uint8_keeps_its_pixels():
    import struct
    import zlib
    pixels = np.array([[[[0], [9], [255]], [[17], [128], [3]]]], dtype=np.uint8)  # [1, 2, 3, 1]
    summary = tf.Summary.FromString(run(tf.summary.image("digits", tf.constant(pixels))))
    image = summary.value[0].image
    assert (image.height, image.width, image.colorspace) == (2, 3, 1)
    png = image.encoded_image_string
    length = struct.unpack(">I", png[33:37])[0]  # the IDAT chunk after the 33-byte IHDR
    rows = zlib.decompress(png[41:41 + length])
    assert rows == b"\x00" + bytes([0, 9, 255]) + b"\x00" + bytes([17, 128, 3])  # filter 0
