"""tf.test: TestCase and main, as TensorFlow 1.x's tests use them, on unittest.

Each test method runs in a graph of its own (the default graph is reset before it), so tests
do not see each other's nodes. test_session()/cached_session()/session() give a Session on
that graph, made the default one inside the `with` block; evaluate() runs tensors in the
default session. The assertions are TensorFlow's (assertAllClose, assertAllEqual,
assertRaisesOpError, assertRaisesWithPredicateMatch, ...). `python -m pytest` runs these classes
as well as tf.test.main() does.
"""

import contextlib
import os
import re
import shutil
import tempfile
import unittest

import numpy as np

from . import errors
from .framework import get_default_graph, reset_default_graph


def main(argv=None):
    """Runs the tests of the __main__ module."""
    unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether this process's tasks get a GPU device (troupe's GPUs are CUDA's). The compute
    capability is not checked: troupe's kernels are built for 7.5 and later."""
    from . import _troupe
    return _troupe.gpu_count() > 0


def is_built_with_cuda():
    """Whether this troupe has the CUDA GPU device (docs/gpu.md)."""
    from . import _troupe
    return _troupe.built_with_cuda()


def gpu_device_name():
    """The name of the first GPU device ("/device:GPU:0"), or "" without one."""
    return "/device:GPU:0" if is_gpu_available() else ""


class _NotATest:
    """A method whose name starts with "test" but which test loaders must not run: on the
    class it is not callable, on an instance it is the method."""

    def __init__(self, method):
        self._method = method

    def __get__(self, obj, cls=None):
        return self if obj is None else self._method.__get__(obj, cls)


class TestCase(unittest.TestCase):
    """unittest.TestCase with TensorFlow's sessions and assertions."""

    def setUp(self):
        super().setUp()
        reset_default_graph()
        self._cached_session = None
        self._temp_dir = None

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
        super().tearDown()

    def get_temp_dir(self):
        """A directory of this test's own, removed after it."""
        if self._temp_dir is None:
            self._temp_dir = tempfile.mkdtemp(prefix="troupe-test-")
        return self._temp_dir

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False, target=""):
        """A new Session on `graph` (the default graph), the default session in the block."""
        from .session import Session
        graph = graph or get_default_graph()
        sess = Session(target, graph=graph, config=config)
        with graph.as_default(), sess.as_default():
            try:
                yield sess
            finally:
                sess.close()

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The same Session for the whole test (on the default graph), default in the block."""
        from .session import Session
        graph = graph or get_default_graph()
        if self._cached_session is None or self._cached_session.graph is not graph:
            if self._cached_session is not None:
                self._cached_session.close()
            self._cached_session = Session(graph=graph, config=config)
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    def _test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        return self.cached_session(graph, config, use_gpu, force_gpu)

    test_session = _NotATest(_test_session)

    def evaluate(self, tensors):
        from .session import get_default_session
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # --- assertions ---
    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        a, b = self._as_arrays(a, b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "")

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3, msg=None):
        a, b = self._as_arrays(a, b)
        if a.dtype == np.float32 or b.dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllEqual(self, a, b, msg=None):
        a, b = self._as_arrays(a, b)
        self.assertEqual(a.shape, b.shape, msg or "shapes differ: %s vs %s" % (a.shape, b.shape))
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNear(self, f1, f2, err, msg=None):
        self.assertTrue(abs(f1 - f2) <= err,
                        msg or "%f != %f +/- %f" % (f1, f2, err))

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):
        self.assertEqual(list(np_array.shape), tf_tensor.get_shape().as_list(), msg)

    def assertDeviceEqual(self, device1, device2, msg=None):
        self.assertEqual(str(device1 or ""), str(device2 or ""), msg)

    def assertProtoEquals(self, expected, message, msg=None):
        self.assertEqual(str(expected).split(), str(message).split(), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                text = e.message if isinstance(e, errors.OpError) else str(e)
                return re.search(expected_err_re_or_predicate, text) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError("Exception of type %s: %s does not match"
                                     % (type(e), e)) from e
        else:
            raise AssertionError(exception_type.__name__ + " not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    def assertRaisesRegexp(self, expected_exception, expected_regex, *args, **kwargs):
        return self.assertRaisesRegex(expected_exception, expected_regex, *args, **kwargs)

    def assertItemsEqual(self, first, second, msg=None):
        return self.assertCountEqual(first, second, msg)

    def assertStartsWith(self, actual, expected_start, msg=None):
        self.assertTrue(str(actual).startswith(expected_start),
                        msg or "%r does not start with %r" % (actual, expected_start))

    @staticmethod
    def _as_arrays(a, b):
        return np.asarray(a), np.asarray(b)


def get_temp_dir():
    """TEST_TMPDIR if set, else the system's temporary directory."""
    return os.environ.get("TEST_TMPDIR", tempfile.gettempdir())
