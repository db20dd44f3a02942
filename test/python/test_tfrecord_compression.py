"""Compressed TFRecord and text files (TensorFlow 1.x's tf_record_test and
reader_dataset_ops_test compression cases, ported): TFRecordWriter with TFRecordOptions(ZLIB or
GZIP) writes a file
Python's own zlib and gzip read, and tf_record_iterator, TFRecordDataset(compression_type=)
and TFRecordReader(options=) read it back; files compressed by zlib and gzip themselves read
too; TextLineDataset(compression_type=) reads text files zlib and gzip compressed; a cut or
mismatched stream is DataLossError naming the file."""

import gzip
import zlib

import pytest

import troupe as tf

RECORDS = [b"first", b"x" * 100000, b"", b"last"]
KINDS = [tf.python_io.TFRecordCompressionType.ZLIB, tf.python_io.TFRecordCompressionType.GZIP]
NAMES = {tf.python_io.TFRecordCompressionType.ZLIB: "ZLIB",
         tf.python_io.TFRecordCompressionType.GZIP: "GZIP"}


def write(path, options):
    with tf.python_io.TFRecordWriter(path, options=options) as writer:
        for r in RECORDS:
            writer.write(r)
    return path


def uncompressed(path, tmp_path):
    plain = str(tmp_path / "plain.tfrecord")
    write(plain, None)
    with open(plain, "rb") as f:
        return f.read()


@pytest.mark.parametrize("kind", KINDS, ids=["ZLIB", "GZIP"])
def test_writer_compresses_as_zlib_and_gzip_read_it(tmp_path, kind):
    path = write(str(tmp_path / "data.tfrecord"), tf.python_io.TFRecordOptions(kind))
    with open(path, "rb") as f:
        raw = f.read()
    inflated = gzip.decompress(raw) if kind == KINDS[1] else zlib.decompress(raw)
    assert inflated == uncompressed(path, tmp_path)
    assert len(raw) < len(inflated) / 10


@pytest.mark.parametrize("kind", KINDS, ids=["ZLIB", "GZIP"])
def test_every_reader_reads_a_compressed_file(tmp_path, kind):
    path = write(str(tmp_path / "data.tfrecord"), tf.python_io.TFRecordOptions(NAMES[kind]))
    assert list(tf.python_io.tf_record_iterator(path, tf.python_io.TFRecordOptions(kind))) == \
        RECORDS
    assert tf.python_io.TFRecordOptions.get_compression_type_string(
        tf.python_io.TFRecordOptions(kind)) == NAMES[kind]
    nxt = tf.data.TFRecordDataset([path], compression_type=NAMES[kind]) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run(nxt))
    assert got == RECORDS
    queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    key, value = tf.TFRecordReader(options=tf.python_io.TFRecordOptions(kind)).read(queue)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        first = sess.run([key, value])
        second = sess.run([key, value])
        coord.request_stop()
        coord.join(threads)
    # Keys are offsets in the uncompressed stream.
    assert first == [("%s:0" % path).encode(), b"first"]
    assert second[0] == ("%s:%d" % (path, 16 + len(b"first"))).encode()


def test_files_compressed_by_zlib_and_gzip_themselves_read(tmp_path):
    plain = uncompressed(str(tmp_path / "x"), tmp_path)
    for name, data in (("ZLIB", zlib.compress(plain)),
                       ("GZIP", gzip.compress(plain[:50]) + gzip.compress(plain[50:]))):
        path = str(tmp_path / ("%s.tfrecord" % name))
        with open(path, "wb") as f:
            f.write(data)
        assert list(tf.python_io.tf_record_iterator(path, name)) == RECORDS
        nxt = tf.data.TFRecordDataset(path, compression_type=name) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [sess.run(nxt) for _ in RECORDS] == RECORDS


