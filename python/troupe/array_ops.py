"""TensorFlow 1.x's array manipulation functions: concat, split, unstack, slice,
strided_slice and Tensor indexing (t[1:, ..., tf.newaxis]), pad, transpose, reverse, tile,
expand_dims, squeeze, one_hot, range, rank. Each builds the op of TensorFlow's name
(graph/ops/array_manipulation_ops.hpp) with its shape checks and gradient."""

import builtins

import numpy as np

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor
from .ops import _graph_of, _make

newaxis = None


def _tensor(value):
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_as_graph_element"):
        return value._as_graph_element()
    return convert_to_tensor(value)


def _int_input(value, what):
    """An int32/int64 tensor or a numpy integer array for an index-like argument."""
    if isinstance(value, (list, tuple)) and any(
            isinstance(v, Tensor) or hasattr(v, "_as_graph_element") for v in value):
        value = convert_to_tensor(value)  # packed, as TensorFlow packs such lists
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        tensor = value if isinstance(value, Tensor) else value._as_graph_element()
        if tensor.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError("%s must be int32 or int64, got %s" % (what, tensor.dtype.name))
        return tensor
    array = np.asarray(value)
    if array.dtype.kind not in ("i", "u") and array.size:
        raise TypeError("%s must be integers, got %r" % (what, value))
    if array.size and (array.max() > 2**31 - 1 or array.min() < -2**31):
        return array.astype(np.int64)
    return array.astype(np.int32)


def _check_int(value, what):
    if isinstance(value, builtins.bool) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s must be an int, got %r" % (what, value))
    return int(value)


def concat(values, axis, name="concat"):
    """tf.concat: the tensors of `values` joined along `axis` (one tensor: itself)."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("concat: values must be a non-empty list of tensors, got %r" % (values,))
    if len(values) == 1:
        from .ops import identity
        axis_value = axis if isinstance(axis, Tensor) else _check_int(axis, "concat: axis")
        tensor = _tensor(values[0])
        rank = tensor.shape.ndims
        if not isinstance(axis_value, Tensor) and rank is not None and \
                not -rank <= axis_value < rank:
            raise ValueError("concat: axis %d is out of range for a tensor of rank %d"
                             % (axis_value, rank))
        return identity(tensor, name=name)
    g = _graph_of(*values)
    return _make("ConcatV2", [list(values), _int_input(axis, "concat: axis")], {}, name,
                 g).outputs[0]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """tf.split: `value` cut along `axis` into num_or_size_splits equal parts (an int), or into
    parts of the sizes it lists (one may be -1)."""
    value = _tensor(value)
    if isinstance(num_or_size_splits, (int, np.integer)) and \
            not isinstance(num_or_size_splits, builtins.bool):
        if num_or_size_splits < 1:
            raise ValueError("split: num_or_size_splits must be >= 1, got %d"
                             % num_or_size_splits)
        return _make("Split", [_int_input(axis, "split: axis"), value],
                     {"num_split": int(num_or_size_splits)}, name).outputs
    sizes = _int_input(num_or_size_splits, "split: size_splits")
    if num is None:
        shape = sizes.shape
        num = shape[0] if len(shape) == 1 else None
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % (shape,))
    return _make("SplitV", [value, sizes, _int_input(axis, "split: axis")],
                 {"num_split": int(num)}, name).outputs


def unstack(value, num=None, axis=0, name="unstack"):
    """tf.unstack: the tensors along dimension `axis` of `value` (num from its shape if not
    given)."""
    value = _tensor(value)
    axis = _check_int(axis, "unstack: axis")
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError("Cannot infer num from shape %s" % (shape,))
        if not -shape.ndims <= axis < shape.ndims:
            raise ValueError("axis = %d not in [%d, %d)" % (axis, -shape.ndims, shape.ndims))
        num = shape[axis]
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % (shape,))
    return _make("Unpack", [value], {"num": int(num), "axis": axis}, name).outputs


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """tf.slice: size[i] elements of dimension i from begin[i] (-1: the rest)."""
    begin = _int_input(begin, "slice: begin")
    size = _int_input(size, "slice: size")
    begin, size = _one_index_dtype(begin, size)
    return _make("Slice", [_tensor(input_), begin, size], {}, name).outputs[0]


def _one_index_dtype(*values):
    """Index arguments of one op share a dtype: a tensor's, else int64 if one needs it."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if tensors:
        dtype = tensors[0].dtype.as_numpy_dtype
    else:
        dtype = np.int64 if any(v.dtype == np.int64 for v in values) else np.int32
    return [v if isinstance(v, Tensor) else v.astype(dtype) for v in values]


