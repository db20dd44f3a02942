"""Partitioned variables, as TensorFlow 1.x makes them: tf.get_variable(..., partitioner=p)
splits a variable along one axis into shards, variables "<name>/part_<i>" that a
replica_device_setter places on the ps tasks round-robin like any others, and returns a
PartitionedVariable. Checkpoints hold the whole variable under its name (each shard records
where it sits in the whole), so a checkpoint restores into any number of shards.

The partitioners: fixed_size_partitioner, variable_axis_size_partitioner and
min_max_variable_partitioner, with TensorFlow's rules."""

import math

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from .framework import TensorShape


class _PartitionInfo:
    """What an initializer is told about the shard it initializes: the whole variable's shape
    and the shard's offset in it (variance scaling computes its fans from the whole)."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)


class PartitionedVariable:
    """A variable split along one axis into shards (tf.PartitionedVariable): iterate it, or
    list(it), for the shard Variables; `as_tensor()` (or using it as a Tensor) concatenates
    them. nn.embedding_lookup takes it as a sharded table ("div" matches how it is split)."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        self._name = name
        self._shape = TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._variable_list = list(variable_list)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        return len(self._variable_list)

    def _get_variable_list(self):
        return list(self._variable_list)

    def _get_partitions(self):
        return list(self._partitions)

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _axis(self):
        return next((i for i, p in enumerate(self._partitions) if p > 1), 0)

    def as_tensor(self):
        """The whole variable: the shards concatenated along the partitioned axis."""
        from .array_ops import concat
        from .framework import name_scope
        from .ops import identity
        if len(self._variable_list) == 1:
            return identity(self._variable_list[0])
        with name_scope(None, "ConcatPartitions"):
            return concat([v.value() for v in self._variable_list], self._axis())

    def _as_graph_element(self):
        return self.as_tensor()

    def __repr__(self):
        return "<tf.PartitionedVariable '%s' shape=%s dtype=%s partitions=%s>" % (
            self._name, self._shape, self._dtype.name, self._partitions)


def _slices(full_shape, num, axis):
    """(offset, shape) of each of `num` shards along `axis`: the first (dim % num) one row
    longer, as TensorFlow splits them."""
    excess = full_shape[axis] % num
    base = full_shape[axis] // num
    offset = [0] * len(full_shape)
    for i in range(num):
        shape = list(full_shape)
        shape[axis] = base + (1 if i < excess else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


def _create_partitioned(graph, full_name, name, shape, dtype, initializer, regularizer,
                        trainable, collections, partitioner, scope_names):
    from .framework import GraphKeys, name_scope
    from .variables import _variable_built_beside
    if shape is None:
        raise ValueError("Shape of a new partitioned variable (%s) must be fully defined, but "
                         "instead was None." % full_name)
    full_shape = [int(d) for d in shape]
    if not full_shape:
        raise ValueError("A partitioned Variable must have rank at least 1, shape: []")
    partitions = partitioner(shape=TensorShape(full_shape), dtype=dtype)
    if not isinstance(partitions, (list, tuple)) or len(partitions) != len(full_shape) or \
            any(not isinstance(p, (int, np.integer)) or p < 1 for p in partitions):
        raise ValueError("Partitioner returned %r for %s of shape %s: expected one int >= 1 "
                         "per dimension" % (partitions, full_name, full_shape))
    partitions = [int(p) for p in partitions]
    if sum(1 for p in partitions if p > 1) > 1:
        raise ValueError("Can only slice a variable along one dimension: shape: %s, "
                         "partitioning: %s" % (full_shape, partitions))
    axis = next((i for i, p in enumerate(partitions) if p > 1), 0)
    if partitions[axis] > full_shape[axis]:
        raise ValueError("Partitioner asked for %d shards of %s along dimension %d, which has "
                         "only %d" % (partitions[axis], full_name, axis, full_shape[axis]))
    if not callable(initializer):
        raise ValueError("A partitioned variable (%s) needs a callable initializer" % full_name)
    prefix = "/".join(scope_names) + "/" if scope_names else ""
    parts = []
    for i, (offset, part_shape) in enumerate(_slices(full_shape, partitions[axis], axis)):
        part_name = "%s/part_%d" % (name, i)
        v = _variable_built_beside(graph, prefix, part_name, list(part_shape), dtype, initializer,
                                   trainable, collections,
                                   partition_info=_PartitionInfo(full_shape, offset))
        v._save_slice_info = (full_name, full_shape, offset, part_shape)
        _troupe.set_variable_slice(graph._scope, v.op.name, full_name, full_shape, offset)
        parts.append(v)
        if regularizer is not None:
            with name_scope(part_name + "/Regularizer"):
                loss = regularizer(v)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return PartitionedVariable(full_name, full_shape, dtype, parts, partitions)


def _check_axis(shape, axis, what):
    if not isinstance(axis, int) or not 0 <= axis < len(shape.as_list()):
        raise ValueError("%s: axis %r is not a dimension of shape %s" % (what, axis, shape))


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner of `num_shards` shards along `axis` (fewer if the axis is shorter)."""
    if not isinstance(num_shards, int) or num_shards < 1:
        raise ValueError("fixed_size_partitioner: num_shards must be an int >= 1, got %r"
                         % (num_shards,))

    def _partitioner(shape, dtype=None):
        shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
        _check_axis(shape, axis, "fixed_size_partitioner")
        partitions = [1] * len(shape.as_list())
        partitions[axis] = min(num_shards, shape.as_list()[axis])
        return partitions
    return _partitioner


def _element_bytes(dtype, bytes_per_string_element):
    dtype = _dtypes.as_dtype(dtype)
    if dtype == _dtypes.string:
        return bytes_per_string_element
    return np.dtype(dtype.as_numpy_dtype).itemsize


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner that splits along `axis` into as few shards as keep each under
    max_shard_bytes (at most max_shards, and at most one shard per row of the axis)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
        _check_axis(shape, axis, "variable_axis_size_partitioner")
        dims = shape.as_list()
        slice_elements = int(np.prod(dims[:axis] + dims[axis + 1:]))
        slice_bytes = slice_elements * _element_bytes(dtype, bytes_per_string_element)
        slices_per_shard = max(1, max_shard_bytes // max(1, slice_bytes))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards is not None:
            shards = min(shards, max_shards)
        partitions = [1] * len(dims)
        partitions[axis] = max(1, min(shards, dims[axis]))
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner that gives each shard at least min_slice_size bytes, with at most
    max_partitions shards along `axis`."""
    if max_partitions < 1:
        raise ValueError("max_partitions must be >= 1, got %r" % (max_partitions,))

    def _partitioner(shape, dtype):
        shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
        _check_axis(shape, axis, "min_max_variable_partitioner")
        dims = shape.as_list()
        total = int(np.prod(dims)) * _element_bytes(dtype, bytes_per_string_element)
        shards = max(1, min(dims[axis], max_partitions,
                            int(math.ceil(total / float(min_slice_size)))))
        partitions = [1] * len(dims)
        partitions[axis] = shards
        return partitions
    return _partitioner
