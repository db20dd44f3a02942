"""Sparse lookups and updates, as TensorFlow 1.x's state_ops.scatter_*, array_ops.unique,
gather_nd, scatter_nd and math_ops.sparse_segment_*: tf.scatter_update/add/sub/mul/div/min/max
(rows of a variable updated in place, where the variable lives), tf.scatter_nd_update/add/sub
(the same for N-dimensional positions), tf.gather_nd, tf.scatter_nd,
tf.tensor_scatter_update/add/sub, tf.segment_sum/mean/prod/min/max,
tf.unsorted_segment_max/min/prod/mean/sqrt_n, tf.sparse_segment_sum/mean/sqrt_n, tf.unique,
tf.dynamic_partition/dynamic_stitch and tf.sparse_to_dense (graph/ops/sparse_ops.hpp,
scatter_nd_ops.hpp, segment_ops.hpp)."""

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


def _tensor(value, dtype=None):
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, dtype=dtype) if dtype is not None else \
        convert_to_tensor(value)


def gather_nd(params, indices, name=None, batch_dims=0):
    """tf.gather_nd: output[i...] = params[indices[i..., :]], of shape indices.shape[:-1] +
    params.shape[K:] for indices of shape [..., K] (int32 or int64). An index outside params is
    InvalidArgumentError naming it."""
    if batch_dims != 0:
        raise ValueError("gather_nd: batch_dims=%r is not supported by troupe (only 0)"
                         % (batch_dims,))
    params = _tensor(params)
    return _make("GatherNd", [params, _indices(indices, "gather_nd")], {}, name).outputs[0]


def scatter_nd(indices, updates, shape, name=None):
    """tf.scatter_nd: a zero tensor of `shape` with each slice of `updates` added at its index
    (duplicates sum); updates has shape indices.shape[:-1] + shape[K:]."""
    indices = _indices(indices, "scatter_nd")
    shape = _tensor(shape, indices.dtype)
    if shape.dtype != indices.dtype:
        raise TypeError("scatter_nd: shape must have the indices' dtype %s, got %s"
                        % (indices.dtype.name, shape.dtype.name))
    return _make("ScatterNd", [indices, _tensor(updates), shape], {}, name).outputs[0]


def _scatter_nd(kind, ref, indices, updates, use_locking, name):
    what = "scatter_nd_" + kind.lower()
    ref = _ref(ref, what)
    if not isinstance(updates, Tensor):
        updates = convert_to_tensor(np.asarray(updates, dtype=ref.dtype.as_numpy_dtype))
    return _make("ScatterNd" + kind, [ref, _indices(indices, what), updates],
                 {"use_locking": bool(use_locking)}, name).outputs[0]


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    """ref[indices[i..., :]] = updates[i...], in place where the variable lives; returns ref."""
    return _scatter_nd("Update", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    """ref[indices[i..., :]] += updates[i...] (duplicates sum); returns ref."""
    return _scatter_nd("Add", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    return _scatter_nd("Sub", ref, indices, updates, use_locking, name)


def _tensor_scatter(kind, tensor, indices, updates, name):
    tensor = _tensor(tensor)
    updates = _tensor(updates, tensor.dtype)
    return _make("TensorScatter" + kind,
                 [tensor, _indices(indices, "tensor_scatter_" + kind.lower()), updates], {},
                 name).outputs[0]


def tensor_scatter_update(tensor, indices, updates, name=None):
    """A copy of `tensor` with updates[i...] written at indices[i..., :]."""
    return _tensor_scatter("Update", tensor, indices, updates, name)


def tensor_scatter_add(tensor, indices, updates, name=None):
    return _tensor_scatter("Add", tensor, indices, updates, name)


def tensor_scatter_sub(tensor, indices, updates, name=None):
    return _tensor_scatter("Sub", tensor, indices, updates, name)


def _sparse_segment(reduction, data, indices, segment_ids, name, num_segments):
    what = "sparse_segment_" + {"Sum": "sum", "Mean": "mean", "SqrtN": "sqrt_n"}[reduction]
    data = _tensor(data)
    indices = _indices(indices, what)
    segment_ids = _tensor(segment_ids, _dtypes.int32)
    if segment_ids.dtype != _dtypes.int32:
        raise TypeError("%s: segment_ids must be int32, got %s"
                        % (what, segment_ids.dtype.name))
    if num_segments is None:
        return _make("SparseSegment" + reduction, [data, indices, segment_ids], {},
                     name).outputs[0]
    if not isinstance(num_segments, Tensor) and int(num_segments) < 0:
        raise ValueError("Cannot specify a negative value for num_segments")
    return _make("SparseSegment%sWithNumSegments" % reduction,
                 [data, indices, segment_ids, _num_segments(num_segments)], {}, name).outputs[0]


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None):
    """output[s] = the sum of data[indices[i]] over the i with segment_ids[i] == s (segment ids
    sorted; segment_ids[-1] + 1 rows, or num_segments; an empty segment is zero)."""
    return _sparse_segment("Sum", data, indices, segment_ids, name, num_segments)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None):
    """As sparse_segment_sum, divided by each segment's count."""
    return _sparse_segment("Mean", data, indices, segment_ids, name, num_segments)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None):
    """As sparse_segment_sum, divided by the square root of each segment's count."""
    return _sparse_segment("SqrtN", data, indices, segment_ids, name, num_segments)