def _index_vector(values):
    """begin/end/strides: a constant, or a stack of them when some are tensors."""
    if any(isinstance(v, Tensor) for v in values):
        from .ops import stack
        dtype = next(v.dtype for v in values if isinstance(v, Tensor))
        return stack([v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=dtype)
                      for v in values])
    return _int_input(list(values), "index")


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """tf.strided_slice: TensorFlow's StridedSlice with its five masks."""
    begin = _int_input(begin, "strided_slice: begin")
    end = _int_input(end, "strided_slice: end")
    if strides is None:
        strides = np.ones(np.shape(begin) if not isinstance(begin, Tensor) else
                          [begin.shape[0]], dtype=np.int32)
    strides = _int_input(strides, "strided_slice: strides")
    attrs = {"begin_mask": _check_int(begin_mask, "begin_mask"),
             "end_mask": _check_int(end_mask, "end_mask"),
             "ellipsis_mask": _check_int(ellipsis_mask, "ellipsis_mask"),
             "new_axis_mask": _check_int(new_axis_mask, "new_axis_mask"),
             "shrink_axis_mask": _check_int(shrink_axis_mask, "shrink_axis_mask")}
    begin, end, strides = _one_index_dtype(begin, end, strides)
    return _make("StridedSlice", [_tensor(input_), begin, end, strides],
                 attrs, name).outputs[0]


def _slice_helper(tensor, slice_spec, var=None):
    """Tensor.__getitem__: ints, slices (with steps), Ellipsis, tf.newaxis (None) and scalar
    int32/int64 tensors, as TensorFlow 1.x's _slice_helper reads them."""
    if not isinstance(slice_spec, tuple):
        slice_spec = (slice_spec,)
    begin, end, strides = [], [], []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
             "shrink_axis_mask": 0}
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            for part in (s.start, s.stop, s.step):
                _check_index(part, allow_none=True)
            begin.append(s.start if s.start is not None else 0)
            end.append(s.stop if s.stop is not None else 0)
            strides.append(s.step if s.step is not None else 1)
            if s.start is None:
                masks["begin_mask"] |= bit
            if s.stop is None:
                masks["end_mask"] |= bit
        elif s is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif s is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            _check_index(s, allow_none=False)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    sliced = strided_slice(tensor, _index_vector(begin), _index_vector(end),
                           _index_vector(strides), **masks)
    if var is not None:
        # var[...].assign(value): the variable's selection replaced in place, as TensorFlow's.
        def assign(value, name=None):
            return _strided_slice_assign(var, begin, end, strides, value, name, **masks)
        sliced.assign = assign
    return sliced


def _strided_slice_assign(var, begin, end, strides, value, name, **masks):
    """The variable `var` with its selection (as _slice_helper reads it) replaced by value,
    which must have the selection's shape: its reference, which reads the new value."""
    value = convert_to_tensor(value, dtype=var.dtype.base_dtype, name="value")
    begin, end, strides = _one_index_dtype(_index_vector(begin), _index_vector(end),
                                           _index_vector(strides))
    return _make("StridedSliceAssign", [var._ref, begin, end, strides, value], masks,
                 name).outputs[0]


