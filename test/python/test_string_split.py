"""TensorFlow 1.x's string_split_op_test.py (kernel_tests, graph mode), ported with only the
imports changed, and troupe's checks of string_split's arguments and of a text pipeline."""

import numpy as np
import pytest

import troupe as tf


class StringSplitOpTest(tf.test.TestCase):

    def testStringSplit(self):
        strings = ["pigs on the wing", "animals"]
        with self.test_session() as sess:
            tokens = tf.string_split(strings)
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]])
            self.assertAllEqual(values, [b"pigs", b"on", b"the", b"wing", b"animals"])
            self.assertAllEqual(shape, [2, 4])

    def testStringSplitEmptyDelimiter(self):
        strings = ["hello", "hola", b"\xF0\x9F\x98\x8E"]  # Last string is U+1F60E
        with self.test_session() as sess:
            tokens = tf.string_split(strings, delimiter="")
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4],
                                          [1, 0], [1, 1], [1, 2], [1, 3], [2, 0],
                                          [2, 1], [2, 2], [2, 3]])
            expected = np.array(["h", "e", "l", "l", "o", "h", "o", "l", "a", b"\xf0", b"\x9f",
                                 b"\x98", b"\x8e"], dtype="|S1")
            self.assertAllEqual(values.tolist(), expected)
            self.assertAllEqual(shape, [3, 5])

    def testStringSplitEmptyToken(self):
        strings = [" hello ", "", "world "]
        with self.test_session() as sess:
            tokens = tf.string_split(strings)
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [2, 0]])
            self.assertAllEqual(values, [b"hello", b"world"])
            self.assertAllEqual(shape, [3, 1])

    def testStringSplitWithDelimiter(self):
        strings = ["hello|world", "hello world"]
        with self.test_session() as sess:
            self.assertRaises(ValueError, tf.string_split, strings, delimiter=["|", ""])
            self.assertRaises(ValueError, tf.string_split, strings, delimiter=["a"])
            tokens = tf.string_split(strings, delimiter="|")
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [0, 1], [1, 0]])
            self.assertAllEqual(values, [b"hello", b"world", b"hello world"])
            self.assertAllEqual(shape, [2, 2])
            tokens = tf.string_split(strings, delimiter="| ")
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [0, 1], [1, 0], [1, 1]])
            self.assertAllEqual(values, [b"hello", b"world", b"hello", b"world"])
            self.assertAllEqual(shape, [2, 2])

    def testStringSplitWithDelimiterTensor(self):
        strings = ["hello|world", "hello world"]
        with self.test_session() as sess:
            delimiter = tf.placeholder(tf.string)
            tokens = tf.string_split(strings, delimiter=delimiter)
            with self.assertRaises(tf.errors.InvalidArgumentError):
                sess.run(tokens, feed_dict={delimiter: ["a", "b"]})
            with self.assertRaises(tf.errors.InvalidArgumentError):
                sess.run(tokens, feed_dict={delimiter: ["a"]})
            indices, values, shape = sess.run(tokens, feed_dict={delimiter: "|"})
            self.assertAllEqual(indices, [[0, 0], [0, 1], [1, 0]])
            self.assertAllEqual(values, [b"hello", b"world", b"hello world"])
            self.assertAllEqual(shape, [2, 2])

    def testStringSplitWithDelimitersTensor(self):
        strings = ["hello.cruel,world", "hello cruel world"]
        with self.test_session() as sess:
            delimiter = tf.placeholder(tf.string)
            tokens = tf.string_split(strings, delimiter=delimiter)
            with self.assertRaises(tf.errors.InvalidArgumentError):
                sess.run(tokens, feed_dict={delimiter: ["a", "b"]})
            with self.assertRaises(tf.errors.InvalidArgumentError):
                sess.run(tokens, feed_dict={delimiter: ["a"]})
            indices, values, shape = sess.run(tokens, feed_dict={delimiter: ".,"})
            self.assertAllEqual(indices, [[0, 0], [0, 1], [0, 2], [1, 0]])
            self.assertAllEqual(values, [b"hello", b"cruel", b"world", b"hello cruel world"])
            self.assertAllEqual(shape, [2, 3])

    def testStringSplitWithNoSkipEmpty(self):
        strings = ["#a", "b#", "#c#"]
        with self.test_session() as sess:
            tokens = tf.string_split(strings, "#", skip_empty=False)
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(indices, [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]])
            self.assertAllEqual(values, [b"", b"a", b"b", b"", b"", b"c", b""])
            self.assertAllEqual(shape, [3, 3])
        with self.test_session() as sess:
            tokens = tf.string_split(strings, "#")
            indices, values, shape = sess.run(tokens)
            self.assertAllEqual(values, [b"a", b"b", b"c"])
            self.assertAllEqual(indices, [[0, 0], [1, 0], [2, 0]])
            self.assertAllEqual(shape, [3, 1])


def test_arguments_as_tensorflow_takes_them():
    with pytest.raises(ValueError, match="Cannot specify both 'sep' and 'delimiter'"):
        tf.string_split(["a b"], sep=" ", delimiter=",")
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.string_split(["a b"], result_type="RaggedTensor")
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.string_split("a b")
    tokens = tf.string_split(tf.placeholder(tf.string, [None]), sep=",")
    assert isinstance(tokens, tf.SparseTensor)
    assert tokens.indices.get_shape().as_list() == [None, 2]
    assert tokens.values.get_shape().as_list() == [None]


def test_words_to_ids_through_a_lookup_free_pipeline():
    """A text pipeline of TF1 programs: split lines into words, then the words' lengths
    through the SparseTensor's values (the dense shape is [lines, most words])."""
    lines = tf.placeholder(tf.string, [None])
    words = tf.string_split(lines)
    dense = tf.sparse_tensor_to_dense(words, default_value="<pad>")
    with tf.Session() as sess:
        got = sess.run(dense, {lines: ["the cat sat", "on", "the mat"]})
    assert got.tolist() == [[b"the", b"cat", b"sat"], [b"on", b"<pad>", b"<pad>"],
                            [b"the", b"mat", b"<pad>"]]
