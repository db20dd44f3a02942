"""TensorFlow 1.x's decode_csv_op_test.py (kernel_tests), ported with only the imports changed
(graph mode), and troupe's own checks of decode_csv's arguments and of a CSV input pipeline."""

import numpy as np
import pytest

import troupe as tf


class DecodeCSVOpTest(tf.test.TestCase):

    def _test(self, args, expected_out=None, expected_err_re=None):
        if expected_err_re is None:
            decode = tf.decode_csv(**args)
            out = self.evaluate(decode)
            for i, field in enumerate(out):
                if field.dtype == np.float32 or field.dtype == np.float64:
                    self.assertAllClose(field, expected_out[i])
                else:
                    self.assertAllEqual(field, expected_out[i])
        else:
            with self.assertRaisesOpError(expected_err_re):
                decode = tf.decode_csv(**args)
                self.evaluate(decode)

    def testSimple(self):
        self._test({"records": ["1", "2", '"3"'], "record_defaults": [[1]]}, [[1, 2, 3]])

    def testSimpleWithScalarDefaults(self):
        self._test({"records": ["1,4", "2,5", "3,6"], "record_defaults": [1, 2]},
                   [[1, 2, 3], [4, 5, 6]])

    def testSimpleWith2DDefaults(self):
        args = {"records": ["1", "2", "3"], "record_defaults": [[[0]]]}
        with self.assertRaisesWithPredicateMatch(ValueError,
                                                 "Shape must be at most rank 1 but is rank 2"):
            self._test(args)

    def testSimpleNoQuoteDelimiter(self):
        self._test({"records": ["1", "2", '"3"'], "record_defaults": [[""]],
                    "use_quote_delim": False}, [[b"1", b"2", b'"3"']])

    def testScalar(self):
        self._test({"records": '1,""', "record_defaults": [[3], [4]]}, [1, 4])

    def test2D(self):
        self._test({"records": [["1", "2"], ['""', "4"]], "record_defaults": [[5]]},
                   [[[1, 2], [5, 4]]])

    def test2DNoQuoteDelimiter(self):
        self._test({"records": [["1", "2"], ['""', '"']], "record_defaults": [[""]],
                    "use_quote_delim": False}, [[[b"1", b"2"], [b'""', b'"']]])

    def testDouble(self):
        self._test({"records": ["1.0", "-1.79e+308", '"1.79e+308"'],
                    "record_defaults": [np.array([], dtype=np.double)]},
                   [[1.0, -1.79e+308, 1.79e+308]])

    def testInt64(self):
        self._test({"records": ["1", "2", '"2147483648"'],
                    "record_defaults": [np.array([], dtype=np.int64)]}, [[1, 2, 2147483648]])

    def testComplexString(self):
        self._test({"records": ['"1.0"', '"ab , c"', '"a\nbc"', '"ab""c"', " abc "],
                    "record_defaults": [["1"]]},
                   [[b"1.0", b"ab , c", b"a\nbc", b'ab"c', b" abc "]])

    def testMultiRecords(self):
        self._test({"records": ["1.0,4,aa", "0.2,5,bb", "3,6,cc"],
                    "record_defaults": [[1.0], [1], ["aa"]]},
                   [[1.0, 0.2, 3], [4, 5, 6], [b"aa", b"bb", b"cc"]])

    def testNA(self):
        self._test({"records": ["2.0,NA,aa", "NA,5,bb", "3,6,NA"],
                    "record_defaults": [[0.0], [0], [""]], "na_value": "NA"},
                   [[2.0, 0.0, 3], [0, 5, 6], [b"aa", b"bb", b""]])

    def testWithDefaults(self):
        self._test({"records": [",1,", "0.2,3,bcd", "3.0,,"],
                    "record_defaults": [[1.0], [0], ["a"]]},
                   [[1.0, 0.2, 3.0], [1, 3, 0], [b"a", b"bcd", b"a"]])

    def testWithDefaultsAndNoQuoteDelimiter(self):
        self._test({"records": [",1,", "0.2,3,bcd", '3.0,,"'],
                    "record_defaults": [[1.0], [0], ["a"]], "use_quote_delim": False},
                   [[1.0, 0.2, 3.0], [1, 3, 0], [b"a", b"bcd", b"\""]])

    def testWithTabDelim(self):
        self._test({"records": ["1\t1", "0.2\t3", "3.0\t"], "record_defaults": [[1.0], [0]],
                    "field_delim": "\t"}, [[1.0, 0.2, 3.0], [1, 3, 0]])

    def testWithoutDefaultsError(self):
        self._test({"records": [",1", "0.2,3", "3.0,"],
                    "record_defaults": [[1.0], np.array([], dtype=np.int32)]},
                   expected_err_re="Field 1 is required but missing in record 2!")

    def testWrongFieldIntError(self):
        self._test({"records": [",1", "0.2,234a", "3.0,2"],
                    "record_defaults": [[1.0], np.array([], dtype=np.int32)]},
                   expected_err_re="Field 1 in record 1 is not a valid int32: 234a")

    def testOutOfRangeError(self):
        self._test({"records": ["1", "9999999999999999999999999", "3"],
                    "record_defaults": [[1]]},
                   expected_err_re="Field 0 in record 1 is not a valid int32: ")

    def testWrongFieldFloatError(self):
        self._test({"records": [",1", "0.2,2", "3.0adf,3"],
                    "record_defaults": [[1.0], np.array([], dtype=np.int32)]},
                   expected_err_re="Field 0 in record 2 is not a valid float: ")

    def testWrongFieldStringError(self):
        self._test({"records": ['"1,a,"', "0.22", 'a"bc'], "record_defaults": [["a"]]},
                   expected_err_re="Unquoted fields cannot have quotes/CRLFs inside")

    def testWrongDefaults(self):
        self._test({"records": [",1", "0.2,2", "3.0adf,3"], "record_defaults": [[1.0]]},
                   expected_err_re="Expect 1 fields but have 2 in record 0")

    def testShortQuotedString(self):
        self._test({"records": ["\""], "record_defaults": [["default"]]},
                   expected_err_re="Quoted field has to end with quote followed.*")

    def testSelectCols(self):
        self._test({"records": [",,", "4,5,6"], "record_defaults": [[1], [2]],
                    "select_cols": [0, 1]}, [[1, 4], [2, 5]])

    def testSelectColsInclLast(self):
        self._test({"records": [",,", "4,5,6"], "record_defaults": [[0], [1], [2]],
                    "select_cols": [0, 1, 2]}, [[0, 4], [1, 5], [2, 6]])

    def testWrongSelectColsInclLast(self):
        self._test({"records": [",,", "4,5,6"], "record_defaults": [[0], [1], [2]],
                    "select_cols": [0, 1, 3]},
                   expected_err_re="Expect 3 fields but have 2 in record 0")

    def testWrongSelectColsLen(self):
        args = {"records": ["1,2,3", "4,5,6"], "record_defaults": [[0], [0], [0]],
                "select_cols": [0]}
        with self.assertRaisesWithPredicateMatch(
                ValueError, "Length of select_cols and record_defaults do not match."):
            self._test(args)

    def testWrongSelectColsSorting(self):
        args = {"records": ["1,2,3"], "record_defaults": [[0], [1]], "select_cols": [1, 0]}
        with self.assertRaisesWithPredicateMatch(ValueError,
                                                 "select_cols is not strictly increasing."):
            self._test(args)

    def testWrongSelectColsIndicesNegative(self):
        args = {"records": ["1,2,3"], "record_defaults": [[0], [1]], "select_cols": [-1, 0]}
        with self.assertRaisesWithPredicateMatch(ValueError,
                                                 "select_cols contains negative values."):
            self._test(args)

    def testWrongSelectColsIndicesTooHigh(self):
        self._test({"records": ["1,2,3"], "record_defaults": [[0], [1]], "select_cols": [0, 3]},
                   expected_err_re="Expect 2 fields but have 1 in record 0")