def _check_index(s, allow_none):
    if s is None and allow_none:
        return
    if isinstance(s, Tensor):
        if s.dtype in (_dtypes.int32, _dtypes.int64) and s.shape.ndims in (0, None):
            return
    elif isinstance(s, (int, np.integer)) and not isinstance(s, builtins.bool):
        return
    raise TypeError("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                    "scalar tf.int32/tf.int64 tensors are valid indices, got %r" % (s,))


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """tf.pad: paddings[i] = [before, after] elements added around dimension i, filled with
    constant_values (mode "CONSTANT"), or mirroring the input at its borders without the border
    element ("REFLECT": paddings below the dimension) or with it ("SYMMETRIC": up to it). The
    mode is not case-sensitive."""
    if not isinstance(mode, str) or mode.upper() not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError("Unknown padding mode: %s" % (mode,))
    tensor = _tensor(tensor)
    paddings = _int_input(paddings, "pad: paddings")
    if mode.upper() != "CONSTANT":
        return _make("MirrorPad", [tensor, paddings], {"mode": mode.upper()}, name).outputs[0]
    if isinstance(constant_values, (int, float)) and constant_values == 0:
        return _make("Pad", [tensor, paddings], {}, name).outputs[0]
    value = constant_values if isinstance(constant_values, Tensor) else \
        convert_to_tensor(constant_values, dtype=tensor.dtype)
    return _make("PadV2", [tensor, paddings, value], {}, name).outputs[0]


def transpose(a, perm=None, name="transpose", conjugate=False):
    """tf.transpose: dimension i of the result is dimension perm[i] of `a` (default: the
    dimensions reversed)."""
    a = _tensor(a)
    if perm is None:
        ndims = a.shape.ndims
        if ndims is not None:
            perm = np.arange(ndims - 1, -1, -1, dtype=np.int32)
        else:
            from .ops import subtract
            r = rank(a)
            perm = subtract(subtract(r, 1), range(0, r))
    return _make("Transpose", [a, _int_input(perm, "transpose: perm")], {}, name).outputs[0]


def invert_permutation(x, name=None):
    return _make("InvertPermutation", [_int_input(x, "invert_permutation: x")], {},
                 name).outputs[0]


def reverse(tensor, axis, name=None):
    """tf.reverse (= tf.reverse_v2): `tensor` with the dimensions in `axis` reversed."""
    return _make("ReverseV2", [_tensor(tensor),
                               _int_input(axis, "reverse: axis")], {}, name).outputs[0]


reverse_v2 = reverse


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """tf.reverse_sequence: in each batch entry b (along batch_axis, 0 by default), the first
    seq_lengths[b] elements along seq_axis reversed, the rest kept."""
    if seq_axis is not None and seq_dim is not None:
        raise ValueError("Cannot specify both 'seq_axis' and 'seq_dim'")
    if batch_axis is not None and batch_dim is not None:
        raise ValueError("Cannot specify both 'batch_axis' and 'batch_dim'")
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    if seq_axis is None:
        raise TypeError("reverse_sequence: seq_axis is required")
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    lengths = _int_input(seq_lengths, "reverse_sequence: seq_lengths")
    return _make("ReverseSequence", [_tensor(input), lengths],
                 {"seq_dim": int(seq_axis), "batch_dim": int(batch_axis)}, name).outputs[0]


def tile(input, multiples, name=None):  # noqa: A002 - TensorFlow's name
    """tf.tile: `input` repeated multiples[i] times along dimension i."""
    return _make("Tile", [_tensor(input), _int_input(multiples, "tile: multiples")],
                 {}, name).outputs[0]


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """tf.expand_dims: a dimension of size 1 inserted at `axis` (`dim` is its old name)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("can't specify both 'dim' and 'axis'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return _make("ExpandDims", [_tensor(input),
                                _int_input(axis, "expand_dims: axis")], {}, name).outputs[0]


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """tf.squeeze: the dimensions of size 1 removed (all of them, or those in `axis`)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif isinstance(axis, (int, np.integer)):
        axis = [axis]
    axis = [_check_int(a, "squeeze: axis") for a in axis]
    return _make("Squeeze", [_tensor(input)], {"squeeze_dims": axis},
                 name).outputs[0]


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """tf.one_hot: on_value (1) where an index points along a new dimension of size depth,
    off_value (0) elsewhere; indices outside [0, depth) give a row of off_value."""
    indices = _int_input(indices, "one_hot: indices")
    # As TensorFlow: the dtype of on_value (else off_value) when given, else `dtype`, else
    # float32; a given dtype must agree with them.
    given = [_tensor(v) for v in (on_value, off_value) if v is not None]
    if given:
        value_dtype = given[0].dtype
        if dtype is not None and _dtypes.as_dtype(dtype) != value_dtype:
            raise TypeError("dtype {0} of on_value does not match dtype parameter {1}"
                            .format(value_dtype.name, _dtypes.as_dtype(dtype).name))
        dtype = value_dtype
    dtype = _dtypes.as_dtype(dtype if dtype is not None else _dtypes.float32)
    on = _tensor(on_value) if on_value is not None else convert_to_tensor(1, dtype=dtype)
    off = _tensor(off_value) if off_value is not None else convert_to_tensor(0, dtype=dtype)
    if on.dtype != dtype or off.dtype != dtype:
        raise TypeError("one_hot: on_value (%s) and off_value (%s) must have one dtype"
                        % (on.dtype.name, off.dtype.name))
    depth = depth if isinstance(depth, Tensor) else np.int32(_check_int(depth, "depth"))
    axis = -1 if axis is None else _check_int(axis, "one_hot: axis")
    if not isinstance(indices, Tensor):
        indices = convert_to_tensor(indices)
    return _make("OneHot", [indices, depth, on, off], {"axis": axis}, name).outputs[0]


_RANGE_ORDER = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """tf.range: start, start + delta, ... up to (not including) limit; range(n) counts from
    0. The dtype is the widest of the arguments' unless given."""
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is None:
        kinds = []
        for v in values:
            if isinstance(v, Tensor):
                kinds.append(v.dtype)
            elif isinstance(v, (float, np.floating)):
                kinds.append(_dtypes.float32)
            else:
                kinds.append(_dtypes.int32)
        dtype = max(kinds, key=_RANGE_ORDER.index)
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _RANGE_ORDER:
        raise TypeError("range: dtype must be int32, int64, float32 or float64, got %s"
                        % dtype.name)
    from .ops import cast
    tensors = [cast(v, dtype) if isinstance(v, Tensor) and v.dtype != dtype else
               (v if isinstance(v, Tensor) else convert_to_tensor(v, dtype=dtype))
               for v in values]
    return _make("Range", tensors, {}, name).outputs[0]


def rank(input, name=None):  # noqa: A002
    """tf.rank: the number of dimensions of `input`, an int32 scalar."""
    return _make("Rank", [_tensor(input)], {}, name).outputs[0]


Tensor.__getitem__ = _slice_helper


# ---- composites, as TensorFlow 1.x builds them from other ops ----

def broadcast_to(input, shape, name=None):  # noqa: A002 - TensorFlow's name
    """`input` broadcast (numpy's rules) to `shape`."""
    return _make("BroadcastTo", [convert_to_tensor(input, name="input"),
                                 convert_to_tensor(shape, name="shape")],
                 name=name or "BroadcastTo").outputs[0]


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """mask[i..., j] = j < lengths[i...]: lengths' shape + [maxlen] (default: the largest
    length)."""
    from .framework import name_scope
    from .ops import cast, less, reduce_max
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths, name="lengths")
        if lengths.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError("sequence_mask: lengths must be integers, got %s"
                            % lengths.dtype.name)
        if isinstance(maxlen, int) and not isinstance(maxlen, bool):
            row = range(0, maxlen, 1, dtype=lengths.dtype)  # of a static length
        else:
            if maxlen is None:  # the longest, 0 for no (or only negative) lengths
                from .ops import maximum
                maxlen = maximum(reduce_max(lengths), 0)
            else:
                maxlen = convert_to_tensor(maxlen, name="maxlen")
                if maxlen.shape.ndims not in (None, 0):
                    raise ValueError("maxlen must be scalar for sequence_mask")
            row = range(0, cast(maxlen, lengths.dtype), 1, dtype=lengths.dtype)
        mask = less(row, expand_dims(lengths, -1))
        return mask if _dtypes.as_dtype(dtype) == _dtypes.bool else \
            cast(mask, dtype)


