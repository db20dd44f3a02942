"""More of TensorFlow 1.x's math: floordiv and floormod (the `//` and `%` operators),
logical_and/or/xor (`&`, `|`, `^`, `~` on bool tensors), erf, matmul of batches of matrices
(BatchMatMul), and the functions TensorFlow itself writes in Python from other ops:
clip_by_norm, global_norm, clip_by_global_norm, reduce_logsumexp, tensordot."""

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from .framework import IndexedSlices, Tensor, convert_to_tensor, name_scope
from .ops import (_binary_op, _by_type, _make, _reverse, _unary_op, add_n, cast, exp, log,
                  logical_not, maximum, minimum, multiply, reduce_max, reduce_sum, reshape,
                  shape, sqrt, square, stop_gradient, subtract)
from . import ops as _ops

floordiv = _binary_op(_by_type("FloorDiv"), "floordiv")
floor_div = floordiv
floormod = _binary_op(_by_type("FloorMod"), "floormod")
mod = floormod
erf = _unary_op(_by_type("Erf"), "erf")


def _bools(x, what=None):
    return x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=_dtypes.bool)


def logical_and(x, y, name=None):
    return _make("LogicalAnd", [_bools(x), _bools(y)], {}, name).outputs[0]


def logical_or(x, y, name=None):
    return _make("LogicalOr", [_bools(x), _bools(y)], {}, name).outputs[0]


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y: (x | y) & ~(x & y), as TensorFlow computes it."""
    with name_scope(name):
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """tf.matmul: matrices, or batches of them ([..., rows, inner] x [..., inner, cols] with
    equal batch dimensions). adjoint_* is transpose_* for troupe's real dtypes."""
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    ta, tb = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
    a = a if isinstance(a, Tensor) else convert_to_tensor(a, dtype=getattr(b, "dtype", None))
    b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype=a.dtype)
    ranks = (a.shape.ndims, b.shape.ndims)
    if ranks == (2, 2) or None in ranks and 2 in ranks:
        return _ops.matmul(a, b, ta, tb, name=name)
    return _make("BatchMatMul", [a, b], {"adj_x": ta, "adj_y": tb}, name).outputs[0]