def test_outputs_have_the_records_shape_and_the_defaults_dtypes():
    records = tf.placeholder(tf.string, [None])
    a, b, c, d = tf.decode_csv(records, [[0.0], np.array([], np.float64),
                                         np.array([0], np.int64), [""]])
    assert [t.dtype for t in (a, b, c, d)] == [tf.float32, tf.float64, tf.int64, tf.string]
    assert all(t.get_shape().as_list() == [None] for t in (a, b, c, d))


def test_bad_arguments_are_errors_naming_them():
    with pytest.raises(ValueError, match="field_delim must be one character"):
        tf.decode_csv(["1"], [[0]], field_delim=";;")
    with pytest.raises(TypeError, match=r"record_defaults\[1\] is bool"):
        tf.decode_csv(["1,1"], [[0], [True]])
    with pytest.raises(ValueError, match="length-0 or length-1 vector"):
        tf.decode_csv(["1"], [[0, 1]])


def test_a_csv_file_read_by_a_queue_pipeline(tmp_path):
    """The census-style input of TF1 programs: TextLineReader over a CSV file with a header
    skipped, decode_csv of each line, batched."""
    path = tmp_path / "data.csv"
    path.write_text("age,workclass,income\n39,State-gov,0\n50,,1\n38,Private,0\n")
    queue = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader(skip_header_lines=1).read(queue)
    age, workclass, income = tf.decode_csv(line, [[0], ["?"], [0]])
    batch = tf.train.batch([age, workclass, income], batch_size=3)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        ages, classes, incomes = sess.run(batch)
        coord.request_stop()
        coord.join(threads)
    assert ages.tolist() == [39, 50, 38]
    assert classes.tolist() == [b"State-gov", b"?", b"Private"]
    assert incomes.tolist() == [0, 1, 0]


