"""tf.TensorArray, as TensorFlow 1.x documents it for graphs: a list of tensors of one dtype
and one element shape that a tf.while_loop writes one element per iteration (or that unstack
fills), read back with read, gather, stack or concat; gradients flow through it.

As in TensorFlow, each write returns a new TensorArray that later operations must use
(`ta = ta.write(t, x)`). troupe keeps the elements in one tensor of shape
[capacity] + element shape, written with tensor_scatter_update (TensorFlow 2's functional
TensorArray, not TensorFlow 1's resource): a TensorArray is a pair of tensors (the elements and
the size) that tf.while_loop carries as loop variables, and the loop's gradient does not record
the elements when the body only writes them (as map_fn's results).

The elements are made at the first write, the size given at construction (grown by writes
past it with dynamic_size=True). A TensorArray whose element shape is not fully known before a
loop writes it is sized by a trace of the loop's body (control_flow_ops.py) that adds nothing
to the graph, or, when only the run knows the shape, by a call of the body outside the loop.

How it differs from TensorFlow's (docs/python.md): every element has the same shape; elements
never written read as zeros and a second write replaces the first; reading an element twice is
allowed (clear_after_read is accepted, not enforced); an index out of range fails the step with
the gather or scatter kernel's InvalidArgument; split, grad, handle and flow construction, and
scatter with dynamic_size, are not supported (each raises saying so)."""

from . import dtypes as _dtypes
from .framework import TensorShape, convert_to_tensor, name_scope


