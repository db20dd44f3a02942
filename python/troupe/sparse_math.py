"""Arithmetic on SparseTensors, as TensorFlow 1.x's sparse_ops define it, built from dense ops
that touch only the stored values: tf.sparse_tensor_dense_matmul (a gather of the dense rows
the values need and a segment sum), tf.sparse_reduce_sum (a segment sum over the kept
dimensions' coordinates), tf.sparse_retain (a mask of the values) and tf.sparse_add (sparse +
dense, or sparse + sparse with duplicate positions summed, in row-major order). Gradients flow
to the values and the dense operands through those ops."""

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor, get_default_graph, name_scope
from .sparse_tensor import SparseTensor


def _sparse(value, what):
    if not isinstance(value, SparseTensor):
        raise TypeError("%s must be a SparseTensor, got %r" % (what, value))
    return value


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The product of the sparse matrix sp_a [M, K] and the dense b [K, N]: [M, N]
    (adjoint_a/adjoint_b transpose them first)."""
    from .array_ops import expand_dims, slice as slice_, transpose
    from .ops import cast, gather, reshape, unsorted_segment_sum
    sp_a = _sparse(sp_a, "sp_a")
    with name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]):
        b = convert_to_tensor(b, name="b", dtype=sp_a.dtype)
        if b.shape.ndims not in (None, 2):
            raise ValueError("Tensor b must be a matrix, got shape %s" % b.shape)
        if sp_a.dense_shape.shape.ndims == 1 and \
                sp_a.dense_shape.shape.as_list()[0] not in (None, 2):
            raise ValueError("Tensor 'a.shape' must be a matrix's (2 dimensions), got %s"
                             % sp_a.dense_shape.shape)
        if adjoint_b:
            b = transpose(b)
        from .check_ops import assert_equal, assert_non_negative
        from .ops import shape
        inner = slice_(sp_a.dense_shape, [0 if adjoint_a else 1], [1])
        checks = [assert_equal(inner, cast(slice_(shape(b), [0], [1]), _dtypes.int64),
                               message="Cannot multiply A and B because inner dimension does "
                                       "not match"),
                  assert_non_negative(sp_a.indices, message="sparse indices out of bounds")]
        rows = reshape(slice_(sp_a.indices, [0, 1 if adjoint_a else 0], [-1, 1]), [-1])
        cols = reshape(slice_(sp_a.indices, [0, 0 if adjoint_a else 1], [-1, 1]), [-1])
        out_rows = cast(reshape(slice_(sp_a.dense_shape, [1 if adjoint_a else 0], [1]), []),
                        _dtypes.int32)
        with get_default_graph().control_dependencies(checks):
            terms = gather(b, cols) * expand_dims(sp_a.values, 1)
        return unsorted_segment_sum(terms, cast(rows, _dtypes.int32), out_rows)


def _linear(indices, dims):
    """Row-major positions (int64 [N]) of `indices` [N, len(dims)] in a tensor of dims."""
    from .math_ops import cumprod
    from .ops import reduce_sum
    strides = cumprod(dims, exclusive=True, reverse=True)
    return reduce_sum(indices * strides, axis=1)


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None):
    """The sum of sp_input's values over `axis` (all of them by default), as a dense tensor of
    the other dimensions (kept as 1 with keepdims)."""
    from .ops import cast, gather, reduce_prod, reduce_sum, reshape, unsorted_segment_sum
    sp_input = _sparse(sp_input, "sp_input")
    if axis is not None and reduction_axes is not None:
        raise ValueError("Cannot specify both 'axis' and 'reduction_axes'")
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    axis = reduction_axes if axis is None else axis
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, "SparseReduceSum", [sp_input.values]):
        rank = sp_input.dense_shape.shape.as_list()[0] if sp_input.dense_shape.shape.ndims \
            else None
        if axis is None:
            total = reduce_sum(sp_input.values)
            if keepdims:
                if rank is None:
                    raise ValueError("sparse_reduce_sum: keepdims needs the rank known")
                return reshape(total, [1] * rank)
            return total
        if rank is None:
            raise ValueError("sparse_reduce_sum: the rank of sp_input must be known to reduce "
                             "over an axis")
        given = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        for a in given:
            if not -rank <= a < rank:
                raise ValueError("Invalid reduction dimension %d for input with %d dimensions"
                                 % (a, rank))
        axes = sorted({a % rank for a in given})
        kept = [d for d in range(rank) if d not in axes]
        kept_dims = gather(sp_input.dense_shape, kept)
        kept_indices = gather(sp_input.indices, kept, axis=1)
        segments = cast(_linear(kept_indices, kept_dims), _dtypes.int32)
        sums = unsorted_segment_sum(sp_input.values, segments,
                                    cast(reduce_prod(kept_dims), _dtypes.int32))
        if keepdims:
            from .ops import ones_like
            shape = reshape(sp_input.dense_shape, [-1])
            shape = shape * 0 + ones_like(shape)  # 1 for every dimension, then the kept ones
            from .sparse_ops import tensor_scatter_update
            from .array_ops import expand_dims
            shape = tensor_scatter_update(shape, expand_dims(convert_to_tensor(
                kept, dtype=_dtypes.int32), 1), kept_dims) if kept else shape
            return reshape(sums, shape)
        return reshape(sums, kept_dims)


def sparse_retain(sp_input, to_retain):
    """The values of sp_input where the bool vector to_retain is true."""
    from .ops import boolean_mask
    sp_input = _sparse(sp_input, "sp_input")
    to_retain = convert_to_tensor(to_retain, name="to_retain", dtype=_dtypes.bool)
    if to_retain.shape.ndims not in (None, 1):
        raise ValueError("to_retain must be a vector, got shape %s" % to_retain.shape)
    return SparseTensor(boolean_mask(sp_input.indices, to_retain),
                        boolean_mask(sp_input.values, to_retain), sp_input.dense_shape)


def sparse_add(a, b, thresh=0):
    """a + b: dense when either is dense; two SparseTensors give one, in row-major order,
    values at the same position summed and those whose magnitude is below thresh dropped."""
    from .array_ops import argsort, concat
    from .math_ops import logical_or
    from .ops import abs as abs_, boolean_mask, cast, gather, greater_equal, ones_like, size
    from .ops import unsorted_segment_sum
    from .sparse_ops import sparse_tensor_to_dense, unique, unsorted_segment_max
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TypeError("At least one input should be SparseTensor; do you mean to use "
                        "tf.add?")
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sparse, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        dense = dense if isinstance(dense, Tensor) else convert_to_tensor(dense,
                                                                           dtype=sparse.dtype)
        return dense + sparse_tensor_to_dense(sparse, validate_indices=False)
    with name_scope(None, "SparseAdd", [a.values, b.values, thresh]):
        from .check_ops import assert_equal
        same_shape = assert_equal(a.dense_shape, b.dense_shape,
                                  message="Operands' shapes do not match")
        with get_default_graph().control_dependencies([same_shape]):
            indices = concat([a.indices, b.indices], 0)
        values = concat([a.values, b.values], 0)
        distinct, segment = unique(_linear(indices, a.dense_shape))
        count = size(distinct)
        summed = unsorted_segment_sum(values, segment, count)
        members = unsorted_segment_sum(ones_like(segment), segment, count)
        # Every row of one segment is the same position: its max is that position.
        rows = unsorted_segment_max(indices, segment, count)
        order = argsort(cast(distinct, _dtypes.float64))  # exact below 2^53 positions
        summed, rows, members = (gather(summed, order), gather(rows, order),
                                 gather(members, order))
        # As TensorFlow's: thresh only drops sums of values of both operands.
        keep = logical_or(members < 2, greater_equal(abs_(summed), cast(thresh, summed.dtype)))
        return SparseTensor(boolean_mask(rows, keep), boolean_mask(summed, keep),
                            a.dense_shape)