def global_norm(t_list, name=None):
    """sqrt(sum of the squared L2 norms of the tensors of t_list); None entries are skipped."""
    from .nn import l2_loss
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    # IndexedSlices count by their values, as TensorFlow's (duplicate rows not summed).
    tensors = [t.values if isinstance(t, IndexedSlices) else
               t if isinstance(t, Tensor) else convert_to_tensor(t) for t in t_list
               if t is not None]
    with name_scope(name, "global_norm"):
        if not tensors:
            return convert_to_tensor(0.0)
        half_squared = [l2_loss(t) for t in tensors]
        total = add_n(half_squared) if len(half_squared) > 1 else half_squared[0]
        return sqrt(multiply(total, 2.0), name="global_norm")


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm): unchanged unless its norm exceeds
    clip_norm. IndexedSlices are clipped by the norm of their values and stay sparse."""
    if isinstance(t, IndexedSlices):
        values = clip_by_norm(t.values, clip_norm, axes, name)
        return IndexedSlices(values, t.indices, t.dense_shape)
    with name_scope(name, "clip_by_norm"):
        t = t if isinstance(t, Tensor) else convert_to_tensor(t)
        clip_norm = clip_norm if isinstance(clip_norm, Tensor) else \
            convert_to_tensor(clip_norm, dtype=t.dtype)
        l2sum = reduce_sum(square(t), axes, keepdims=True)
        # sqrt's gradient is infinite at 0: take it only where the sum is positive.
        positive = _ops.greater(l2sum, 0)
        norm = _ops.where(positive, sqrt(_ops.where(positive, l2sum, _ops.ones_like(l2sum))),
                          l2sum)
        return _ops.identity(_ops.divide(multiply(t, clip_norm), maximum(norm, clip_norm)),
                             name="clipped")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Each tensor of t_list scaled by clip_norm / max(global_norm, clip_norm); returns the
    clipped list and the global norm (an infinite norm gives NaN tensors, as TensorFlow's)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    with name_scope(name, "clip_by_global_norm"):
        norm = global_norm(t_list) if use_norm is None else use_norm
        clip = clip_norm if isinstance(clip_norm, Tensor) else \
            convert_to_tensor(clip_norm, dtype=norm.dtype)
        scale = multiply(clip, minimum(_ops.divide(1.0, norm), _ops.divide(1.0, clip)))
        def scaled(t):
            if t is None:
                return None
            if isinstance(t, IndexedSlices):  # stays sparse: its values scaled
                return IndexedSlices(_ops.identity(multiply(t.values, cast(scale, t.dtype))),
                                     t.indices, t.dense_shape)
            return _ops.identity(multiply(t, cast(scale, t.dtype)))
        clipped = [scaled(t) for t in t_list]
        return clipped, norm


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """log(sum(exp(input))) over `axis`, computed around the (finite) maximum so that it
    neither overflows nor loses precision."""
    if keepdims is None:
        keepdims = bool(keep_dims)
    if axis is None:
        axis = reduction_indices
    with name_scope(name, "ReduceLogSumExp"):
        x = input_tensor if isinstance(input_tensor, Tensor) else convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        finite = _ops.less(_ops.abs(raw_max), np.inf)
        top = stop_gradient(_ops.where(finite, raw_max, _ops.zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, top)), axis, keepdims=keepdims))
        if not keepdims:
            top = reshape(top, shape(result))
        return _ops.add(result, top)


def _product(shape_tensor, static, indices):
    """The product of the dimensions `indices`: a Python int when they are known."""
    dims = [static[i] for i in indices]
    if all(d is not None for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    total = None
    for i in indices:
        total = shape_tensor[i] if total is None else multiply(total, shape_tensor[i])
    return total


def tensordot(a, b, axes, name=None):
    """Sums the products of a's and b's elements over the given axes: an int n (a's last n
    with b's first n) or a pair of axis lists; a matrix product of the transposed and reshaped
    tensors, as TensorFlow computes it."""
    from .array_ops import transpose
    with name_scope(name, "Tensordot"):
        a = a if isinstance(a, Tensor) else convert_to_tensor(a)
        b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype=a.dtype)
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra is None or rb is None:
            raise ValueError("tensordot: troupe needs inputs of known rank, got %s and %s"
                             % (a.shape, b.shape))
        if isinstance(axes, (int, np.integer)):
            if axes < 0:
                raise ValueError("'axes' must be at least 0.")
            if axes > min(ra, rb):
                raise ValueError("'axes' must not be larger than the number of dimensions of "
                                 "tensor %s." % (a if axes > ra else b).name)
            a_axes, b_axes = list(range(ra - axes, ra)), list(range(axes))
        else:
            if len(axes) != 2:
                raise ValueError("'axes' must be an integer or have length 2.")
            a_axes, b_axes = axes
            a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
            b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
            if len(a_axes) != len(b_axes):
                raise ValueError("Different number of contraction axes 'a' and 'b', %d != %d."
                                 % (len(a_axes), len(b_axes)))
        a_axes = [x % ra for x in a_axes]
        b_axes = [x % rb for x in b_axes]
        a_free = [i for i in range(ra) if i not in a_axes]
        b_free = [i for i in range(rb) if i not in b_axes]
        a_static, b_static = a.shape.as_list(), b.shape.as_list()
        for i, j in zip(a_axes, b_axes):
            if a_static[i] is not None and b_static[j] is not None and \
                    a_static[i] != b_static[j]:
                raise ValueError("tensordot: dimension %d of a (%d) differs from dimension %d "
                                 "of b (%d)" % (i, a_static[i], j, b_static[j]))
        a_shape, b_shape = shape(a), shape(b)
        inner = _product(a_shape, a_static, a_axes)
        a2 = reshape(transpose(a, a_free + a_axes),
                     _ops.stack([_product(a_shape, a_static, a_free), inner]))
        b2 = reshape(transpose(b, b_axes + b_free),
                     _ops.stack([inner, _product(b_shape, b_static, b_free)]))
        product = _ops.matmul(a2, b2)
        free = [a_shape[i] for i in a_free] + [b_shape[i] for i in b_free]
        if all(d is not None for d in [a_static[i] for i in a_free] +
               [b_static[i] for i in b_free]):
            return reshape(product, [a_static[i] for i in a_free] +
                           [b_static[i] for i in b_free])
        return reshape(product, _ops.stack(free) if free else np.zeros([0], np.int32))


def _scan(op_type, x, axis, exclusive, reverse, name):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    axis = axis if isinstance(axis, Tensor) else np.int32(axis)
    return _make(op_type, [x, axis], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                 name).outputs[0]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis` (exclusive: each element left out of its own; reverse: from
    the end)."""
    return _scan("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis`, as cumsum."""
    return _scan("Cumprod", x, axis, exclusive, reverse, name)


def _reduce_bools(reduce, default_name, input_tensor, axis, keepdims, name, reduction_indices,
                  keep_dims):
    """`reduce` (reduce_max for any, reduce_min for all) of a bool tensor, through int32."""
    with name_scope(name, default_name):
        ints = cast(_bools(input_tensor), _dtypes.int32)
        return _ops.greater(reduce(ints, axis, keepdims, None, reduction_indices, keep_dims), 0)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Whether any element over `axis` is true (bool tensors)."""
    return _reduce_bools(_ops.reduce_max, "Any", input_tensor, axis, keepdims, name,
                         reduction_indices, keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Whether every element over `axis` is true (bool tensors)."""
    return _reduce_bools(_ops.reduce_min, "All", input_tensor, axis, keepdims, name,
                         reduction_indices, keep_dims)


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TensorFlow's names
           output_type=_dtypes.int64):
    """The index of the smallest value along `axis` (the first one among ties)."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    if x.dtype not in (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
        raise TypeError("argmin: expected a number tensor, got %s" % x.dtype.name)
    with name_scope(name, "ArgMin"):
        # -1 - x reverses the order of integers without overflowing (-x would at the minimum).
        flipped = _ops.negative(x) if x.dtype.is_floating else subtract(-1, x)
        return _ops.argmax(flipped, axis, dimension=dimension, output_type=output_type)


def _invert(x):
    if x.dtype != _dtypes.bool:
        raise TypeError("~ takes bool tensors (logical_not), got %s" % x.dtype.name)
    return logical_not(x)


Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = _reverse(matmul)
Tensor.__floordiv__ = floordiv
Tensor.__rfloordiv__ = _reverse(floordiv)
Tensor.__mod__ = floormod
Tensor.__rmod__ = _reverse(floormod)
Tensor.__and__ = logical_and
Tensor.__rand__ = _reverse(logical_and)
Tensor.__or__ = logical_or
Tensor.__ror__ = _reverse(logical_or)
Tensor.__xor__ = logical_xor
Tensor.__rxor__ = _reverse(logical_xor)
Tensor.__invert__ = _invert


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TensorFlow's name
    """tf.qr: the QR decomposition of each inner matrix of `input` ([..., M, N], float32 or
    float64): (q, r), q [..., M, K] with orthonormal columns and r [..., K, N] upper triangular,
    K = min(M, N) (full_matrices: q [..., M, M] and r [..., M, N]). Its gradient is TensorFlow
    1.15's, for shapes known when building, not for full_matrices of a tall matrix."""
    import collections
    op = _make("Qr", [input], {"full_matrices": bool(full_matrices)}, name)
    return collections.namedtuple("Qr", ["q", "r"])(*op.outputs)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """tf.matrix_triangular_solve (tf.linalg.triangular_solve): X with matrix X = rhs
    (matrix^T X = rhs with adjoint), matrix [..., M, M] read as lower (or upper) triangular, rhs
    [..., M, K] with the same batch dimensions; float32 or float64, with gradients. A zero on
    the diagonal fails the run: InvalidArgumentError "Input matrix is not invertible."."""
    return _make("MatrixTriangularSolve", [matrix, rhs],
                 {"lower": bool(lower), "adjoint": bool(adjoint)}, name).outputs[0]


def _matrix_transpose(x):
    """x with its last two dimensions swapped (the adjoint of a real matrix)."""
    from .array_ops import transpose
    rank = x.shape.ndims
    return transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2])


