"""tf.py_func: a Python function as an op of the graph (PyFunc, graph/ops/script_ops.cpp).

The op runs where the graph places it, and its device calls back into this interpreter, taking
the GIL for each call (the thread waiting in Session.run has released it). As in TensorFlow, it
runs only on a device of this process: a Session() of its own, or a tf.train.Server this
program started (between-graph replication's usual worker); on another process's device it
fails with FailedPreconditionError. The function gets numpy values and returns a value or a
list of them, each of the dtype Tout declares (numpy's own dtype: a Python float is float64),
else InvalidArgumentError. Its exceptions fail the step: StopIteration as OutOfRangeError,
ValueError and TypeError as InvalidArgumentError, others as UnknownError. Functions stay
registered for the life of the process."""

import itertools
import threading

import numpy as np

from . import dtypes as _dtypes
from .framework import convert_to_tensor
from .ops import _make

_functions = {}
_lock = threading.Lock()
_tokens = itertools.count()


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TensorFlow's names
    """An op calling `func(*values of inp)`; its outputs are of the dtypes `Tout` (one dtype:
    one tensor; a list: a list of tensors). `stateful=False` lets the graph treat it as a pure
    function."""
    if not callable(func):
        raise TypeError("py_func: func must be callable, got %r" % (func,))
    single = not isinstance(Tout, (list, tuple))
    types = [_dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    inputs = [convert_to_tensor(x) for x in inp]
    with _lock:
        token = "pyfunc_%d" % next(_tokens)
        _functions[token] = func
    op = _make("PyFunc" if stateful else "PyFuncStateless", [inputs],
               {"token": token, "Tin": [t.dtype.as_datatype_enum for t in inputs],
                "Tout": [t.as_datatype_enum for t in types]}, name=name or "PyFunc")
    return op.outputs[0] if single else list(op.outputs)


def _call(token, args):
    """Called by the PyFunc kernel (python/bindings/script_bindings.cpp)."""
    with _lock:
        func = _functions.get(token)
    if func is None:
        raise ValueError("callback %s is not found" % token)
    result = func(*args)
    if result is None:
        return []
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    return [_convert(v) for v in values]


def _convert(value, dtype=None):
    """`value` as a numpy array the kernel takes: numpy's own dtype unless `dtype` is given,
    strings as objects holding bytes."""
    if dtype is not None and _dtypes.as_dtype(dtype) == _dtypes.string:
        array = np.asarray(value, dtype=object)
    else:
        array = np.asarray(value, dtype=None if dtype is None
                           else _dtypes.as_dtype(dtype).as_numpy_dtype, order="C")
    if array.dtype.kind in ("U", "S", "O"):
        array = np.asarray(np.vectorize(lambda s: s.encode() if isinstance(s, str) else s,
                                        otypes=[object])(array) if array.size
                           else array.astype(object), dtype=object)
    return array