def meshgrid(*args, **kwargs):
    """Coordinate matrices from coordinate vectors, as numpy.meshgrid: indexing "xy" (the
    default: the first two dimensions swapped) or "ij"."""
    from .framework import name_scope
    from .ops import reshape, size, stack, zeros
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError("'%s' is an invalid keyword argument for this function"
                        % next(iter(kwargs)))
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    with name_scope(name, "meshgrid", args):
        vectors = [convert_to_tensor(a) for a in args]
        n = len(vectors)
        if n == 0:
            return []
        sizes = [size(v) for v in vectors]
        if indexing == "xy" and n > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        outputs = []
        for i, v in enumerate(vectors):
            at = i
            if indexing == "xy" and n > 1 and i < 2:
                at = 1 - i
            dims = [1] * n
            dims[at] = -1
            out = reshape(v, dims) + zeros(stack(sizes), dtype=v.dtype)
            static = [v_.shape.num_elements() if v_.shape.is_fully_defined() else None
                      for v_ in vectors]
            if indexing == "xy" and n > 1:
                static[0], static[1] = static[1], static[0]
            out.set_shape(static)
            outputs.append(out)
        return outputs


def roll(input, shift, axis, name=None):  # noqa: A002 - TensorFlow's name
    """Elements shifted along `axis` (an int or a list, with `shift` of the same length),
    wrapping around: out[(i + shift) mod n] = input[i]."""
    from .framework import name_scope
    from .math_ops import floormod
    from .ops import gather, shape
    with name_scope(name, "Roll", [input, shift, axis]):
        x = convert_to_tensor(input, name="input")
        shifts = shift if isinstance(shift, (list, tuple)) else [shift]
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        if len(shifts) != len(axes):
            raise ValueError("shift and axis must have the same size, got %d and %d"
                             % (len(shifts), len(axes)))
        for s, a in zip(shifts, axes):
            n = shape(x)[a]
            positions = range(0, n, 1)
            rolled = gather(x, floormod(positions - convert_to_tensor(s, dtype=_dtypes.int32),
                                        n), axis=a)
            rolled.set_shape(x.shape)
            x = rolled
        return x