def _gradient_op(native_op, native_grads):
    from .framework import Operation
    from .gradients import _building_graph
    graph = _building_graph()
    grads = [Tensor(g, graph) if g is not None else None for g in native_grads]
    return Operation(native_op, graph), grads


def _triangular_solve_grad(native_op, native_grads):
    """TensorFlow's _MatrixTriangularSolveGrad."""
    from .array_ops import matrix_band_part
    op, (grad,) = _gradient_op(native_op, native_grads)
    a = op.inputs[0]
    c = op.outputs[0]
    lower, adjoint = op.get_attr("lower"), op.get_attr("adjoint")
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = -matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, c, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return [grad_a._output, grad_b._output]


def _qr_grad(native_op, native_grads):
    """TensorFlow 1.15's _QrGrad (linalg_grad.py), for shapes known when building."""
    from .array_ops import matrix_band_part
    from .ops import zeros_like
    op, (dq, dr) = _gradient_op(native_op, native_grads)
    q, r = op.outputs
    if r.shape.ndims is None or r.shape.as_list()[-2] is None or r.shape.as_list()[-1] is None:
        raise NotImplementedError("QrGrad not implemented with dynamic shapes.")
    if (r.shape.as_list()[-2] > r.shape.as_list()[-1] and
            q.shape.as_list()[-2] == q.shape.as_list()[-1]):
        raise NotImplementedError("QrGrad not implemented when ncols > nrows or full_matrices "
                                  "is true and ncols != nrows.")
    dq = dq if dq is not None else zeros_like(q)
    dr = dr if dr is not None else zeros_like(r)
    qdq = matmul(q, dq, adjoint_a=True)
    qdq_ = qdq - _matrix_transpose(qdq)
    rdr = matmul(r, dr, adjoint_b=True)
    rdr_ = rdr - _matrix_transpose(rdr)
    tril = matrix_band_part(qdq_ + rdr_, -1, 0)

    def triangular_solve(x, upper):  # x times the inverse of upper's transpose
        return _matrix_transpose(matrix_triangular_solve(upper, _matrix_transpose(x),
                                                         lower=False, adjoint=False))

    grad_a = matmul(q, dr + triangular_solve(tril, r))
    grad_b = triangular_solve(dq - matmul(q, qdq), r)
    return [(grad_a + grad_b)._output]