def test_cut_or_mismatched_streams_are_data_loss(tmp_path):
    path = write(str(tmp_path / "data.tfrecord"), tf.python_io.TFRecordOptions("ZLIB"))
    with open(path, "rb") as f:
        raw = f.read()
    cut = str(tmp_path / "cut.tfrecord")
    with open(cut, "wb") as f:
        f.write(raw[:len(raw) // 2])
    with pytest.raises(tf.errors.DataLossError, match="cut short"):
        list(tf.python_io.tf_record_iterator(cut, "ZLIB"))
    for name, file in (("ZLIB", cut), ("GZIP", path)):
        nxt = tf.data.TFRecordDataset(file, compression_type=name) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DataLossError, match=file):
                for _ in RECORDS:
                    sess.run(nxt)
    with pytest.raises(ValueError, match="Not a valid compression_type"):
        tf.python_io.TFRecordOptions("BZIP2")
    with pytest.raises(ValueError, match="compression_type"):
        tf.data.TFRecordDataset(path, compression_type="BZIP2")
    text = tf.data.TextLineDataset(path, compression_type="GZIP") \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DataLossError, match="text file '%s'.*not a valid GZIP"
                           % path):
            sess.run(text)


def _text_files(tmp_path, compression, crlf=False, num_files=2, num_lines=5):
    """reader_dataset_ops_test's _createFiles: lines "<file>: <line>", CRLF or LF, each file
    compressed by Python's zlib or gzip (or not)."""
    files, expected = [], []
    for i in range(num_files):
        lines = [("%d: %d" % (i, j)).encode() for j in range(num_lines)]
        expected += lines
        data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\r\n" if crlf and i == 0 else b"")
        if compression == "ZLIB":
            data = zlib.compress(data)
        elif compression == "GZIP":
            data = gzip.compress(data)
        path = str(tmp_path / ("text.%d.txt" % i))
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
    return files, expected


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_text_line_dataset_reads_compressed_files(tmp_path, compression, crlf):
    files, expected = _text_files(tmp_path, compression, crlf)
    filenames = tf.placeholder(tf.string, shape=[None])
    num_epochs = tf.placeholder(tf.int64, shape=[])
    iterator = tf.data.TextLineDataset(filenames, compression_type=compression) \
        .repeat(num_epochs).make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        for files_now, lines in ((files[:1], expected[:5]), (files[1:], expected[5:]),
                                 (files, expected + expected)):
            sess.run(iterator.initializer, {filenames: files_now,
                                            num_epochs: 2 if len(files_now) == 2 else 1})
            assert [sess.run(nxt) for _ in lines] == lines
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)


def test_long_compressed_text_files_and_lines_across_pieces(tmp_path):
    """Lines longer than a 64 KiB piece, and more pieces than one, in gzip members."""
    lines = [b"x" * 70000, b"", b"short"] + [b"%06d" % i for i in range(20000)]
    data = b"\n".join(lines) + b"\n"
    path = str(tmp_path / "long.txt.gz")
    with open(path, "wb") as f:
        f.write(gzip.compress(data[:1000]) + gzip.compress(data[1000:]))
    nxt = tf.data.TextLineDataset(path, compression_type="GZIP").batch(30000) \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert list(sess.run(nxt)) == lines
    cut = str(tmp_path / "cut.txt.gz")
    with open(cut, "wb") as f:
        f.write(gzip.compress(data)[:5000])
    nxt = tf.data.TextLineDataset(cut, compression_type="GZIP") \
        .make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DataLossError, match="text file '%s'.*cut short" % cut):
            while True:
                sess.run(nxt)


def test_many_small_gzip_members_and_a_writer_never_closed(tmp_path):
    plain = uncompressed(str(tmp_path / "x"), tmp_path)
    members = b"".join(gzip.compress(plain[i:i + 20]) for i in range(0, len(plain), 20))
    path = str(tmp_path / "members.tfrecord")
    with open(path, "wb") as f:
        f.write(members)
    assert list(tf.python_io.tf_record_iterator(path, "GZIP")) == RECORDS
    unclosed = str(tmp_path / "unclosed.tfrecord")
    writer = tf.python_io.TFRecordWriter(unclosed, tf.python_io.TFRecordOptions("ZLIB"))
    for r in RECORDS:
        writer.write(r)
    del writer  # dropped without close(): the file is still complete, as TensorFlow's
    assert list(tf.python_io.tf_record_iterator(unclosed, "ZLIB")) == RECORDS