class TensorArray:
    """tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None or flow is not None:
            raise ValueError("TensorArray(handle=..., flow=...): troupe's TensorArray is not a "
                             "resource and cannot be made from a handle or flow")
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = TensorShape(element_shape) if element_shape is not None \
            else TensorShape(None)
        self._name = tensor_array_name or name or "TensorArray"
        self._reads = None  # in a while_loop's body: a log of its reads (control_flow_ops.py)
        # The size when it is a number: the first dimension of stack()'s static shape.
        self._static_size = size if isinstance(size, int) and not dynamic_size else None
        with name_scope(name, "TensorArray"):
            self._size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
            if self._size.shape.ndims not in (None, 0):
                raise ValueError("TensorArray: size must be a scalar, got shape %s"
                                 % self._size.shape)
            self._elements = None
            if self._element_shape.is_fully_defined():
                self._elements = self._zeros(self._element_shape.as_list())

    # --- what a TensorArray is made of ---

    def _zeros(self, element_shape):
        """Zeros of [size] + element_shape (a list of ints, or a 1-D int32 tensor)."""
        from .array_ops import concat
        from .ops import reshape, zeros
        if isinstance(element_shape, list):
            element_shape = convert_to_tensor(element_shape, dtype=_dtypes.int32)
        dims = concat([reshape(self._size, [1]), element_shape], 0)
        if self._dtype == _dtypes.string:
            from .ops import fill
            return self._shaped(fill(dims, ""))
        return self._shaped(zeros(dims, dtype=self._dtype))

    def _shaped(self, elements):
        """`elements` with the static shape [size] + element shape, as far as known."""
        if self._element_shape.ndims is not None:
            elements.set_shape([self._static_size] + self._element_shape.as_list())
        return elements

    def _with(self, elements, size):
        """A TensorArray like this one holding `elements` and `size`."""
        result = object.__new__(TensorArray)
        result.__dict__.update(self.__dict__)
        result._elements = elements
        result._size = size
        if elements is not None and elements.shape.ndims is not None:
            result._element_shape = _merge(self._element_shape,
                                           TensorShape(elements.shape.as_list()[1:]))
        return result

    def _check_element(self, value, what):
        """Merges value's shape into the element shape; ValueError if they differ."""
        if not self._element_shape.is_compatible_with(value.shape):
            raise ValueError("Could not %s the TensorArray: the value's shape %s is "
                             "incompatible with the TensorArray's element shape %s"
                             % (what, value.shape, self._element_shape))

    def _value(self, value, what):
        value = convert_to_tensor(value, name="value")
        if value.dtype != self._dtype:
            raise TypeError("TensorArray dtype is %s but Op is trying to write dtype %s "
                            "(%s)" % (self._dtype.name, value.dtype.name, what))
        return value

    def _require_elements(self, what):
        if self._reads is not None:
            self._reads.append(what)
        if self._elements is None:
            raise ValueError("TensorArray.%s: the TensorArray has no elements yet and its "
                             "element shape %s is not fully known (write or unstack first, or "
                             "give element_shape)" % (what, self._element_shape))
        return self._elements

    # --- TensorFlow's API ---

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def handle(self):
        raise ValueError("TensorArray.handle: troupe's TensorArray is two tensors (elements, "
                         "size), not a resource")

    @property
    def flow(self):
        raise ValueError("TensorArray.flow: troupe's TensorArray is two tensors (elements, "
                         "size), not a resource with a flow")

    def identity(self):
        return self._with(self._elements, self._size)

    def size(self, name=None):
        from .ops import identity
        return identity(self._size, name=name or "TensorArraySize")

    def read(self, index, name=None):
        """The element at `index` (a scalar int32 tensor)."""
        from .ops import gather
        with name_scope(name, "TensorArrayRead"):
            elements = self._require_elements("read")
            value = gather(elements, convert_to_tensor(index, dtype=_dtypes.int32))
            value.set_shape(self._element_shape)
            return value

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        from .ops import gather
        with name_scope(name, "TensorArrayGather"):
            elements = self._require_elements("gather")
            return gather(elements, convert_to_tensor(indices, dtype=_dtypes.int32))

    def stack(self, name=None):
        """All the elements, stacked: [size] + element shape."""
        from .array_ops import concat, slice as slice_
        from .ops import reshape, zeros
        with name_scope(name, "TensorArrayStack"):
            elements = self._require_elements("stack")
            if not self._dynamic_size:
                return elements
            # A write past the size grew the capacity to the size: nothing is past it, but
            # the slice keeps the static shape honest ([size] + element shape).
            rank = elements.shape.ndims
            sizes = concat([reshape(self._size, [1]),
                            convert_to_tensor([-1] * (rank - 1), dtype=_dtypes.int32)], 0) \
                if rank > 1 else reshape(self._size, [1])
            return slice_(elements, zeros([rank], dtype=_dtypes.int32), sizes)

    def concat(self, name=None):
        """The elements concatenated along their first dimension."""
        from .array_ops import concat
        from .ops import reshape, shape
        with name_scope(name, "TensorArrayConcat"):
            stacked = self.stack()
            if stacked.shape.ndims is not None and stacked.shape.ndims < 2:
                raise ValueError("Concat saw a scalar shape at index 0: TensorArray.concat needs "
                                 "elements of rank >= 1")
            dims = concat([convert_to_tensor([-1], dtype=_dtypes.int32), shape(stacked)[2:]], 0)
            return reshape(stacked, dims)

    def write(self, index, value, name=None):
        """A TensorArray with `value` at `index`."""
        from .array_ops import concat, expand_dims, pad
        from .ops import maximum, reshape, shape, stack, zeros
        from .sparse_ops import tensor_scatter_update
        with name_scope(name, "TensorArrayWrite"):
            value = self._value(value, "write")
            index = convert_to_tensor(index, dtype=_dtypes.int32, name="index")
            self._check_element(value, "write to")
            elements = self._elements
            if elements is None:
                elements = self._zeros(shape(value))
            size = self._size
            if self._dynamic_size:
                if value.shape.ndims is None:
                    raise ValueError("TensorArray.write with dynamic_size needs a value of known "
                                     "rank")
                # Grow the capacity to index + 1 (once per index past it).
                size = maximum(size, index + 1)
                grow = maximum(index + 1 - shape(elements)[0], 0)
                paddings = concat([reshape(stack([0, grow]), [1, 2]),
                                   zeros([value.shape.ndims, 2], dtype=_dtypes.int32)], 0)
                elements = pad(elements, paddings)
            written = tensor_scatter_update(elements, reshape(index, [1, 1]),
                                            expand_dims(value, 0))
            result = self._with(written, size)
            result._element_shape = _merge(self._element_shape, value.shape)
            result._shaped(written)
            return result

    def unstack(self, value, name=None):
        """A TensorArray whose elements are value's slices along dimension 0: as many as the
        array's size (a fixed size: value must have that many), or more (dynamic_size)."""
        from .ops import maximum, shape
        with name_scope(name, "TensorArrayUnstack"):
            value = self._value(value, "unstack")
            if value.shape.ndims == 0:
                raise ValueError("Shape must be at least rank 1 but is rank 0 (TensorArray."
                                 "unstack)")
            if value.shape.ndims is not None:
                self._check_element(_ShapeOnly(value.shape[1:]), "unstack into")
            rows = value.shape.as_list()[0] if value.shape.ndims is not None else None
            if self._dynamic_size:
                return self._grown(value, maximum(self._size, shape(value)[0]))
            if self._static_size is not None and rows is not None and rows != self._static_size:
                raise ValueError("Input value must have first dimension equal to the array size "
                                 "(%d vs. %d)" % (self._static_size, rows))
            return self._with(value, self._size)

    def _grown(self, value, size):
        """An array of value's rows at 0.., its capacity grown to `size` (dynamic_size)."""
        from .array_ops import concat, pad
        from .ops import maximum, reshape, shape, stack, zeros
        if value.shape.ndims is None:
            raise ValueError("TensorArray.unstack with dynamic_size needs a value of known rank")
        grow = maximum(size - shape(value)[0], 0)
        paddings = concat([reshape(stack([0, grow]), [1, 2]),
                           zeros([value.shape.ndims - 1, 2], dtype=_dtypes.int32)], 0)
        return self._with(pad(value, paddings), size)

    def scatter(self, indices, value, name=None):
        """A TensorArray with value[i] at indices[i]."""
        from .ops import reshape, shape
        from .sparse_ops import tensor_scatter_update
        with name_scope(name, "TensorArrayScatter"):
            value = self._value(value, "scatter")
            indices = convert_to_tensor(indices, dtype=_dtypes.int32, name="indices")
            if value.shape.ndims is not None:
                self._check_element(_ShapeOnly(value.shape[1:]), "scatter into")
            elements = self._elements
            if elements is None:
                elements = self._zeros(shape(value)[1:])
            if self._dynamic_size:
                raise ValueError("TensorArray.scatter with dynamic_size is not supported by "
                                 "troupe: give the size")
            written = tensor_scatter_update(elements, reshape(indices, [-1, 1]), value)
            return self._with(written, self._size)

    def split(self, value, lengths, name=None):
        raise NotImplementedError("TensorArray.split is not supported by troupe (its elements "
                                  "all have one shape): use unstack of a reshaped value")

    def grad(self, source, flow=None, name=None):
        raise NotImplementedError("TensorArray.grad is not supported by troupe: tf.gradients "
                                  "differentiates through a TensorArray's reads and writes")

    def close(self, name=None):
        from .ops import no_op
        return no_op(name=name or "TensorArrayClose")


class _ShapeOnly:
    """A stand-in with only a shape, for _check_element."""

    def __init__(self, shape):
        self.shape = shape


def _merge(known, other):
    """The shape with what either of two compatible shapes knows."""
    if known.ndims is None:
        return other
    if other.ndims is None:
        return known
    return TensorShape([a if a is not None else b
                        for a, b in zip(known.as_list(), other.as_list())])


def _flat(ta):
    """The two tensors a TensorArray is, as while_loop carries them."""
    if ta._elements is None:
        raise ValueError("a TensorArray without elements (its element shape %s is not fully "
                         "known) cannot be a loop variable here: write or unstack it first, "
                         "or give element_shape" % ta._element_shape)
    return [ta._elements, ta._size]