_troupe.set_python_gradient("MatrixTriangularSolve", _triangular_solve_grad)
_troupe.set_python_gradient("Qr", _qr_grad)


# ---- trigonometry, and the tests of floating values (ops of their own) ----

tan = _unary_op(_by_type("Tan"), "tan")
asin = _unary_op(_by_type("Asin"), "asin")
acos = _unary_op(_by_type("Acos"), "acos")
atan = _unary_op(_by_type("Atan"), "atan")
sinh = _unary_op(_by_type("Sinh"), "sinh")
cosh = _unary_op(_by_type("Cosh"), "cosh")
is_nan = _unary_op(_by_type("IsNan"), "is_nan")
is_inf = _unary_op(_by_type("IsInf"), "is_inf")
is_finite = _unary_op(_by_type("IsFinite"), "is_finite")
atan2 = _binary_op(_by_type("Atan2"), "atan2")


# ---- composites, as TensorFlow 1.x builds them from other ops ----

def to_int32(x, name="ToInt32"):
    return cast(x, _dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, _dtypes.int64, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, _dtypes.float64, name=name)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=_dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """The number of elements that are not zero (or "" for strings), over `axis`."""
    from .ops import constant, not_equal, reduce_sum
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        zero = constant("" if x.dtype == _dtypes.string else 0, dtype=x.dtype)
        return cast(reduce_sum(cast(not_equal(x, zero), _dtypes.int64), axis=axis,
                               keepdims=keepdims, reduction_indices=reduction_indices,
                               keep_dims=keep_dims), dtype=dtype)


