"""tf.ConditionalAccumulator and tf.SparseConditionalAccumulator, as TensorFlow 1.x's
data_flow_ops: gradients computed at a local step older than the accumulator's global step are
dropped; a take waits until enough have arrived and returns their average (the sparse one:
each row's average over the gradients that had it), then advances the step. The accumulator
lives where its op is placed (next to its variable, as SyncReplicasOptimizer puts it)
(graph/ops/data_flow_ops.hpp, devices/gradient_accumulator.hpp)."""

import collections

import numpy as np

from . import dtypes as _dtypes
from .framework import IndexedSlices, Tensor, TensorShape, convert_to_tensor, name_scope
from .ops import _make, cast

_REDUCTIONS = ("MEAN", "SUM")
# What SparseConditionalAccumulator.take_grad returns, as TensorFlow's namedtuple.
_TakenGradient = collections.namedtuple("TakenGradient", ["indices", "values", "shape"])


class ConditionalAccumulatorBase:
    """What both accumulators share: the reference, dtype, name, num_accumulated and
    set_global_step."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = shape
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """How many gradients the accumulator holds now (int32)."""
        return _make("AccumulatorNumAccumulated", [self._accumulator_ref], {},
                     name or "%s_NumAccumulated" % self._name).outputs[0]

    def set_global_step(self, new_global_step, name=None):
        """Sets the accumulator's step (never backwards)."""
        step = new_global_step if isinstance(new_global_step, Tensor) else \
            convert_to_tensor(np.int64(new_global_step))
        if step.dtype != _dtypes.int64:
            step = cast(step, _dtypes.int64)
        return _make("AccumulatorSetGlobalStep", [self._accumulator_ref, step], {},
                     name or "AccumulatorSetGlobalStep")

    @staticmethod
    def _make_ref(op_type, dtype, shape, shared_name, name, reduction_type):
        dtype = _dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("%s: dtype must be float32 or float64, got %s" % (op_type, dtype.name))
        if reduction_type not in _REDUCTIONS:
            raise ValueError("%s: reduction_type must be 'MEAN' or 'SUM', got %r"
                             % (op_type, reduction_type))
        shape = TensorShape(None if shape is None else
                            (shape.dims if isinstance(shape, TensorShape) else list(shape)))
        attrs = {"dtype": dtype.as_datatype_enum, "shape": shape.dims,
                 "shared_name": shared_name or "", "reduction_type": reduction_type}
        return dtype, shape, _make(op_type, [], attrs, name).outputs[0]

    @staticmethod
    def _required(num_required):
        if isinstance(num_required, Tensor):
            return num_required if num_required.dtype == _dtypes.int32 else \
                cast(num_required, _dtypes.int32)
        return np.int32(num_required)

    def _step(self, local_step):
        step = local_step if isinstance(local_step, Tensor) else \
            convert_to_tensor(np.int64(local_step))
        return step if step.dtype == _dtypes.int64 else cast(step, _dtypes.int64)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one shape."""

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        dtype, shape, ref = self._make_ref("ConditionalAccumulator", dtype, shape, shared_name,
                                           name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """Adds `grad` unless local_step is older than the accumulator's step. ValueError for a
        gradient of another shape."""
        grad = grad if isinstance(grad, Tensor) else convert_to_tensor(grad, dtype=self._dtype)
        if grad.dtype != self._dtype:
            raise ValueError("apply_grad: the gradient is %s, the accumulator takes %s"
                             % (grad.dtype.name, self._dtype.name))
        if not grad.shape.is_compatible_with(self._shape):
            raise ValueError("Shapes %s and %s are incompatible" % (grad.shape, self._shape))
        return _make("AccumulatorApplyGradient",
                     [self._accumulator_ref, self._step(local_step), grad], {}, name)

    def take_grad(self, num_required, name=None):
        """Waits for num_required gradients; their average (MEAN) or sum (SUM)."""
        out = _make("AccumulatorTakeGradient",
                    [self._accumulator_ref, self._required(num_required)],
                    {"dtype": self._dtype.as_datatype_enum}, name).outputs[0]
        if self._shape.dims is not None:
            out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (IndexedSlices): only the rows they touch are held; a take
    gives each row's average over the gradients that had it (TensorFlow's element-wise
    average), rows in increasing order."""

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        dtype, shape, ref = self._make_ref("SparseConditionalAccumulator", dtype, shape,
                                           shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        if not isinstance(grad, IndexedSlices):
            raise TypeError("apply_indexed_slices_grad: expected IndexedSlices, got %r"
                            % (grad,))
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """Adds the gradient (int64 indices, values [n] + row shape, optional dense shape)
        unless local_step is older than the accumulator's step."""
        indices = grad_indices if isinstance(grad_indices, Tensor) else \
            convert_to_tensor(np.asarray(grad_indices, np.int64))
        if indices.dtype != _dtypes.int64:
            indices = cast(indices, _dtypes.int64)
        values = grad_values if isinstance(grad_values, Tensor) else \
            convert_to_tensor(grad_values, dtype=self._dtype)
        known = grad_shape is not None
        if known:
            shape = grad_shape if isinstance(grad_shape, Tensor) else \
                convert_to_tensor(np.asarray(grad_shape, np.int64))
            if shape.dtype != _dtypes.int64:
                shape = cast(shape, _dtypes.int64)
        else:
            shape = convert_to_tensor(np.zeros([0], np.int64))
        return _make("SparseAccumulatorApplyGradient",
                     [self._accumulator_ref, self._step(local_step), indices, values, shape],
                     {"has_known_shape": known}, name)

    def take_grad(self, num_required, name=None):
        """Waits for num_required gradients: (indices, values, shape), a namedtuple."""
        op = _make("SparseAccumulatorTakeGradient",
                   [self._accumulator_ref, self._required(num_required)],
                   {"dtype": self._dtype.as_datatype_enum}, name)
        return _TakenGradient(op.outputs[0], op.outputs[1], op.outputs[2])

    def take_indexed_slices_grad(self, num_required, name=None):
        with name_scope(name, "TakeIndexedSlicesGrad"):
            indices, values, shape = self.take_grad(num_required)
            return IndexedSlices(values, indices, shape)
