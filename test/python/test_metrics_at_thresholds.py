"""tf.metrics at thresholds: the confusion counts, precision and recall at given thresholds,
sensitivity_at_specificity and specificity_at_sensitivity — TensorFlow 1.x's metrics_test
cases for them, ported."""

import numpy as np
import pytest

import troupe as tf


class SpecificityAtSensitivityTest(tf.test.TestCase):

    def testAllCorrect(self):
        inputs = np.random.randint(0, 2, size=(100, 1))
        predictions = tf.constant(inputs, dtype=tf.float32)
        labels = tf.constant(inputs)
        specificity, update_op = tf.metrics.specificity_at_sensitivity(
            labels, predictions, sensitivity=0.7)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertEqual(1, sess.run(update_op))
            self.assertEqual(1, sess.run(specificity))

    def testSomeCorrectHighSensitivity(self):
        predictions = tf.constant([0.1, 0.2, 0.4, 0.3, 0.0, 0.1, 0.45, 0.5, 0.8, 0.9],
                                  dtype=tf.float32)
        labels = tf.constant([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        specificity, update_op = tf.metrics.specificity_at_sensitivity(
            labels, predictions, sensitivity=0.8)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(1.0, sess.run(update_op), 6)
            self.assertAlmostEqual(1.0, sess.run(specificity), 6)

    def testSomeCorrectLowSensitivity(self):
        predictions = tf.constant([0.1, 0.2, 0.4, 0.3, 0.0, 0.1, 0.2, 0.2, 0.26, 0.26],
                                  dtype=tf.float32)
        labels = tf.constant([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        specificity, update_op = tf.metrics.specificity_at_sensitivity(
            labels, predictions, sensitivity=0.4)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(0.6, sess.run(update_op), 6)
            self.assertAlmostEqual(0.6, sess.run(specificity), 6)

    def testWeighted1d_multipleLabelDtypes(self):
        for label_dtype in (tf.bool, tf.int32, tf.float32):
            with tf.Graph().as_default():
                predictions = tf.constant([0.1, 0.2, 0.4, 0.3, 0.0, 0.1, 0.2, 0.2, 0.26, 0.26],
                                          dtype=tf.float32)
                labels = tf.cast([0, 0, 0, 0, 0, 1, 1, 1, 1, 1], dtype=label_dtype)
                weights = tf.constant([3])
                specificity, update_op = tf.metrics.specificity_at_sensitivity(
                    labels, predictions, weights=weights, sensitivity=0.4)
                with tf.Session() as sess:
                    sess.run(tf.local_variables_initializer())
                    self.assertAlmostEqual(0.6, sess.run(update_op), 6)
                    self.assertAlmostEqual(0.6, sess.run(specificity), 6)

    def testWeighted2d(self):
        predictions = tf.constant([0.1, 0.2, 0.4, 0.3, 0.0, 0.1, 0.2, 0.2, 0.26, 0.26],
                                  dtype=tf.float32)
        labels = tf.constant([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        weights = tf.constant([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        specificity, update_op = tf.metrics.specificity_at_sensitivity(
            labels, predictions, weights=weights, sensitivity=0.4)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(8.0 / 15.0, sess.run(update_op), 6)
            self.assertAlmostEqual(8.0 / 15.0, sess.run(specificity), 6)


class SensitivityAtSpecificityTest(tf.test.TestCase):

    def testVars(self):
        tf.metrics.sensitivity_at_specificity(
            predictions=tf.ones((10, 1)), labels=tf.ones((10, 1)), specificity=0.7)
        names = sorted(v.op.name for v in tf.local_variables())
        self.assertEqual(["sensitivity_at_specificity/false_negatives",
                          "sensitivity_at_specificity/false_positives",
                          "sensitivity_at_specificity/true_negatives",
                          "sensitivity_at_specificity/true_positives"], names)

    def testAllCorrect(self):
        inputs = np.random.randint(0, 2, size=(100, 1))
        predictions = tf.constant(inputs, dtype=tf.float32)
        labels = tf.constant(inputs)
        sensitivity, update_op = tf.metrics.sensitivity_at_specificity(
            labels, predictions, specificity=0.7)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(1.0, sess.run(update_op), 6)
            self.assertAlmostEqual(1.0, sess.run(sensitivity), 6)

    def testSomeCorrectHighSpecificity(self):
        predictions = tf.constant([0.0, 0.1, 0.2, 0.3, 0.4, 0.1, 0.45, 0.5, 0.8, 0.9],
                                  dtype=tf.float32)
        labels = tf.constant([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        sensitivity, update_op = tf.metrics.sensitivity_at_specificity(
            labels, predictions, specificity=0.8)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(0.8, sess.run(update_op), 6)
            self.assertAlmostEqual(0.8, sess.run(sensitivity), 6)

    def testSomeCorrectLowSpecificity(self):
        predictions = tf.constant([0.0, 0.1, 0.2, 0.3, 0.4, 0.01, 0.02, 0.25, 0.26, 0.26],
                                  dtype=tf.float32)
        labels = tf.constant([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
        sensitivity, update_op = tf.metrics.sensitivity_at_specificity(
            labels, predictions, specificity=0.4)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            self.assertAlmostEqual(0.6, sess.run(update_op), 6)
            self.assertAlmostEqual(0.6, sess.run(sensitivity), 6)

    def testWeighted_multipleLabelDtypes(self):
        for label_dtype in (tf.bool, tf.int32, tf.float32):
            with tf.Graph().as_default():
                predictions = tf.constant(
                    [0.0, 0.1, 0.2, 0.3, 0.4, 0.01, 0.02, 0.25, 0.26, 0.26], dtype=tf.float32)
                labels = tf.cast([0, 0, 0, 0, 0, 1, 1, 1, 1, 1], dtype=label_dtype)
                weights = tf.constant([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
                sensitivity, update_op = tf.metrics.sensitivity_at_specificity(
                    labels, predictions, weights=weights, specificity=0.4)
                with tf.Session() as sess:
                    sess.run(tf.local_variables_initializer())
                    self.assertAlmostEqual(0.675, sess.run(update_op), 6)
                    self.assertAlmostEqual(0.675, sess.run(sensitivity), 6)

    def testBadArguments(self):
        with self.assertRaisesRegex(ValueError, r"`specificity` must be in the range \[0, 1\]"):
            tf.metrics.sensitivity_at_specificity(tf.ones([2]), tf.ones([2]), specificity=1.5)
        with self.assertRaisesRegex(ValueError, r"`sensitivity` must be in the range \[0, 1\]"):
            tf.metrics.specificity_at_sensitivity(tf.ones([2]), tf.ones([2]), sensitivity=-0.1)
        with self.assertRaisesRegex(ValueError, "num_thresholds must be > 1"):
            tf.metrics.sensitivity_at_specificity(tf.ones([2]), tf.ones([2]), 0.5,
                                                  num_thresholds=1)


class PrecisionRecallThresholdsTest(tf.test.TestCase):

    def _both(self, labels, predictions, thresholds, weights=None):
        prec, prec_op = tf.metrics.precision_at_thresholds(labels, predictions, thresholds,
                                                           weights=weights)
        rec, rec_op = tf.metrics.recall_at_thresholds(labels, predictions, thresholds,
                                                      weights=weights)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([prec_op, rec_op])
            return sess.run([prec, rec])

    def testAllCorrect(self):
        inputs = np.random.randint(0, 2, size=(100, 1))
        prec, rec = self._both(tf.constant(inputs), tf.constant(inputs, dtype=tf.float32),
                               [0.5])
        self.assertAllClose([1.0], prec)
        self.assertAllClose([1.0], rec)

    def testSomeCorrect_multipleLabelDtypes(self):
        for label_dtype in (tf.bool, tf.int32, tf.float32):
            with tf.Graph().as_default():
                predictions = tf.constant([1, 0, 1, 0], shape=(1, 4), dtype=tf.float32)
                labels = tf.cast(tf.constant([0, 1, 1, 0], shape=(1, 4)), dtype=label_dtype)
                prec, rec = self._both(labels, predictions, [0.5])
                self.assertAllClose([0.5], prec)
                self.assertAllClose([0.5], rec)

    def testAllIncorrect(self):
        inputs = np.random.randint(0, 2, size=(100, 1))
        prec, rec = self._both(tf.constant(1 - inputs, dtype=tf.float32),
                               tf.constant(inputs, dtype=tf.float32), [0.5])
        self.assertAllClose([0.0], prec)
        self.assertAllClose([0.0], rec)

    def testWeights1d(self):
        predictions = tf.constant([[1, 0], [1, 0]], shape=(2, 2), dtype=tf.float32)
        labels = tf.constant([[0, 1], [1, 0]], shape=(2, 2))
        weights = tf.constant([[0], [1]], shape=(2, 1), dtype=tf.float32)
        prec, rec = self._both(labels, predictions, [0.5, 1.1], weights)
        self.assertAllClose([1.0, 0.0], prec, atol=1e-5)
        self.assertAllClose([1.0, 0.0], rec, atol=1e-5)

    def testWeights2d(self):
        predictions = tf.constant([[1, 0], [1, 0]], shape=(2, 2), dtype=tf.float32)
        labels = tf.constant([[0, 1], [1, 0]], shape=(2, 2))
        weights = tf.constant([[0, 0], [1, 1]], shape=(2, 2), dtype=tf.float32)
        prec, rec = self._both(labels, predictions, [0.5, 1.1], weights)
        self.assertAllClose([1.0, 0.0], prec, atol=1e-5)
        self.assertAllClose([1.0, 0.0], rec, atol=1e-5)

    def testExtremeThresholds(self):
        predictions = tf.constant([1, 0, 1, 0], shape=(1, 4), dtype=tf.float32)
        labels = tf.constant([0, 1, 1, 1], shape=(1, 4))
        prec, rec = self._both(labels, predictions, [-1.0, 2.0])
        self.assertAllClose([0.75, 0.0], prec)
        self.assertAllClose([1.0, 0.0], rec)

    def testZeroLabelsPredictions(self):
        prec, rec = self._both(tf.zeros([4]), tf.zeros([4], dtype=tf.float32), [0.5])
        self.assertAllClose([0.0], prec, atol=1e-5)
        self.assertAllClose([0.0], rec, atol=1e-5)

    def testWithMultipleUpdates(self):
        num_samples, batch_size = 1000, 10
        np.random.seed(1)
        predictions_np = np.random.rand(num_samples)
        labels_np = np.random.randint(0, 2, size=num_samples)
        thresholds = [0.3]
        tp = float(np.sum((predictions_np > 0.3) & (labels_np == 1)))
        fp = float(np.sum((predictions_np > 0.3) & (labels_np == 0)))
        fn = float(np.sum((predictions_np <= 0.3) & (labels_np == 1)))
        predictions = tf.placeholder(tf.float32, [batch_size])
        labels = tf.placeholder(tf.int64, [batch_size])
        prec, prec_op = tf.metrics.precision_at_thresholds(labels, predictions, thresholds)
        rec, rec_op = tf.metrics.recall_at_thresholds(labels, predictions, thresholds)
        with self.cached_session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(num_samples // batch_size):
                rows = slice(i * batch_size, (i + 1) * batch_size)
                sess.run([prec_op, rec_op], feed_dict={predictions: predictions_np[rows],
                                                       labels: labels_np[rows]})
            self.assertAllClose([tp / (tp + fp)], sess.run(prec), rtol=1e-5)
            self.assertAllClose([tp / (tp + fn)], sess.run(rec), rtol=1e-5)


_PREDICTIONS = ((0.9, 0.2, 0.8, 0.1), (0.2, 0.9, 0.7, 0.6), (0.1, 0.2, 0.4, 0.3))
_LABELS = ((0, 1, 1, 0), (1, 0, 0, 0), (0, 0, 0, 0))


@pytest.mark.parametrize("metric, unweighted", [
    (tf.metrics.true_positives_at_thresholds, (3, 1, 0)),
    (tf.metrics.false_positives_at_thresholds, (7, 4, 2)),
    (tf.metrics.true_negatives_at_thresholds, (2, 5, 7)),
    (tf.metrics.false_negatives_at_thresholds, (0, 2, 3)),
])
def test_confusion_counts_at_thresholds(metric, unweighted):
    """TensorFlow's *AtThresholdsTest: unweighted, then with weights 37."""
    predictions, labels = tf.constant(_PREDICTIONS), tf.constant(_LABELS)
    value, update_op = metric(predictions=predictions, labels=labels,
                              thresholds=[0.15, 0.5, 0.85])
    weighted, weighted_op = metric(predictions=predictions, labels=labels, weights=37.0,
                                   thresholds=[0.15, 0.5, 0.85])
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_array_equal(sess.run(value), (0, 0, 0))
        np.testing.assert_array_equal(sess.run(update_op), unweighted)
        np.testing.assert_array_equal(sess.run(value), unweighted)
        np.testing.assert_allclose(sess.run(weighted_op), np.array(unweighted) * 37.0)
    with pytest.raises(ValueError, match="thresholds must be a non-empty list of numbers"):
        metric(predictions=predictions, labels=labels, thresholds=0.5)


def test_weights_are_squeezed_or_expanded_then_broadcast_as_tensorflow_does():
    """Per-row weights [3] against predictions [3, 3] weigh rows (a last dimension added), and
    weights [N, 1] against predictions [N] are squeezed (TensorFlow's
    _remove_squeezable_dimensions, then broadcast_weights)."""
    predictions = tf.constant([[0.9, 0.1, 0.8], [0.9, 0.9, 0.1], [0.1, 0.1, 0.1]])
    labels = tf.constant([[1, 0, 1], [1, 1, 0], [0, 0, 0]])
    tp, tp_op = tf.metrics.true_positives_at_thresholds(labels, predictions, [0.5],
                                                        weights=tf.constant([1.0, 0.0, 5.0]))
    flat_tp, flat_op = tf.metrics.true_positives_at_thresholds(
        tf.constant([1, 1, 0]), tf.constant([0.9, 0.9, 0.1]), [0.5],
        weights=tf.constant([[2.0], [3.0], [4.0]]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_allclose(sess.run(tp_op), [2.0])  # row 0's two, row 1 weighs 0
        np.testing.assert_allclose(sess.run(flat_op), [5.0])
    with pytest.raises(ValueError, match="weights can not be broadcast to values"):
        tf.metrics.true_positives_at_thresholds(labels, predictions, [0.5],
                                                weights=tf.constant([1.0, 2.0]))
