"""tf.string_to_number (TensorFlow 1.x's string_to_number_op_test, ported): good strings to
numbers of each out_type, bad ones InvalidArgumentError with TensorFlow's message."""

import numpy as np
import pytest

import troupe as tf

_ERROR_MESSAGE = "StringToNumberOp could not correctly convert string: "


def _check(tf_type, good_pairs, bad_pairs):
    input_string = tf.placeholder(tf.string)
    output = tf.string_to_number(input_string, out_type=tf_type)
    assert output.dtype == tf_type
    with tf.Session() as sess:
        for instr, outnum in good_pairs:
            result, = sess.run(output, {input_string: [instr]})
            np.testing.assert_allclose([outnum], [result], rtol=1e-6)
        for instr, outstr in bad_pairs:
            with pytest.raises(tf.errors.InvalidArgumentError, match=outstr):
                sess.run(output, {input_string: [instr]})


def test_to_float():
    _check(tf.float32,
           [("0", 0), ("3", 3), ("-1", -1), ("1.12", 1.12), ("0xF", 15), ("   -10.5", -10.5),
            ("3.40282e+38", 3.40282e+38),
            ("3.40283e+38", float("INF")),  # greater than float's largest
            ("-3.40283e+38", float("-INF")),
            ("NAN", float("NAN")), ("INF", float("INF"))],
           [("10foobar", _ERROR_MESSAGE + "10foobar")])


def test_to_double():
    _check(tf.float64,
           [("0", 0), ("3", 3), ("-1", -1), ("1.12", 1.12), ("0xF", 15), ("   -10.5", -10.5),
            ("3.40282e+38", 3.40282e+38), ("3.40283e+38", 3.40283e+38),
            ("-3.40283e+38", -3.40283e+38), ("NAN", float("NAN")), ("INF", float("INF"))],
           [("10foobar", _ERROR_MESSAGE + "10foobar")])


def test_to_int32():
    _check(tf.int32,
           [("0", 0), ("3", 3), ("-1", -1), ("    -10", -10), ("-2147483648", -2147483648),
            ("2147483647", 2147483647)],
           [("-2147483649", _ERROR_MESSAGE + "-2147483649"),  # below int32's range
            ("2147483648", _ERROR_MESSAGE + "2147483648"),  # above it
            ("2.9", _ERROR_MESSAGE + "2.9"), ("10foobar", _ERROR_MESSAGE + "10foobar")])


def test_to_int64():
    _check(tf.int64,
           [("0", 0), ("3", 3), ("-1", -1), ("    -10", -10), ("-2147483648", -2147483648),
            ("2147483647", 2147483647), ("-2147483649", -2147483649),
            ("2147483648", 2147483648)],
           [("2.9", _ERROR_MESSAGE + "2.9"), ("10foobar", _ERROR_MESSAGE + "10foobar")])


def test_white_space_edge_cases_as_tensorflows_converter_reads_them():
    # White space alone is 0 for reals (the converter's empty-string value) and an error for
    # integers; an empty string and a lone sign are errors; beyond the range by the exponent:
    # infinite or 0, whatever the locale.
    _check(tf.float32, [(" ", 0.0), ("\t 2 ", 2.0), ("1e39", float("inf")),
                        ("-1e39", -float("inf")), ("1e-50", 0.0)],
           [("", _ERROR_MESSAGE), ("+", _ERROR_MESSAGE + r"\+"), ("- 1", _ERROR_MESSAGE)])
    _check(tf.int32, [], [(" ", _ERROR_MESSAGE)])


def test_shape_default_type_and_bad_arguments():
    numbers = tf.string_to_number([["1", "2.5"], ["-3", "4e2"]])
    assert numbers.dtype == tf.float32 and numbers.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(numbers), [[1, 2.5], [-3, 400]])
    with pytest.raises(TypeError, match="DataType string not in list of allowed values"):
        tf.string_to_number("1", out_type=tf.string)
    with pytest.raises(TypeError, match="has type int32 that does not match expected type"):
        tf.string_to_number(tf.constant(1))
