"""Sparse updates of variables and their helpers, as TensorFlow 1.x's state_ops.scatter_* and
array_ops.unique: tf.scatter_update/add/sub/mul/div/min/max (rows of a variable updated in
place, where the variable lives) and tf.unique (graph/ops/sparse_ops.hpp)."""

import collections

import numpy as np

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor
from .ops import _make
from .variables import Variable


def _ref(ref, what):
    if isinstance(ref, Variable):
        return ref._ref
    if isinstance(ref, Tensor) and ref._output.is_ref:
        return ref
    raise TypeError("%s: ref must be a Variable, got %r" % (what, ref))


def _indices(indices, what):
    indices = indices if isinstance(indices, Tensor) else convert_to_tensor(indices)
    if indices.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("%s: indices must be int32 or int64, got %s" % (what, indices.dtype.name))
    return indices


def _scatter(op_type, ref, indices, updates, use_locking, name):
    what = "scatter_" + op_type[len("Scatter"):].lower()
    ref = _ref(ref, what)
    indices = _indices(indices, what)
    if not isinstance(updates, Tensor):
        updates = convert_to_tensor(np.asarray(updates, dtype=ref.dtype.as_numpy_dtype))
    return _make(op_type, [ref, indices, updates], {"use_locking": bool(use_locking)},
                 name).outputs[0]


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i], ...] = updates[i, ...]; a duplicate index keeps the last update."""
    return _scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i], ...] += updates[i, ...]; duplicate indices sum."""
    return _scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    return _scatter("ScatterSub", ref, indices, updates, use_locking, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    return _scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    return _scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    return _scatter("ScatterMin", ref, indices, updates, use_locking, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    return _scatter("ScatterMax", ref, indices, updates, use_locking, name)


_Unique = collections.namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=_dtypes.int32, name=None):
    """The distinct values of the vector x in order of first occurrence (y), and for each
    element of x its position in y (idx): x == gather(y, idx)."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    out_idx = _dtypes.as_dtype(out_idx)
    if out_idx not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("unique: out_idx must be int32 or int64, got %s" % out_idx.name)
    op = _make("Unique", [x], {"out_idx": out_idx.as_datatype_enum}, name)
    return _Unique(op.outputs[0], op.outputs[1])


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits data into num_partitions tensors: the slices whose partitions entry is p, in
    order, go to the p-th (partitions: int32, a prefix of data's shape)."""
    data = data if isinstance(data, Tensor) else convert_to_tensor(data)
    partitions = partitions if isinstance(partitions, Tensor) else convert_to_tensor(
        np.asarray(partitions, np.int32))
    if partitions.dtype != _dtypes.int32:
        raise TypeError("dynamic_partition: partitions must be int32, got %s"
                        % partitions.dtype.name)
    if not isinstance(num_partitions, int) or isinstance(num_partitions, bool) or \
            num_partitions < 1:
        raise ValueError("dynamic_partition: num_partitions must be an int >= 1, got %r"
                         % (num_partitions,))
    return list(_make("DynamicPartition", [data, partitions],
                      {"num_partitions": num_partitions}, name).outputs)


def dynamic_stitch(indices, data, name=None):
    """Interleaves the data tensors: merged[indices[m][i], ...] = data[m][i, ...] (int32
    indices; a later index wins; rows no index names are zero)."""
    if not isinstance(indices, (list, tuple)) or not isinstance(data, (list, tuple)):
        raise TypeError("dynamic_stitch: indices and data must be lists of tensors")
    if len(indices) != len(data) or not indices:
        raise ValueError("dynamic_stitch: expected as many indices as data tensors (at least "
                         "one), got %d and %d" % (len(indices), len(data)))
    indices = [i if isinstance(i, Tensor) else convert_to_tensor(np.asarray(i, np.int32))
               for i in indices]
    for i in indices:
        if i.dtype != _dtypes.int32:
            raise TypeError("dynamic_stitch: indices must be int32, got %s" % i.dtype.name)
    data = [d if isinstance(d, Tensor) else convert_to_tensor(d) for d in data]
    return _make("DynamicStitch", [indices, data], {}, name).outputs[0]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """tf.sparse_to_dense: a dense tensor of `output_shape` holding `default_value`, with
    `sparse_values` (one per index, or one for all) at `sparse_indices` ([N, rank], [N] for a
    vector, or a scalar). With validate_indices, the indices must be in bounds, sorted and
    distinct (InvalidArgumentError naming the first that is not)."""
    values = sparse_values if isinstance(sparse_values, Tensor) else \
        convert_to_tensor(sparse_values)
    indices = sparse_indices if isinstance(sparse_indices, Tensor) else \
        convert_to_tensor(sparse_indices, dtype=_dtypes.int64)
    shape = output_shape if isinstance(output_shape, Tensor) else \
        convert_to_tensor(output_shape, dtype=indices.dtype)
    if shape.dtype != indices.dtype:
        from .ops import cast
        shape = cast(shape, indices.dtype)
    default = default_value if isinstance(default_value, Tensor) else \
        convert_to_tensor(default_value, dtype=values.dtype)
    return _make("SparseToDense", [indices, shape, values, default],
                 {"validate_indices": bool(validate_indices)}, name).outputs[0]


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """tf.sparse_tensor_to_dense: the SparseTensor as a dense tensor, `default_value` where it
    has no value (its indices must be in order: what parse_example's VarLenFeature gives)."""
    from .sparse_tensor import SparseTensor
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("Input must be a SparseTensor, got %r" % (sp_input,))
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values,
                           default_value, validate_indices, name or "SparseToDense")
