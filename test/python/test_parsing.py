"""tf.train.Example and its parsing: the messages against protobuf's own encoding of the
same schema (test/python/protos/example_records.proto), tf.parse_example and
tf.parse_single_example with FixedLenFeature and VarLenFeature (ports of TF1's
parse_example tests' cases), tf.decode_raw, a TFRecord pipeline parsing Examples, and the
errors for records that do not match the features."""

import numpy as np
import pytest

import troupe as tf


def example(**features):
    """A tf.train.Example of int lists, float lists and byte lists by key."""
    ex = tf.train.Example()
    for key, value in features.items():
        feature = ex.features.feature[key]
        if isinstance(value, (bytes, str)) or (isinstance(value, list) and value and
                                               isinstance(value[0], (bytes, str))):
            values = value if isinstance(value, list) else [value]
            feature.bytes_list.value.extend(v.encode() if isinstance(v, str) else v
                                            for v in values)
        elif isinstance(value, list) and value and isinstance(value[0], float):
            feature.float_list.value.extend(value)
        else:
            feature.int64_list.value.extend(value if isinstance(value, list) else [value])
    return ex


def test_example_messages_match_protobufs_encoding(example_pb2):
    ex = example(label=3, pixels=[0.5, 1.5], name="shirt", ids=[1, -2, 300])
    theirs = example_pb2.Example()
    theirs.ParseFromString(ex.SerializeToString())
    assert list(theirs.features.feature["label"].int64_list.value) == [3]
    assert list(theirs.features.feature["pixels"].float_list.value) == [0.5, 1.5]
    assert list(theirs.features.feature["name"].bytes_list.value) == [b"shirt"]
    assert list(theirs.features.feature["ids"].int64_list.value) == [1, -2, 300]
    # And the other way: protobuf's bytes read back by troupe's messages.
    back = tf.train.Example.FromString(theirs.SerializeToString())
    assert back == ex
    assert back.features.feature["ids"].WhichOneof("kind") == "int64_list"
    built = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0]))}))
    assert built.features.feature["x"].float_list.value == [1.0]
    assert "x" in built.features.feature and len(built.features.feature) == 1
    seq = tf.train.SequenceExample()
    seq.context.feature["id"].int64_list.value.append(7)
    seq.feature_lists.feature_list["frames"].feature.add().float_list.value.extend([1.0, 2.0])
    theirs_seq = example_pb2.SequenceExample.FromString(seq.SerializeToString())
    assert theirs_seq.context.feature["id"].int64_list.value[0] == 7
    assert list(theirs_seq.feature_lists.feature_list["frames"].feature[0].float_list.value) \
        == [1.0, 2.0]


