"""tf.SparseTensor, tf.SparseTensorValue and tf.sparse_placeholder, as TensorFlow 1.x defines
them: a sparse tensor is three dense ones (int64 `indices` [N, rank], `values` [N], int64
`dense_shape` [rank]); feeding a SparseTensor feeds the three, fetching one returns a
SparseTensorValue. nn.embedding_lookup_sparse reads its ids (and weights) from them."""

import collections

import numpy as np

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: values[i] at position indices[i] of a tensor of shape dense_shape."""

    def __init__(self, indices, values, dense_shape):
        self._indices = _as_int64(indices, "indices")
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = _as_int64(dense_shape, "dense_shape")
        if self._indices.shape.ndims not in (None, 2):
            raise ValueError("SparseTensor: indices must be a matrix [N, rank], got shape %s"
                             % self._indices.shape)
        if self._values.shape.ndims not in (None, 1):
            raise ValueError("SparseTensor: values must be a vector, got shape %s"
                             % self._values.shape)
        if self._dense_shape.shape.ndims not in (None, 1):
            raise ValueError("SparseTensor: dense_shape must be a vector, got shape %s"
                             % self._dense_shape.shape)

    @classmethod
    def from_value(cls, value):
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def op(self):
        return self._values.op

    def get_shape(self):
        from .framework import TensorShape
        rows = self._dense_shape.shape.as_list()[0] if self._dense_shape.shape.ndims else None
        return TensorShape(None if rows is None else [None] * rows)

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)


def _as_int64(value, what):
    if isinstance(value, Tensor):
        if value.dtype != _dtypes.int64:
            raise TypeError("SparseTensor: %s must be int64, got %s" % (what, value.dtype.name))
        return value
    return convert_to_tensor(np.asarray(value, dtype=np.int64))


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor to feed: placeholders for its values, indices and dense_shape (fed
    together from a SparseTensorValue or an (indices, values, dense_shape) tuple)."""
    from .framework import name_scope
    from .ops import placeholder
    rank = None
    if shape is not None:
        rank = len(shape)
    with name_scope(name, "SparseTensor"):
        values = placeholder(dtype, [None], name="values")
        indices = placeholder(_dtypes.int64, [None, rank], name="indices")
        dense_shape = placeholder(_dtypes.int64, [rank], name="shape")
    return SparseTensor(indices, values, dense_shape)


def _expand_feeds(feed_dict):
    """The feed_dict's items with each SparseTensor key replaced by its three tensors."""
    for key, value in feed_dict.items():
        if isinstance(key, SparseTensor):
            if not isinstance(value, (tuple, list)) or len(value) != 3:
                raise TypeError("The value fed to a SparseTensor must be a SparseTensorValue "
                                "or an (indices, values, dense_shape) tuple, got %r" % (value,))
            indices, values, dense_shape = value
            yield key.indices, indices
            yield key.values, values
            yield key.dense_shape, dense_shape
        else:
            yield key, value
