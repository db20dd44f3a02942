"""tf.summary: summary ops computed by the runtime and FileWriter's event files, decoded with
protobuf itself from a schema of TensorBoard's records (test/python/protos): scalars,
histograms, images (PNG), audio (WAV), text, merges, the graph, session logs; tags as
TensorFlow makes them; metadata kept once per tag; errors."""

import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import troupe as tf

from conftest import read_tfrecords


def events_in(logdir, pb2):
    files = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1, files
    events = []
    for record in read_tfrecords(os.path.join(logdir, files[0])):
        event = pb2.Event()
        event.ParseFromString(record)
        events.append(event)
    return events


def test_scalars_histograms_and_text_reach_the_event_file(tmp_path, tensorboard_pb2):
    x = tf.placeholder(tf.float32, [None], name="x")
    with tf.name_scope("train"):
        tf.summary.scalar("loss", tf.reduce_mean(x))
        tf.summary.histogram("values", x)
    tf.summary.text("note", tf.constant("hello"))
    tf.summary.scalar("loss", tf.reduce_max(x), family="extra")
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: [1.0, 2.0, float(step)]}), step)
        writer.close()
    events = events_in(str(tmp_path), tensorboard_pb2)
    assert events[0].file_version == "brain.Event:2"
    assert events[1].WhichOneof("what") == "graph_def"
    graph = tensorboard_pb2.GraphDef()
    graph.ParseFromString(events[1].graph_def)
    nodes = {n.name: n for n in graph.node}
    assert nodes["x"].op == "Placeholder"
    assert nodes["x"].attr["dtype"].type == 1  # DT_FLOAT
    summaries = [e for e in events if e.WhichOneof("what") == "summary"]
    assert [e.step for e in summaries] == [0, 1, 2]
    values = {v.tag: v for v in summaries[2].summary.value}
    assert set(values) == {"train/loss", "train/values", "note", "extra/extra/loss"}
    assert values["train/loss"].simple_value == pytest.approx(5.0 / 3.0)  # x = [1, 2, 2]
    assert values["extra/extra/loss"].simple_value == 2.0
    histo = values["train/values"].histo
    assert (histo.min, histo.max, histo.num, histo.sum, histo.sum_squares) == \
        (1.0, 2.0, 3.0, 5.0, 9.0)
    assert sum(histo.bucket) == 3.0
    note = values["note"]
    assert note.tensor.string_val == [b"hello"]
    # Metadata is written the first time a tag is, only.
    assert summaries[0].summary.value[2].metadata.plugin_data.plugin_name == "text"
    assert not summaries[1].summary.value[2].HasField("metadata")


def test_images_and_audio_are_png_and_wav(tmp_path, tensorboard_pb2):
    images = tf.constant(np.linspace(0, 1, 2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3))
    clip = tf.constant(np.sin(np.linspace(0, 6.28, 800, dtype=np.float32)).reshape(1, 800))
    image_summary = tf.summary.image("pictures", images, max_outputs=2)
    audio_summary = tf.summary.audio("sound", clip, 8000, max_outputs=1)
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(sess.run(image_summary), 1)
        writer.add_summary(sess.run(audio_summary), 1)
    summaries = [e.summary for e in events_in(str(tmp_path), tensorboard_pb2)
                 if e.WhichOneof("what") == "summary"]
    first, second = summaries[0].value
    assert (first.tag, second.tag) == ("pictures/image/0", "pictures/image/1")
    png = first.image.encoded_image_string
    assert (first.image.height, first.image.width, first.image.colorspace) == (4, 5, 3)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    length = struct.unpack(">I", png[33:37])[0]
    rows = zlib.decompress(png[41:41 + length])
    assert len(rows) == 4 * (1 + 5 * 3)
    audio = summaries[1].value[0]
    assert audio.tag == "sound/audio"
    assert (audio.audio.sample_rate, audio.audio.num_channels, audio.audio.length_frames) == \
        (8000.0, 1, 800)
    wav = audio.audio.encoded_audio_string
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE" and len(wav) == 44 + 2 * 800