def test_parse_example_dense_and_sparse():
    records = [example(a=[1, 2], b=[1.0], s="x", v=[5, 6, 7]).SerializeToString(),
               example(a=[3, 4], s="y").SerializeToString()]
    parsed = tf.parse_example(records, {
        "a": tf.FixedLenFeature([2], tf.int64),
        "b": tf.FixedLenFeature([], tf.float32, default_value=-1.0),
        "s": tf.FixedLenFeature([], tf.string),
        "v": tf.VarLenFeature(tf.int64),
    })
    assert parsed["a"].shape.as_list() == [2, 2]
    with tf.Session() as sess:
        a, b, s, v = sess.run([parsed["a"], parsed["b"], parsed["s"], parsed["v"]])
    np.testing.assert_array_equal(a, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(b, [1.0, -1.0])
    assert list(s) == [b"x", b"y"]
    np.testing.assert_array_equal(v.indices, [[0, 0], [0, 1], [0, 2]])
    np.testing.assert_array_equal(v.values, [5, 6, 7])
    np.testing.assert_array_equal(v.dense_shape, [2, 3])


def test_fixed_len_sequence_features_are_padded_to_the_longest():
    """TensorFlow's FixedLenSequenceFeature: blocks of the feature's shape, as many as the
    longest record has; shorter and missing records padded with default_value (0 or "")."""
    records = [example(a=[1.0, 2.0, 3.0, 4.0], w=["x", "y"]).SerializeToString(),
               example(w="z").SerializeToString(),
               example(a=[5.0, 6.0]).SerializeToString()]
    parsed = tf.parse_example(records, {
        "a": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=-1.0),
        "w": tf.FixedLenSequenceFeature([], tf.string, allow_missing=True),
        "n": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True),
    })
    assert parsed["a"].shape.as_list() == [3, None, 2]
    with tf.Session() as sess:
        a, w, n = sess.run([parsed["a"], parsed["w"], parsed["n"]])
    np.testing.assert_array_equal(a, [[[1, 2], [3, 4]], [[-1, -1], [-1, -1]], [[5, 6], [-1, -1]]])
    assert w.tolist() == [[b"x", b"y"], [b"z", b""], [b"", b""]]
    assert n.shape == (3, 0)

    single = tf.parse_single_example(records[0], {
        "a": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)})
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(single["a"]), [[1, 2], [3, 4]])

    with pytest.raises(ValueError, match="requires allow_missing to be True"):
        tf.parse_example(records, {"a": tf.FixedLenSequenceFeature([2], tf.float32)})
    odd = tf.parse_example([example(a=[1.0, 2.0, 3.0]).SerializeToString()], {
        "a": tf.FixedLenSequenceFeature([2], tf.float32, allow_missing=True)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="feature 'a': 3 values are not a whole number of blocks of 2"):
            sess.run(odd["a"])


def test_parse_single_example():
    record = example(image=[0.0, 0.25, 0.5, 1.0], label=9, tags=["a", "b"]).SerializeToString()
    parsed = tf.parse_single_example(record, {
        "image": tf.FixedLenFeature([2, 2], tf.float32),
        "label": tf.FixedLenFeature([], tf.int64),
        "tags": tf.VarLenFeature(tf.string),
    })
    assert parsed["image"].shape.as_list() == [2, 2]
    with tf.Session() as sess:
        image, label, tags = sess.run([parsed["image"], parsed["label"], parsed["tags"]])
    np.testing.assert_array_equal(image, [[0.0, 0.25], [0.5, 1.0]])
    assert label == 9
    np.testing.assert_array_equal(tags.indices, [[0], [1]])
    assert list(tags.values) == [b"a", b"b"]


def test_records_that_do_not_match_the_features_name_record_and_feature():
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, {"label": tf.FixedLenFeature([], tf.int64)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="record 1: feature 'label' \\(data type: int64\\) is required"):
            sess.run(parsed["label"], {serialized: [example(label=1).SerializeToString(),
                                                    example(other=1).SerializeToString()]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="record 0, feature 'label': data types don't match: the "
                                 "record has float32, the feature is declared int64"):
            sess.run(parsed["label"], {serialized: [example(label=[1.0]).SerializeToString()]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="record 0, feature 'label': 2 values, but the shape \\[\\] "
                                 "needs 1"):
            sess.run(parsed["label"], {serialized: [example(label=[1, 2]).SerializeToString()]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="could not parse record 0 as an Example"):
            sess.run(parsed["label"], {serialized: [b"\x0a\x05ab"]})
    with pytest.raises(ValueError, match="Unsupported dtype int32 for feature 'x'"):
        tf.parse_example(serialized, {"x": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(ValueError, match="fully defined shape"):
        tf.parse_example(serialized, {"x": tf.FixedLenFeature([None], tf.int64)})
    with pytest.raises(ValueError, match="default_value of feature 'x' has 2 values"):
        tf.parse_example(serialized, {"x": tf.FixedLenFeature([3], tf.int64,
                                                               default_value=[1, 2])})


def test_decode_raw():
    data = np.array([[1.5, -2.0], [3.0, 4.25]], dtype=np.float32)
    raw = tf.constant([row.tobytes() for row in data])
    decoded = tf.decode_raw(raw, tf.float32)
    assert decoded.shape.as_list() == [2, None]
    big = tf.decode_raw(tf.constant(np.array([258], dtype=">i4").tobytes()), tf.int32,
                        little_endian=False)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(decoded), data)
        assert sess.run(big).tolist() == [258]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="length 5 that is not a multiple of 4"):
            sess.run(tf.decode_raw(tf.constant(b"12345"), tf.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
            sess.run(tf.decode_raw(tf.constant([b"1234", b"12"]), tf.int32))
    with pytest.raises(TypeError, match="out_type bool is not supported"):
        tf.decode_raw(raw, tf.bool)
    with pytest.raises(TypeError, match="Cannot convert value 'uint16' to a troupe DType"):
        tf.decode_raw(raw, "uint16")  # troupe has no 16-bit tensors


def test_tfrecord_pipeline_of_examples(tmp_path):
    path = str(tmp_path / "examples.tfrecord")
    images = np.arange(24, dtype=np.float32).reshape(6, 4)
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(6):
            writer.write(example(image=images[i].tolist(), label=i).SerializeToString())

    def parse(record):
        features = tf.parse_single_example(record, {
            "image": tf.FixedLenFeature([4], tf.float32),
            "label": tf.FixedLenFeature([], tf.int64)})
        return features["image"] / 2.0, tf.cast(features["label"], tf.int32)

    dataset = tf.data.TFRecordDataset(path).map(parse).batch(4)
    assert dataset.output_types == (tf.float32, tf.int32)
    assert [s.as_list() for s in dataset.output_shapes] == [[None, 4], [None]]
    batches = []
    nxt = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        while True:
            try:
                batches.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                break
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches]), images / 2.0)
    assert np.concatenate([b[1] for b in batches]).tolist() == list(range(6))


# --- SparseFeature (parsing_ops_test's testSerializedContainingSparseFeature, ported) ---

def record(**features):
    return example(**features).SerializeToString()


def test_sparse_feature_merges_indices_and_values_in_row_major_order():
    records = [record(idx=[3, 1], val=[30.0, 10.0]), record(),
               record(idx=[0], val=[5.0])]
    feature = tf.SparseFeature("idx", "val", tf.float32, 4)
    parsed = tf.parse_example(records, {"sp": feature})
    assert set(parsed) == {"sp"}
    presorted = tf.parse_example(records, {"sp": tf.SparseFeature("idx", "val", tf.float32, 4,
                                                                   already_sorted=True)})
    with tf.Session() as sess:
        got, kept = sess.run([parsed["sp"], presorted["sp"]])
    np.testing.assert_array_equal(got.indices, [[0, 1], [0, 3], [2, 0]])
    np.testing.assert_allclose(got.values, [10.0, 30.0, 5.0])
    np.testing.assert_array_equal(got.dense_shape, [3, 4])
    np.testing.assert_array_equal(kept.indices, [[0, 3], [0, 1], [2, 0]])


def test_sparse_feature_of_two_index_keys_and_of_one_record():
    records = [record(r=[1, 0], c=[2, 1], v=[b"b", b"a"])]
    feature = tf.SparseFeature(["r", "c"], "v", tf.string, [2, 3])
    both = tf.parse_example(records, {"sp": feature, "r": tf.VarLenFeature(tf.int64)})
    single = tf.parse_single_example(records[0], {"sp": feature})
    with tf.Session() as sess:
        got, one, rows = sess.run([both["sp"], single["sp"], both["r"]])
    np.testing.assert_array_equal(got.indices, [[0, 0, 1], [0, 1, 2]])
    assert list(got.values) == [b"a", b"b"]
    np.testing.assert_array_equal(got.dense_shape, [1, 2, 3])
    np.testing.assert_array_equal(one.indices, [[0, 1], [1, 2]])
    np.testing.assert_array_equal(one.dense_shape, [2, 3])
    np.testing.assert_array_equal(rows.values, [1, 0])  # asked for too: as it is


@pytest.mark.parametrize("fields, message", [
    (dict(idx=[1, 2], val=[1.0]), "'idx' and 'val' lists differ in length"),
    (dict(idx=[4], val=[1.0]), r"an index of 'idx' is outside \[0, 4\)"),
    (dict(idx=[-1], val=[1.0]), r"an index of 'idx' is outside \[0, 4\)"),
])
def test_sparse_feature_checks_its_records(fields, message):
    parsed = tf.parse_example([record(**fields)],
                              {"sp": tf.SparseFeature("idx", "val", tf.float32, 4)})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(parsed["sp"])
    with pytest.raises(ValueError, match="same length"):
        tf.parse_example([record(**fields)],
                         {"sp": tf.SparseFeature(["a", "b"], "val", tf.float32, 4)})
    with pytest.raises(ValueError, match="reads 'idx'"):
        tf.parse_example([record(**fields)],
                         {"sp": tf.SparseFeature("idx", "val", tf.float32, 4),
                          "idx": tf.FixedLenFeature([1], tf.int64)})
