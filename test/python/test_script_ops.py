"""tf.py_func: ports of TensorFlow 1.x's py_func_test (values, lists, strings, the errors a
function raises and a result of the wrong dtype), run on this process's device."""

import numpy as np
import pytest

import troupe as tf


def test_py_func_computes_with_numpy():
    x = tf.constant([1.0, 2.0], dtype=tf.float32)
    y = tf.constant([3.0, 4.0], dtype=tf.float32)
    z = tf.py_func(lambda a, b: np.matmul(a.reshape(2, 1), b.reshape(1, 2)).astype(np.float32),
                   [x, y], tf.float32)
    assert z.dtype == tf.float32
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(z), [[3.0, 4.0], [6.0, 8.0]])


def test_py_func_with_a_list_of_outputs_strings_and_stateless():
    x = tf.placeholder(tf.int64, shape=[None])
    total, count = tf.py_func(lambda a: (np.int64(a.sum()), np.int32(a.size)), [x],
                              [tf.int64, tf.int32], stateful=False)
    text = tf.py_func(lambda a: ("sum %d" % a).encode(), [total], tf.string)
    with tf.Session() as sess:
        assert sess.run([total, count], {x: [1, 2, 3]}) == [6, 3]
        assert sess.run(text, {x: [4, 5]}) == b"sum 9"


def test_py_func_errors_have_tensorflow_codes():
    def stop():
        raise StopIteration()

    def bad():
        raise ValueError("no good")

    def broken():
        raise RuntimeError("broken")

    with tf.Session() as sess:
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(tf.py_func(stop, [], tf.int64))
        with pytest.raises(tf.errors.InvalidArgumentError, match="no good"):
            sess.run(tf.py_func(bad, [], tf.int64))
        with pytest.raises(tf.errors.UnknownError, match="broken"):
            sess.run(tf.py_func(broken, [], tf.int64))
        # A Python float is float64, as in TensorFlow: not the float32 declared.
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="0-th value returned by pyfunc_[0-9]+ is float64, but "
                                 "expects float32"):
            sess.run(tf.py_func(lambda: 1.5, [], tf.float32))
    with pytest.raises(TypeError, match="func must be callable"):
        tf.py_func(3, [], tf.int64)


def test_py_func_on_another_process_device_is_not_found_there():
    # As TensorFlow's: the function lives in the process that built the graph.
    import subprocess
    import sys
    program = ("import sys, time, troupe as tf\n"
               "server = tf.train.Server.create_local_server()\n"
               "print(server.target, flush=True)\n"
               "sys.stdin.read()\n")
    from conftest import without_tls_env
    child = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=without_tls_env())
    try:
        target = child.stdout.readline().strip()
        assert target.startswith("troupe://"), target
        value = tf.py_func(lambda: np.int64(1), [], tf.int64)
        with tf.Session(target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="callback pyfunc_[0-9]+ "
                                                                     "is not found"):
                sess.run(value)
    finally:
        child.kill()
        child.wait(timeout=30)