def test_summaries_built_by_hand_and_session_logs(tmp_path, tensorboard_pb2):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        summary = tf.Summary(value=[tf.Summary.Value(tag="accuracy", simple_value=0.75)])
        summary.value.add(tag="loss", simple_value=0.5)
        writer.add_summary(summary, global_step=10)
        writer.add_summary(summary.SerializeToString(), global_step=11)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 12)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.CHECKPOINT,
                                             checkpoint_path="/ckpt/model.ckpt-12"), 12)
        assert writer.get_logdir() == str(tmp_path)
    events = events_in(str(tmp_path), tensorboard_pb2)
    assert [(v.tag, v.simple_value) for v in events[1].summary.value] == \
        [("accuracy", 0.75), ("loss", 0.5)]
    assert events[2].step == 11
    assert events[3].session_log.status == tensorboard_pb2.SessionLog.START
    assert events[4].session_log.checkpoint_path == "/ckpt/model.ckpt-12"
    # And troupe reads its own files back.
    files = os.listdir(str(tmp_path))
    read = list(tf.train.summary_iterator(os.path.join(str(tmp_path), files[0])))
    assert read[1].summary.value[0].tag == "accuracy"
    assert read[3].session_log.status == tf.SessionLog.START


def test_summary_tags_are_unique_and_cleaned():
    a = tf.summary.scalar("loss", 1.0)
    b = tf.summary.scalar("loss", 2.0)
    c = tf.summary.scalar("bad name!", 3.0)
    with tf.Session() as sess:
        tags = [tf.Summary.FromString(sess.run(s)).value[0].tag for s in (a, b, c)]
    assert tags == ["loss", "loss_1", "bad_name_"]
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [a, b, c]
    assert tf.summary.merge_all(key="nothing_here") is None


def test_summary_errors():
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="real number"):
        tf.summary.scalar("s", tf.constant("x"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="1, 3 or 4 channels"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 2]))
    with pytest.raises(ValueError, match="dtype string"):
        tf.summary.text("t", tf.constant(1))
    h = tf.summary.histogram("h", tf.constant([1.0, float("nan")]))
    twice = tf.summary.merge([tf.summary.scalar("a", 1.0), tf.summary.scalar("a", 2.0,
                                                                              family="a")])
    same = tf.summary.merge([tf.summary.scalar("b", 1.0)] * 2)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram"):
            sess.run(h)
        sess.run(twice)  # "a" and "a/a": different tags
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag b"):
            sess.run(same)
    with pytest.raises(ValueError, match="logdir"):
        tf.summary.FileWriter("")
    with pytest.raises(TypeError, match="tf.Summary"):
        tf.summary.FileWriter(os.devnull + "-dir").add_summary(3)


def test_file_writer_cache_and_reopen(tmp_path):
    first = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is first
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not first
    tf.summary.FileWriterCache.clear()
    writer = tf.summary.FileWriter(str(tmp_path / "r"))
    writer.close()
    writer.add_summary(tf.Summary())  # dropped, as TensorFlow drops it
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="t", simple_value=1.0)]))
    writer.close()
    assert len(os.listdir(str(tmp_path / "r"))) >= 1


def test_a_writer_left_open_is_flushed_when_the_program_exits(tmp_path):
    program = ("import troupe as tf\n"
               "writer = tf.summary.FileWriter(%r, flush_secs=3600)\n"
               "writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='loss', "
               "simple_value=0.5)]), 7)\n" % str(tmp_path))
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)
    (path,) = [os.path.join(str(tmp_path), name) for name in os.listdir(str(tmp_path))]
    values = [(event.step, value.tag, value.simple_value)
              for event in tf.train.summary_iterator(path) for value in event.summary.value]
    assert values == [(7, "loss", 0.5)]


def test_tfrecord_files_round_trip_and_corruption_is_data_loss(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in (b"first", b"", b"x" * 100000):
            writer.write(record)
    assert list(tf.python_io.tf_record_iterator(path)) == [b"first", b"", b"x" * 100000]
    assert read_tfrecords(path) == [b"first", b"", b"x" * 100000]
    data = bytearray(open(path, "rb").read())
    data[14] ^= 1  # a byte of the first record's data
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0 in"):
        list(tf.python_io.tf_record_iterator(path))
    open(path, "wb").write(bytes(data[:-3]))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.python_io.tf_record_iterator(path))
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "missing")))
    with pytest.raises(ValueError, match="Not a valid compression_type"):
        tf.python_io.TFRecordOptions(7)
