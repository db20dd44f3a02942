"""Random ops and the seed rules of TensorFlow 1.x (tf.set_random_seed, seed=).

Every random op draws new numbers each time it runs, from a Philox generator (the C++ kernels,
devices/cpu/random/) seeded by the pair get_seed() gives:
  - a graph seed (tf.set_random_seed) and an op seed: (graph seed, op seed);
  - a graph seed only: (graph seed, the number of ops in the graph so far), so that two ops
    of a program get different streams and every run of it the same ones;
  - an op seed only: (87654321, op seed);
  - neither: random numbers that differ on every run.
So the same program with the same seeds draws the same numbers on every run and every task,
as TensorFlow documents.
"""

import numpy as np

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor, get_default_graph, name_scope
from .ops import _make

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1


def get_seed(op_seed):
    """The (graph seed, op seed) pair for an op given `op_seed`, as TensorFlow 1.x's
    tf.get_seed: (None, None) when neither seed is set."""
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = graph._root.num_nodes()
        seeds = (int(graph_seed), int(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, int(op_seed))
    else:
        return None, None
    if seeds == (0, 0):  # (0, 0) means "seed from the system" to the kernels
        return 0, _MAXINT32
    return seeds


def _seed_attrs(seed):
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool)):
        raise TypeError("seed must be an int or None, got %r" % (seed,))
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


def _shape_input(shape, what):
    if isinstance(shape, Tensor):
        if shape.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError("%s: shape must be int32 or int64, got %s" % (what, shape.dtype.name))
        return shape
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        # Dimensions known only when running, as TensorFlow packs them.
        from .ops import cast, stack
        return stack([cast(d, _dtypes.int32) if isinstance(d, Tensor) else np.int32(d)
                      for d in shape])
    try:
        dims = [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
    except (TypeError, ValueError):
        raise TypeError("%s: shape must be a list of ints or a Tensor, got %r"
                        % (what, shape)) from None
    if any(d < 0 for d in dims):
        raise ValueError("%s: shape %s has a negative dimension" % (what, dims))
    return np.array(dims, dtype=np.int32)


def _float_dtype(dtype, what):
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.float32, _dtypes.float64):
        raise ValueError("%s: dtype must be float32 or float64, got %s" % (what, dtype.name))
    return dtype


def _scaled(op, shape, mean, stddev, dtype, seed, name, default_name):
    dtype = _float_dtype(dtype, default_name)
    with name_scope(name or default_name):
        shape_in = _shape_input(shape, default_name)
        draw = _make(op, [shape_in], dict(_seed_attrs(seed), dtype=dtype.as_datatype_enum))
        value = draw.outputs[0]
        stddev = convert_to_tensor(stddev, dtype=dtype)
        mean = convert_to_tensor(mean, dtype=dtype)
        return value * stddev + mean


def random_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal values of `mean` and `stddev`."""
    return _scaled("RandomStandardNormal", shape, mean, stddev, dtype, seed, name,
                   "random_normal")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal values of `mean` and `stddev`, drawn again where more than two standard
    deviations from the mean."""
    return _scaled("TruncatedNormal", shape, mean, stddev, dtype, seed, name, "truncated_normal")


def random_uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Uniform values in [minval, maxval): floats (maxval defaults to 1) or integers (maxval
    required)."""
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name or "random_uniform"):
        shape_in = _shape_input(shape, "random_uniform")
        if dtype in (_dtypes.int32, _dtypes.int64):
            if maxval is None:
                raise ValueError("Must specify maxval for integer dtype %s" % dtype.name)
            lo = convert_to_tensor(minval, dtype=dtype)
            hi = convert_to_tensor(maxval, dtype=dtype)
            return _make("RandomUniformInt", [shape_in, lo, hi], _seed_attrs(seed)).outputs[0]
        dtype = _float_dtype(dtype, "random_uniform")
        draw = _make("RandomUniform", [shape_in],
                     dict(_seed_attrs(seed), dtype=dtype.as_datatype_enum)).outputs[0]
        lo = convert_to_tensor(minval, dtype=dtype)
        hi = convert_to_tensor(1.0 if maxval is None else maxval, dtype=dtype)
        return draw * (hi - lo) + lo


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension shuffled."""
    value = value if isinstance(value, Tensor) else convert_to_tensor(value)
    return _make("RandomShuffle", [value], _seed_attrs(seed), name).outputs[0]


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """`num_samples` class indices per row of `logits` [batch, classes] (unnormalized log
    probabilities)."""
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    output_dtype = _dtypes.as_dtype(output_dtype or _dtypes.int64)
    samples = num_samples if isinstance(num_samples, Tensor) else \
        np.array(num_samples, dtype=np.int32)
    return _make("Multinomial", [logits, samples],
                 dict(_seed_attrs(seed), output_dtype=output_dtype.as_datatype_enum),
                 name).outputs[0]