def _segment_ids(segment_ids, what):
    ids = _tensor(segment_ids)
    if ids.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError("%s: segment_ids must be int32 or int64, got %s" % (what, ids.dtype.name))
    return ids


def _segment(reduction, data, segment_ids, name):
    what = "segment_" + reduction.lower()
    return _make("Segment" + reduction, [_tensor(data), _segment_ids(segment_ids, what)], {},
                 name).outputs[0]


def segment_sum(data, segment_ids, name=None):
    """output[i] = the sum of the rows of data whose (sorted) segment id is i; segment_ids[-1]
    + 1 rows, an empty segment 0."""
    return _segment("Sum", data, segment_ids, name)


def segment_mean(data, segment_ids, name=None):
    return _segment("Mean", data, segment_ids, name)


def segment_prod(data, segment_ids, name=None):
    """As segment_sum with products; an empty segment is 1."""
    return _segment("Prod", data, segment_ids, name)


def segment_min(data, segment_ids, name=None):
    return _segment("Min", data, segment_ids, name)


def segment_max(data, segment_ids, name=None):
    return _segment("Max", data, segment_ids, name)


def _num_segments(num_segments):
    if isinstance(num_segments, Tensor):
        return num_segments
    return np.int32(num_segments) if int(num_segments) < 2**31 else np.int64(num_segments)


def _unsorted_segment(reduction, data, segment_ids, num_segments, name):
    what = "unsorted_segment_" + reduction.lower()
    return _make("UnsortedSegment" + reduction,
                 [_tensor(data), _segment_ids(segment_ids, what), _num_segments(num_segments)],
                 {}, name).outputs[0]


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The maximum of the slices of data by segment id (a prefix of data's shape, in any
    order; negative ids dropped); an empty segment is the dtype's lowest value."""
    return _unsorted_segment("Max", data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return _unsorted_segment("Min", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    return _unsorted_segment("Prod", data, segment_ids, num_segments, name)


def _segment_counts(data, segment_ids, num_segments):
    """How many slices each segment has, at least 1, shaped to divide the sums (TensorFlow's
    _unsorted_segment_N)."""
    from .ops import fill, maximum, ones, reshape, shape, unsorted_segment_sum
    from .array_ops import concat, rank
    counts = unsorted_segment_sum(ones(shape(segment_ids), dtype=data.dtype), segment_ids,
                                  num_segments)
    if data.shape.ndims is not None and segment_ids.shape.ndims is not None:
        column = [-1] + [1] * (data.shape.ndims - segment_ids.shape.ndims)
    else:
        column = concat([[-1], fill(reshape(rank(data) - rank(segment_ids), [1]), 1)], 0)
    return maximum(reshape(counts, column), 1)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the slices of data by segment id; an empty segment is 0."""
    from .framework import name_scope
    from .ops import unsorted_segment_sum
    with name_scope(name, "UnsortedSegmentMean"):
        data = _tensor(data)
        ids = _segment_ids(segment_ids, "unsorted_segment_mean")
        return unsorted_segment_sum(data, ids, num_segments) / \
            _segment_counts(data, ids, num_segments)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of the slices of data by segment id over the square root of their count."""
    from .framework import name_scope
    from .ops import sqrt, unsorted_segment_sum
    with name_scope(name, "UnsortedSegmentSqrtN"):
        data = _tensor(data)
        ids = _segment_ids(segment_ids, "unsorted_segment_sqrt_n")
        return unsorted_segment_sum(data, ids, num_segments) / \
            sqrt(_segment_counts(data, ids, num_segments))