def _sort(values, axis, direction, want_indices, name):
    from .framework import name_scope
    from .nn import top_k
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError('Unknown direction: %s (expected "ASCENDING" or "DESCENDING")'
                         % direction)
    with name_scope(name, "argsort" if want_indices else "sort"):
        x = convert_to_tensor(values, name="values")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("sort: the rank of values must be known")
        if rank == 0:
            raise ValueError("sort: values must have rank >= 1, got a scalar")
        if not -rank <= axis < rank:
            raise ValueError("sort: axis %d is out of range for values of rank %d"
                             % (axis, rank))
        static = x.shape
        axis = axis % rank
        perm = None
        if axis != rank - 1:
            perm = list(builtins.range(rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            x = transpose(x, perm)
        from .ops import shape
        k = shape(x)[-1]
        ascending = direction == "ASCENDING"
        result = top_k(-x if ascending else x, k=k, sorted=True)
        out = result.indices if want_indices else (-result.values if ascending
                                                   else result.values)
        out = transpose(out, perm) if perm is not None else out
        out.set_shape(static)
        return out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """values sorted along `axis` (TensorFlow's sort: top_k of all the elements)."""
    return _sort(values, axis, direction, False, name)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort values along `axis` (int32)."""
    return _sort(values, axis, direction, True, name)


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """NHWC blocks of block_size x block_size moved into the depth: [b, h / bs, w / bs,
    bs * bs * c]."""
    if data_format != "NHWC":
        raise ValueError("space_to_depth: data_format %r is not supported by troupe (NHWC)"
                         % data_format)
    if not isinstance(block_size, int) or block_size < 2:
        raise ValueError("Value for attr 'block_size' of %r must be at least minimum 2"
                         % (block_size,))
    from .ops import reshape, shape
    x = convert_to_tensor(input, name="input")
    known = _static_nhwc(x, "space_to_depth")
    bs = block_size
    for what, d in (("height", known[1]), ("width", known[2])):
        if d is not None and d % bs:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d "
                             "(space_to_depth input %s)" % (bs, d, what))
    dims = [shape(x)[i] for i in builtins.range(4)]
    y = reshape(x, [dims[0], dims[1] // bs, bs, dims[2] // bs, bs, dims[3]])
    y = transpose(y, [0, 1, 3, 2, 4, 5])
    out = reshape(y, [dims[0], dims[1] // bs, dims[2] // bs, bs * bs * dims[3]],
                  name=name or "SpaceToDepth")
    out.set_shape([known[0], _div(known[1], bs), _div(known[2], bs), _mul(known[3], bs * bs)])
    return out


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """The inverse of space_to_depth: [b, h, w, c] -> [b, h * bs, w * bs, c / (bs * bs)]."""
    if data_format != "NHWC":
        raise ValueError("depth_to_space: data_format %r is not supported by troupe (NHWC)"
                         % data_format)
    if not isinstance(block_size, int) or block_size < 2:
        raise ValueError("Value for attr 'block_size' of %r must be at least minimum 2"
                         % (block_size,))
    from .ops import reshape, shape
    x = convert_to_tensor(input, name="input")
    known = _static_nhwc(x, "depth_to_space")
    bs = block_size
    if known[3] is not None and known[3] % (bs * bs):
        raise ValueError("Dimension size must be evenly divisible by %d but is %d "
                         "(depth_to_space input depth)" % (bs * bs, known[3]))
    dims = [shape(x)[i] for i in builtins.range(4)]
    y = reshape(x, [dims[0], dims[1], dims[2], bs, bs, dims[3] // (bs * bs)])
    y = transpose(y, [0, 1, 3, 2, 4, 5])
    out = reshape(y, [dims[0], dims[1] * bs, dims[2] * bs, dims[3] // (bs * bs)],
                  name=name or "DepthToSpace")
    out.set_shape([known[0], _mul(known[1], bs), _mul(known[2], bs), _div(known[3], bs * bs)])
    return out


def _static_nhwc(x, what):
    """x's four static dimensions (None where unknown); ValueError unless its rank is 4."""
    if x.shape.ndims is None:
        return [None] * 4
    if x.shape.ndims != 4:
        raise ValueError("%s: input must be 4-dimensional (NHWC), got shape %s"
                         % (what, x.shape))
    return x.shape.as_list()


def _div(d, by):
    return None if d is None else d // by


def _mul(d, by):
    return None if d is None else d * by


_ListDiff = __import__("collections").namedtuple("ListDiff", ["out", "idx"])


def setdiff1d(x, y, index_dtype=_dtypes.int32, name=None):
    """The values of the vector x that are not in y, in x's order, and their indices in x."""
    from .framework import name_scope
    from .ops import cast, equal, gather, logical_not, reshape, where
    from .math_ops import reduce_any
    with name_scope(name, "ListDiff", [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        for what, v in (("x", x), ("y", y)):
            if v.shape.ndims not in (None, 1):
                raise ValueError("setdiff1d: %s must be a vector, got shape %s"
                                 % (what, v.shape))
        keep = logical_not(reduce_any(equal(expand_dims(x, 1), expand_dims(y, 0)), axis=1))
        idx = reshape(where(keep), [-1])
        return _ListDiff(gather(x, idx), cast(idx, index_dtype))


# ---- diagonals and bands of matrices (the innermost two dimensions) ----

def _diagonal_mask(rows, cols, num_lower=-1, num_upper=-1):
    """bool [rows, cols]: (i - j <= num_lower or num_lower < 0) and (j - i <= num_upper or
    num_upper < 0); with both 0, the main diagonal."""
    from .math_ops import logical_and, logical_or
    from .ops import cast, less, less_equal
    i = expand_dims(range(0, rows, 1, dtype=_dtypes.int64), 1)
    j = expand_dims(range(0, cols, 1, dtype=_dtypes.int64), 0)
    lower = cast(convert_to_tensor(num_lower), _dtypes.int64)
    upper = cast(convert_to_tensor(num_upper), _dtypes.int64)
    return logical_and(logical_or(less(lower, 0), less_equal(i - j, lower)),
                       logical_or(less(upper, 0), less_equal(j - i, upper)))


def _matrix_dims(x, what, rank_at_least=2):
    from .ops import shape
    if x.shape.ndims is not None and x.shape.ndims < rank_at_least:
        raise ValueError("%s: input must be at least rank %d, got shape %s"
                         % (what, rank_at_least, x.shape))
    dims = shape(x)
    return dims, dims[-2], dims[-1]


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """The band of each innermost matrix: num_lower subdiagonals and num_upper superdiagonals
    kept (a negative number keeps the whole triangle), zeros elsewhere. band_part(x, -1, 0) is
    the lower triangle (a causal mask), (0, 0) the diagonal."""
    from .framework import name_scope
    from .ops import where, zeros_like
    with name_scope(name, "MatrixBandPart", [input, num_lower, num_upper]):
        x = convert_to_tensor(input, name="input")
        dims, rows, cols = _matrix_dims(x, "matrix_band_part")
        mask = broadcast_to(_diagonal_mask(rows, cols, num_lower, num_upper), dims)
        return where(mask, x, zeros_like(x))


def matrix_diag(diagonal, name=None):
    """[..., N] -> [..., N, N] matrices with the diagonal given, zero elsewhere."""
    from .framework import name_scope
    from .ops import shape, where, zeros_like
    with name_scope(name, "MatrixDiag", [diagonal]):
        d = convert_to_tensor(diagonal, name="diagonal")
        if d.shape.ndims == 0:
            raise ValueError("matrix_diag: diagonal must be at least rank 1, got a scalar")
        n = shape(d)[-1]
        full = concat([shape(d), expand_dims(n, 0)], 0)
        spread = broadcast_to(expand_dims(d, -1), full)
        out = where(broadcast_to(_diagonal_mask(n, n, 0, 0), full), spread,
                    zeros_like(spread))
        if d.shape.ndims is not None:
            out.set_shape(d.shape.as_list() + d.shape.as_list()[-1:])
        return out


def matrix_diag_part(input, name=None):  # noqa: A002
    """The main diagonal of each innermost matrix: [..., M, N] -> [..., min(M, N)]."""
    from .framework import name_scope
    from .ops import gather, minimum, reduce_sum, where, zeros_like
    with name_scope(name, "MatrixDiagPart", [input]):
        x = convert_to_tensor(input, name="input")
        dims, rows, cols = _matrix_dims(x, "matrix_diag_part")
        rows_sums = reduce_sum(where(broadcast_to(_diagonal_mask(rows, cols, 0, 0), dims), x,
                                     zeros_like(x)), axis=-1)
        out = gather(rows_sums, range(0, minimum(rows, cols), 1), axis=-1) \
            if x.shape.ndims is None else \
            gather(rows_sums, range(0, minimum(rows, cols), 1), axis=x.shape.ndims - 2)
        if x.shape.ndims is not None:
            static = x.shape.as_list()
            m, n = static[-2], static[-1]
            out.set_shape(static[:-2] + [min(m, n) if m is not None and n is not None
                                         else None])
        return out


def matrix_set_diag(input, diagonal, name=None):  # noqa: A002
    """Each innermost matrix with its main diagonal replaced by `diagonal` [..., min(M, N)]."""
    from .framework import name_scope
    from .ops import minimum, where
    with name_scope(name, "MatrixSetDiag", [input, diagonal]):
        x = convert_to_tensor(input, name="input")
        d = convert_to_tensor(diagonal, name="diagonal", dtype=x.dtype)
        dims, rows, cols = _matrix_dims(x, "matrix_set_diag")
        # The diagonal padded to [..., N] and spread down each column: placed by the mask.
        if d.shape.ndims is None:
            raise ValueError("matrix_set_diag: the rank of diagonal must be known")
        from .ops import stack
        padding = cols - minimum(rows, cols)
        paddings = concat([np.zeros([d.shape.ndims - 1, 2], np.int32),
                           expand_dims(stack([0, padding]), 0)], 0)
        spread = broadcast_to(expand_dims(pad(d, paddings), -2), dims)
        return where(broadcast_to(_diagonal_mask(rows, cols, 0, 0), dims), spread, x)


def diag(diagonal, name=None):
    """A tensor of rank 2k with `diagonal` (rank k) on its diagonal:
    output[i1, ..., ik, i1, ..., ik] = diagonal[i1, ..., ik]."""
    from .framework import name_scope
    from .ops import reshape, shape
    with name_scope(name, "Diag", [diagonal]):
        d = convert_to_tensor(diagonal, name="diagonal")
        if d.shape.ndims == 0:
            raise ValueError("diag: diagonal must be at least rank 1, got a scalar")
        square = matrix_diag(reshape(d, [-1]))
        out = reshape(square, concat([shape(d), shape(d)], 0))
        if d.shape.ndims is not None:
            out.set_shape(d.shape.as_list() * 2)
        return out


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a tensor of even rank 2k whose first and last k dimensions are equal:
    diagonal[i1, ..., ik] = input[i1, ..., ik, i1, ..., ik]."""
    from .framework import name_scope
    from .ops import reduce_prod, reshape, shape
    with name_scope(name, "DiagPart", [input]):
        x = convert_to_tensor(input, name="input")
        rank = x.shape.ndims
        if rank is None or rank % 2 or rank == 0:
            raise ValueError("diag_part: input must have a known, even, non-zero rank, got "
                             "shape %s" % x.shape)
        half = rank // 2
        static = x.shape.as_list()
        if any(a is not None and b is not None and a != b
               for a, b in zip(static[:half], static[half:])):
            raise ValueError("diag_part: the first and last halves of the input's shape must "
                             "be equal, got %s" % x.shape)
        from .check_ops import assert_equal
        from .framework import get_default_graph
        dims = shape(x)
        outer = dims[:half]
        check = assert_equal(outer, dims[half:],
                             message="diag_part: the first and last halves of the input's "
                                     "shape differ")
        with get_default_graph().control_dependencies([check]):
            n = reduce_prod(outer)
        out = reshape(matrix_diag_part(reshape(x, [n, n])), outer)
        out.set_shape(static[:half])
        return out