def lin_space(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop (inclusive): start + i * (stop - start) /
    (num - 1); num must be positive."""
    from .array_ops import range as range_
    from .ops import maximum
    with name_scope(name, "LinSpace", [start, stop, num]):
        start = convert_to_tensor(start, name="start")
        if start.dtype not in (_dtypes.float32, _dtypes.float64):
            raise TypeError("Value passed to parameter 'start' has DataType %s not in list of "
                            "allowed values: float32, float64" % start.dtype.name)
        stop = convert_to_tensor(stop, dtype=start.dtype, name="stop")
        if isinstance(num, int) and num <= 0:
            raise ValueError("Requires num > 0: %d" % num)
        num = convert_to_tensor(num, dtype=_dtypes.int32, name="num")
        steps = cast(maximum(num - 1, 1), start.dtype)
        return start + cast(range_(num), start.dtype) * ((stop - start) / steps)


linspace = lin_space


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    """An identity matrix [num_rows, num_columns] (or a batch of them)."""
    from .array_ops import expand_dims, range as range_, tile
    from .ops import equal
    with name_scope(name, "eye"):
        rows = range_(num_rows)
        cols = range_(num_rows if num_columns is None else num_columns)
        matrix = cast(equal(expand_dims(rows, 1), expand_dims(cols, 0)), dtype)
        if batch_shape is None:
            return matrix
        batch = list(batch_shape)
        for _ in batch:
            matrix = expand_dims(matrix, 0)
        return tile(matrix, batch + [1, 1])


def trace(x, name=None):
    """The sum of the main diagonal of the innermost matrices of x ([..., M, N] -> [...])."""
    from .ops import reduce_sum, shape, where, zeros_like
    with name_scope(name, "Trace", [x]):
        x = convert_to_tensor(x, name="x")
        dims = shape(x)
        # The diagonal selected, not multiplied by an identity (inf * 0 would be NaN).
        from .array_ops import broadcast_to
        diagonal = broadcast_to(eye(dims[-2], dims[-1], dtype=_dtypes.bool), dims)
        return reduce_sum(where(diagonal, x, zeros_like(x)), axis=[-2, -1])


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """Vector norms (ord "euclidean", a positive number, np.inf) over all of `tensor` or over
    `axis`; matrix norms ("euclidean"/"fro", 1, np.inf) over a pair of axes."""
    from .ops import abs as abs_, pow as pow_, reduce_max, reduce_sum, sqrt, square
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         "got %s" % (axis,))
    supported = ["euclidean", "fro", 1, np.inf] if matrix else ["euclidean", np.inf]
    if not (ord in supported or (not matrix and isinstance(ord, (int, float)) and
                                 not isinstance(ord, bool) and ord > 0)):
        raise ValueError("'ord' must be a supported %s norm, got %s"
                         % ("matrix" if matrix else "vector", ord))
    if not matrix and ord == "fro":
        raise ValueError("'ord' must be a supported vector norm, got fro")
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        if isinstance(axis, (list, tuple)) and len(axis) == 1:
            axis = axis[0]
        if ord in ("euclidean", "fro"):
            return sqrt(reduce_sum(square(x), axis, keepdims=keepdims))
        a = abs_(x)
        if matrix:
            # 1: the largest column sum (over axis[0]); inf: the largest row sum.
            inner, outer = (axis[0], axis[1]) if ord == 1 else (axis[1], axis[0])
            rank = x.shape.ndims
            if rank is None:
                raise ValueError("norm: the rank of tensor must be known for a matrix norm")
            inner, outer = inner % rank, outer % rank
            sums = reduce_sum(a, inner, keepdims=True)
            result = reduce_max(sums, outer, keepdims=True)
            if not keepdims:
                from .array_ops import squeeze
                result = squeeze(result, [min(inner, outer), max(inner, outer)])
            return result
        if ord == np.inf:
            return reduce_max(a, axis, keepdims=keepdims)
        if ord == 1:
            return reduce_sum(a, axis, keepdims=keepdims)
        p = cast(ord, x.dtype)
        return pow_(reduce_sum(pow_(a, p), axis, keepdims=keepdims), 1.0 / p)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32):
    """How often each value of the non-negative int32 `arr` occurs (or the sum of its
    `weights`): a vector of max(arr) + 1 entries, at least minlength and at most maxlength."""
    from .check_ops import assert_non_negative
    from .framework import get_default_graph
    from .ops import maximum, minimum, ones_like, reduce_max, reshape, unsorted_segment_sum
    from .ops import size as size_
    with name_scope(None, "bincount", [arr, weights, minlength, maxlength]):
        arr = convert_to_tensor(arr, name="arr", dtype=_dtypes.int32)
        check = assert_non_negative(arr, message="Input arr must be non-negative!")
        with get_default_graph().control_dependencies([check]):
            flat = reshape(arr, [-1])
        length = cast(size_(flat) > 0, _dtypes.int32) * (reduce_max(flat) + 1)
        if minlength is not None:
            length = maximum(convert_to_tensor(minlength, dtype=_dtypes.int32), length)
        if maxlength is not None:
            length = minimum(convert_to_tensor(maxlength, dtype=_dtypes.int32), length)
        # With weights, the counts are sums of them, of their dtype (dtype is for counts).
        values = cast(ones_like(flat), dtype) if weights is None else \
            reshape(convert_to_tensor(weights, name="weights"), [-1])
        if maxlength is not None:  # values at or beyond maxlength are dropped
            keep = flat < length
            from .ops import boolean_mask
            values, flat = boolean_mask(values, keep), boolean_mask(flat, keep)
        return unsorted_segment_sum(values, flat, length)


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None,
                     weights=None):
    """[num_classes, num_classes]: entry (i, j) counts (or sums the weights of) the examples
    of label i predicted as j."""
    from .ops import maximum, reduce_max, stack
    from .sparse_ops import scatter_nd
    with name_scope(name, "confusion_matrix", [predictions, labels, num_classes, weights]):
        labels = cast(convert_to_tensor(labels, name="labels"), _dtypes.int64)
        predictions = cast(convert_to_tensor(predictions, name="predictions"), _dtypes.int64)
        if num_classes is None:
            num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        else:
            num_classes = cast(convert_to_tensor(num_classes, name="num_classes"),
                               _dtypes.int64)
        values = _ops.ones_like(predictions, dtype=dtype) if weights is None else \
            cast(convert_to_tensor(weights, name="weights"), dtype)
        shape = stack([num_classes, num_classes])
        return scatter_nd(stack([labels, predictions], axis=1), values, shape)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation of one or two tensors, as tf.einsum: "ij,jk->ik" (matmul),
    "bij,bjk->bik" (batch matmul), "i,i->" (dot), "ij->ji" (transpose), "ij->" (sum), "i,j->ij"
    (outer)...; without "->" the output is the letters that appear once, sorted. An index seen
    in one input only and not in the output is summed over. Built from transpose, reshape,
    reduce_sum and a (batch) matrix product. Not supported (ValueError): "...", an index
    repeated within one input (a diagonal), more than two inputs."""
    from .array_ops import concat, transpose
    from .ops import reduce_prod, reduce_sum, reshape, shape
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("invalid keyword arguments for this function: %s"
                        % ", ".join(sorted(kwargs)))
    if not isinstance(equation, str):
        raise TypeError("einsum: equation must be a string, got %r" % (equation,))
    equation = equation.replace(" ", "")
    if "." in equation:
        raise ValueError("einsum: ellipses (...) are not supported by troupe: %r" % equation)
    if "->" in equation:
        left, output = equation.split("->")
    else:
        left = equation
        letters = left.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    subscripts = left.split(",")
    if len(subscripts) != len(inputs):
        raise ValueError("einsum: the equation %r has %d inputs, %d were given"
                         % (equation, len(subscripts), len(inputs)))
    if not 1 <= len(inputs) <= 2:
        raise ValueError("einsum: troupe takes one or two inputs, got %d" % len(inputs))
    for s in subscripts + [output]:
        if not s.isalpha() and s != "":
            raise ValueError("einsum: invalid subscripts %r in %r" % (s, equation))
        if len(set(s)) != len(s):
            raise ValueError("einsum: subscripts %r repeat an index (a diagonal): not "
                             "supported by troupe" % s)
    if set(output) - set("".join(subscripts)):
        raise ValueError("einsum: output subscripts %r name an index of no input" % output)
    with name_scope(name, "einsum", inputs):
        tensors = [convert_to_tensor(t, name="input_%d" % i) for i, t in enumerate(inputs)]
        for t, s in zip(tensors, subscripts):
            if t.shape.ndims is not None and t.shape.ndims != len(s):
                raise ValueError("einsum: input of shape %s does not have %d dimensions (%r)"
                                 % (t.shape, len(s), s))

        def sum_out(t, s, keep):
            """t with the indices of s not in keep summed over; (tensor, remaining s)."""
            drop = [i for i, c in enumerate(s) if c not in keep]
            if drop:
                t = reduce_sum(t, axis=drop)
                s = "".join(c for c in s if c in keep)
            return t, s

        def arrange(t, s, order):
            perm = [s.index(c) for c in order]
            return transpose(t, perm) if perm != list(range(len(s))) else t

        if len(tensors) == 1:
            t, s = sum_out(tensors[0], subscripts[0], set(output))
            return arrange(t, s, output)
        (a, sa), (b, sb) = [sum_out(t, s, set(output) | set(other))
                            for t, s, other in ((tensors[0], subscripts[0], subscripts[1]),
                                                (tensors[1], subscripts[1], subscripts[0]))]
        batch = [c for c in sa if c in sb and c in output]
        contracted = [c for c in sa if c in sb and c not in output]
        free_a = [c for c in sa if c not in sb]
        free_b = [c for c in sb if c not in sa]
        a = arrange(a, sa, batch + free_a + contracted)
        b = arrange(b, sb, batch + contracted + free_b)
        dims_a, dims_b = shape(a), shape(b)

        def product(dims, start, count):
            """The number of elements of dims[start:start + count] (1 for none), int32."""
            if count == 0:
                return 1
            return reduce_prod(dims[start:start + count])

        nb, nfa, nc, nfb = len(batch), len(free_a), len(contracted), len(free_b)
        batch_size = product(dims_a, 0, nb)
        a3 = reshape(a, [batch_size, product(dims_a, nb, nfa), product(dims_a, nb + nfa, nc)])
        b3 = reshape(b, [batch_size, product(dims_b, nb, nc), product(dims_b, nb + nc, nfb)])
        c3 = matmul(a3, b3)
        c = reshape(c3, concat([dims_a[:nb + nfa], dims_b[nb + nc:]], 0))
        result_order = "".join(batch + free_a + free_b)
        result = arrange(c, result_order, output)
        static_a, static_b = a.shape, b.shape
        if static_a.ndims is not None and static_b.ndims is not None:
            known = dict(zip(batch + free_a + contracted, static_a.as_list()))
            for c_, d in zip(batch + contracted + free_b, static_b.as_list()):
                known[c_] = known.get(c_) if known.get(c_) is not None else d
            result.set_shape([known.get(c_) for c_ in output])
        return result



def div_no_nan(x, y, name=None):
    """x / y, 0 where y is 0 (tf.div_no_nan, tf.math.div_no_nan), broadcasting as divide does;
    floating point only. Where y is 0 the division is by 1 and the result masked, so the
    gradient there is 0 too, not NaN."""
    with name_scope(name, "div_no_nan"):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        y = y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype)
        if not x.dtype.is_floating:
            raise TypeError("div_no_nan: x must be floating point, got %s" % x.dtype.name)
        zero = _ops.equal(y, _ops.zeros_like(y))
        quotient = _ops.divide(x, _ops.where(zero, _ops.ones_like(y), y))
        return _ops.multiply(quotient, 1.0 - cast(zero, x.dtype))
