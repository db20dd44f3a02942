"""tf.parse_single_sequence_example (TensorFlow 1.x's parsing_ops_test ParseSequenceExampleTest,
ported): context features as parse_single_example reads them, feature lists as [steps] + shape
dense tensors or [steps, longest] SparseTensors, and TensorFlow's errors for missing lists and
steps of the wrong size or kind."""

import numpy as np
import pytest

import troupe as tf


def feature(value):
    """A tf.train.Feature of one kind: bytes, floats or ints."""
    f = tf.train.Feature()
    if value and isinstance(value[0], bytes):
        f.bytes_list.value.extend(value)
    elif value and isinstance(value[0], float):
        f.float_list.value.extend(value)
    else:
        f.int64_list.value.extend(value)
    return f


def sequence_example(context=None, feature_lists=None):
    ex = tf.train.SequenceExample()
    for key, value in (context or {}).items():
        ex.context.feature[key].CopyFrom(feature(value))
    for key, steps in (feature_lists or {}).items():
        the_list = ex.feature_lists.feature_list[key]
        for step in steps:
            the_list.feature.add().CopyFrom(feature(step))
    return ex.SerializeToString()


def parse(serialized, context_features=None, sequence_features=None, example_name=None):
    context, lists = tf.parse_single_sequence_example(
        serialized, context_features=context_features, sequence_features=sequence_features,
        example_name=example_name)
    with tf.Session() as sess:
        return sess.run((context, lists))


def test_sparse_and_dense_context():
    original = sequence_example(context={"c": [3, 4], "st_a": [3.0, 4.0]})
    context, lists = parse(original, context_features={
        "st_a": tf.VarLenFeature(tf.float32), "st_b": tf.VarLenFeature(tf.string),
        "c": tf.FixedLenFeature([2], tf.int64),
        "d": tf.FixedLenFeature([], tf.float32, default_value=-1.0)})
    assert lists == {}
    np.testing.assert_array_equal(context["c"], [3, 4])
    assert context["d"] == -1.0
    np.testing.assert_array_equal(context["st_a"].indices, [[0], [1]])
    np.testing.assert_array_equal(context["st_a"].values, [3.0, 4.0])
    np.testing.assert_array_equal(context["st_a"].dense_shape, [2])
    assert len(context["st_b"].values) == 0 and list(context["st_b"].dense_shape) == [0]


def test_multiple_size_feature_lists_and_sparse_lists():
    original = sequence_example(feature_lists={
        "a": [[-1, 0, 1], [2, 3, 4], [5, 6, 7], [8, 9, 10]],
        "b": [[b"r00", b"r01", b"r10", b"r11"], [b"r20", b"r21", b"r30", b"r31"]],
        "c": [[3.0, 4.0], [-1.0, 2.0]],
        "s": [[1, 2], [], [3]]})
    _, lists = parse(original, sequence_features={
        "a": tf.FixedLenSequenceFeature([1, 3], tf.int64),
        "b": tf.FixedLenSequenceFeature([2, 2], tf.string),
        "c": tf.FixedLenSequenceFeature([2], tf.float32),
        "s": tf.VarLenFeature(tf.int64),
        "missing": tf.VarLenFeature(tf.float32)})
    np.testing.assert_array_equal(lists["a"], np.arange(-1, 11).reshape(4, 1, 3))
    np.testing.assert_array_equal(
        lists["b"], np.array([b"r00", b"r01", b"r10", b"r11", b"r20", b"r21", b"r30", b"r31"],
                             dtype=object).reshape(2, 2, 2))
    np.testing.assert_array_equal(lists["c"], [[3.0, 4.0], [-1.0, 2.0]])
    np.testing.assert_array_equal(lists["s"].indices, [[0, 0], [0, 1], [2, 0]])
    np.testing.assert_array_equal(lists["s"].values, [1, 2, 3])
    np.testing.assert_array_equal(lists["s"].dense_shape, [3, 2])
    np.testing.assert_array_equal(lists["missing"].dense_shape, [0, 0])


def test_empty_and_allowed_missing_feature_lists():
    original = sequence_example(context={"id": [7]}, feature_lists={"a": []})
    context, lists = parse(original, context_features={"id": tf.FixedLenFeature([], tf.int64)},
                           sequence_features={
                               "a": tf.FixedLenSequenceFeature([2], tf.float32),
                               "b": tf.FixedLenSequenceFeature([3], tf.int64,
                                                               allow_missing=True)})
    assert context["id"] == 7
    assert lists["a"].shape == (0, 2) and lists["a"].dtype == np.float32
    assert lists["b"].shape == (0, 3)


def test_missing_feature_list_fails_naming_it():
    original = sequence_example(feature_lists={"a": [[1]]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Name: in1, Feature list 'b' is required but could not be found"):
        parse(original, sequence_features={"b": tf.FixedLenSequenceFeature([1], tf.int64)},
              example_name="in1")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Name: <unknown>, Feature list"):
        parse(original, sequence_features={"b": tf.FixedLenSequenceFeature([1], tf.int64)})


def test_steps_of_the_wrong_size_or_kind_fail_naming_the_list():
    inconsistent = sequence_example(feature_lists={"a": [[1, 2, 3], [1, 2]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a'"):
        parse(inconsistent, sequence_features={"a": tf.FixedLenSequenceFeature([3], tf.int64)})
    wrong_kind = sequence_example(feature_lists={"a": [[1.0, 2.0]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a'"):
        parse(wrong_kind, sequence_features={"a": tf.FixedLenSequenceFeature([2], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a'"):
        parse(wrong_kind, sequence_features={"a": tf.VarLenFeature(tf.string)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="SequenceExample"):
        parse(b"\x12\x05not a", sequence_features={"a": tf.VarLenFeature(tf.int64)})


def test_bad_feature_specs_are_value_errors():
    with pytest.raises(ValueError, match="Missing features"):
        tf.parse_single_sequence_example(b"")
    with pytest.raises(ValueError, match="Unsupported FixedLenFeature"):
        tf.parse_single_sequence_example(
            b"", sequence_features={"a": tf.FixedLenFeature([1], tf.int64)})
    with pytest.raises(ValueError, match=r"Value feature_list_dense_defaults\[a\] must be None"):
        tf.parse_single_sequence_example(b"", sequence_features={
            "a": tf.FixedLenSequenceFeature([1], tf.int64, allow_missing=True, default_value=0)})
    with pytest.raises(ValueError, match="Unsupported FixedLenSequenceFeature"):
        tf.parse_single_sequence_example(
            b"", context_features={"a": tf.FixedLenSequenceFeature([1], tf.int64)})


def test_in_a_tf_data_pipeline(tmp_path):
    path = str(tmp_path / "seq.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for n in range(3):
            writer.write(sequence_example(context={"length": [n + 1]},
                                          feature_lists={"tokens": [[i] for i in range(n + 1)]}))

    def parse_fn(record):
        context, lists = tf.parse_single_sequence_example(
            record, context_features={"length": tf.FixedLenFeature([], tf.int64)},
            sequence_features={"tokens": tf.FixedLenSequenceFeature([], tf.int64)})
        return context["length"], lists["tokens"]
    dataset = tf.data.TFRecordDataset(path).map(parse_fn).padded_batch(3, ([], [None]))
    lengths, tokens = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        got_lengths, got_tokens = sess.run([lengths, tokens])
    np.testing.assert_array_equal(got_lengths, [1, 2, 3])
    np.testing.assert_array_equal(got_tokens, [[0, 0, 0], [0, 1, 0], [0, 1, 2]])