def test_a_csv_file_read_with_tf_data_as_the_census_example(tmp_path):
    """TensorFlow 1.x's wide_deep census input_fn: TextLineDataset, map(parse_csv) with
    decode_csv into a dict of columns, batch, one-shot iterator."""
    path = tmp_path / "adult.data"
    path.write_text("39,State-gov,<=50K\n50,Self-emp,>50K\n38,Private,<=50K\n")
    columns = ["age", "workclass", "income_bracket"]

    def parse_csv(value):
        fields = tf.decode_csv(value, record_defaults=[[0], [""], [""]])
        features = dict(zip(columns, fields))
        labels = features.pop("income_bracket")
        return features, tf.equal(labels, ">50K")

    dataset = tf.data.TextLineDataset(str(path)).map(parse_csv).batch(2)
    features, labels = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first = sess.run([features, labels])
        second = sess.run([features, labels])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(labels)
    assert first[0]["age"].tolist() == [39, 50]
    assert first[1].tolist() == [False, True]
    assert second[0]["workclass"].tolist() == [b"Private"]


def test_numbers_and_edges_as_tensorflow_parses_them():
    """strings::safe_strto32 and safe_strtof's rules: spaces around numbers (line breaks too,
    inside quotes), '+' only for reals, "inf"/"nan" in any case but not "infinity",
    hexadecimal integers as reals, 32 characters or more refused; an empty record has no
    field; a quoted last field followed by the delimiter leaves an empty field."""
    def run(records, defaults, **kwargs):
        with tf.Session() as sess:
            return sess.run(tf.decode_csv(records, defaults, **kwargs))

    floats = run(['"\n 1.5 "', "+2", "-INF", "nan", "0x1A", "-0x10"], [[0.0]])[0]
    assert floats[:2].tolist() == [1.5, 2.0] and floats[2] == -np.inf
    assert np.isnan(floats[3]) and floats[4:].tolist() == [26.0, -16.0]
    for bad, default in (("+5", [0]), ("infinity", [0.0]), ("1" * 32, [0.0]), ("--1", [0.0])):
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not a valid"):
            run([bad], [default])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 1 fields but have 0"):
        run([""], [[0]])
    assert [c.tolist() for c in run(['"a",'], [["x"], ["y"]])] == [[b"a"], [b"y"]]
    defaults = tf.placeholder(tf.int32)  # rank unknown while building: the kernel checks
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Each record default should be at most rank 1"):
            sess.run(tf.decode_csv(["1"], [defaults]), {defaults: [[1]]})
