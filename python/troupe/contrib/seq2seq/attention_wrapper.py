"""tf.contrib.seq2seq's attention, as TensorFlow 1.15 defines it: the attention mechanisms
LuongAttention (multiplicative, optionally scaled) and BahdanauAttention (additive, optionally
normalized), hardmax, and AttentionWrapper, an RNNCell that runs a cell and attends over a
memory (an encoder's outputs) at each step.

A mechanism keys its memory once, when it is made (memory_layer, a Dense without bias, on the
memory masked past memory_sequence_length); each query (the cell's output) is scored against
the keys, the scores past a sequence's length are masked with score_mask_value (-inf), and
probability_fn (softmax) turns them into alignments. AttentionWrapper concatenates its inputs
with the previous attention (cell_input_fn), runs the cell, and for each mechanism takes the
alignments' weighted sum of the memory (the context), passed with the cell's output through
the attention layer (attention_layer_size) when there is one. Variables are TensorFlow's:
memory_layer/kernel where the mechanism is made; attention_wrapper/<cell>/...,
attention_wrapper/bahdanau_attention/query_layer/kernel, .../attention_v (attention_g,
attention_b when normalized), attention_wrapper/luong_attention/attention_g (scaled) and
attention_wrapper/attention_layer/kernel. As troupe makes no variable inside a loop's body, the
wrapper makes all of them when it is built (dynamic_rnn and the decoders build a cell before
their loop), by tracing one step; its steps run in its variable scope, as TensorFlow's. The
monotonic mechanisms (Raffel et al. 2017: a sigmoid of the score, plus a learned score
bias, is the chance of stopping at each memory entry, moving only forward) are here too;
TensorFlow 2's V2 classes are not in troupe."""

import collections
import math

import numpy as np

from ... import nest
from ...array_ops import concat, expand_dims, one_hot, sequence_mask, squeeze
from ...check_ops import assert_equal, assert_positive
from ...dtypes import float32, int32
from ...framework import (Tensor, TensorShape, control_dependencies, convert_to_tensor,
                          name_scope)
from ...layers import Dense, Layer
from ...math_ops import matmul
from ...ops import argmax, identity, ones, ones_like, reduce_sum, reshape, rsqrt
from ...ops import shape, square, tanh, where, zeros
from ...rnn_cell import RNNCell
from ...tensor_array_ops import TensorArray
from ...variables import (constant_initializer, get_variable, ones_initializer,
                          variable_scope, zeros_initializer)

__all__ = ["AttentionMechanism", "AttentionWrapper", "AttentionWrapperState",
           "LuongAttention", "BahdanauAttention", "hardmax", "safe_cumprod",
           "monotonic_attention", "BahdanauMonotonicAttention", "LuongMonotonicAttention"]


class AttentionMechanism:
    """The interface AttentionWrapper takes: alignments_size, state_size, values,
    batch_size, initial_alignments(batch_size, dtype), initial_state(batch_size, dtype), and
    __call__(query, state) -> (alignments, next_state)."""

    @property
    def alignments_size(self):
        raise NotImplementedError

    @property
    def state_size(self):
        raise NotImplementedError


def _zero_state_tensors(size, batch_size, dtype):
    zero = zeros([batch_size, size], dtype=dtype)
    zero.set_shape([_static(batch_size), _static(size)])
    return zero


def _static(value):
    """A Python int for an int or a constant scalar tensor, else None."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Tensor) and value.op.type == "Const":
        return int(value.op.get_attr("value"))
    return None


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """The memory as tensors, zero past each batch entry's memory_sequence_length."""
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if memory_sequence_length is not None:
        memory_sequence_length = convert_to_tensor(memory_sequence_length,
                                                   name="memory_sequence_length")
    if check_inner_dims_defined:
        def check_dims(m):
            if m.shape.ndims is None or not TensorShape(m.shape.as_list()[2:]) \
                    .is_fully_defined():
                raise ValueError("Expected memory %s to have fully defined inner dims, but saw "
                                 "shape: %s" % (m.name, m.shape))
        nest.map_structure(check_dims, memory)
    if memory_sequence_length is None:
        return memory
    first = nest.flatten(memory)[0]
    mask = sequence_mask(memory_sequence_length, maxlen=shape(first)[1], dtype=first.dtype)

    def masked(m):
        extra_ones = ones([m.shape.ndims - 2], dtype=int32)
        return m * reshape(mask, concat((shape(mask), extra_ones), 0))
    return nest.map_structure(masked, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    """Scores past each batch entry's memory_sequence_length replaced by score_mask_value."""
    if memory_sequence_length is None:
        return score
    message = "All values in memory_sequence_length must be greater than zero."
    with control_dependencies([assert_positive(memory_sequence_length, message=message)]):
        memory_mask = sequence_mask(memory_sequence_length, maxlen=shape(score)[1])
    return where(memory_mask, score, score_mask_value * ones_like(score))


def hardmax(logits, name=None):
    """One-hot vectors of the largest logit of each row (the first of equal ones)."""
    with name_scope(name, "Hardmax"):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.shape.as_list()[-1] if logits.shape.ndims else None
        if depth is None:
            depth = shape(logits)[-1]
        return one_hot(argmax(logits, -1), depth, dtype=logits.dtype)


class _BaseAttentionMechanism(AttentionMechanism):
    """Keys the memory once; scores a query against the keys (a subclass's _score), masks and
    normalizes the scores. Its own variables (_make_variables) are made once, under
    variable_scope(None, <its default name>) where it is first built or called."""

    _scope_default = "attention"

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined=True, score_mask_value=None,
                 custom_key_value_fn=None, name=None):
        if query_layer is not None and not isinstance(query_layer, Layer):
            raise TypeError("query_layer is not a Layer: %s" % type(query_layer).__name__)
        if memory_layer is not None and not isinstance(memory_layer, Layer):
            raise TypeError("memory_layer is not a Layer: %s" % type(memory_layer).__name__)
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = float32
        if not callable(probability_fn):
            raise TypeError("probability_fn must be callable, saw type: %s"
                            % type(probability_fn).__name__)
        if score_mask_value is None:
            score_mask_value = -np.inf
        self._probability_fn = lambda score, prev: probability_fn(
            _maybe_mask_score(score, memory_sequence_length, score_mask_value), prev)
        self._built = False
        with name_scope(name, "BaseAttentionMechanismInit"):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            self._keys = self._memory_layer(self._values) if self._memory_layer else \
                self._values
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            dims = self._keys.shape.as_list() if self._keys.shape.ndims else [None, None]
            self._batch_size = dims[0] if dims[0] is not None else shape(self._keys)[0]
            self._alignments_size = dims[1] if dims[1] is not None else shape(self._keys)[1]

    memory_layer = property(lambda self: self._memory_layer)
    query_layer = property(lambda self: self._query_layer)
    values = property(lambda self: self._values)
    keys = property(lambda self: self._keys)
    batch_size = property(lambda self: self._batch_size)
    alignments_size = property(lambda self: self._alignments_size)
    state_size = property(lambda self: self._alignments_size)

    def initial_alignments(self, batch_size, dtype):
        """Zeros of [batch_size, alignments_size]."""
        return _zero_state_tensors(self._alignments_size, batch_size, dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)

    def _build(self, query_depth, dtype):
        """Makes the mechanism's variables (its query layer's too) for queries of
        `query_depth`, once."""
        if self._built:
            return
        from ...layers import _unique_scope
        # "bahdanau_attention", "bahdanau_attention_1", ... as TensorFlow's default names.
        with variable_scope(_unique_scope(self._scope_default)):
            if self._query_layer is not None and not self._query_layer.built:
                self._query_layer(zeros([1, query_depth], dtype=dtype))  # makes it; never run
            self._make_variables(dtype)
        self._built = True

    def _make_variables(self, dtype):
        pass

    def __call__(self, query, state):
        """(alignments [batch, alignments_size], next_state) for `query` [batch, depth]."""
        depth = query.shape.as_list()[-1] if query.shape.ndims else None
        self._build(depth, query.dtype)
        with name_scope(None, self._scope_default):
            score = self._score(query)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _luong_score(query, keys, scale):
    depth = query.shape.as_list()[-1] if query.shape.ndims else None
    key_units = keys.shape.as_list()[-1] if keys.shape.ndims else None
    if depth is None or key_units is None or depth != key_units:
        raise ValueError("Incompatible or unknown inner dimensions between query and keys.  "
                         "Query (%s) has units: %s.  Keys (%s) have units: %s.  Perhaps you "
                         "need to set num_units to the keys' dimension (%s)?"
                         % (query, depth, keys, key_units, key_units))
    score = squeeze(matmul(expand_dims(query, 1), keys, transpose_b=True), [1])
    return score if scale is None else scale * score


class LuongAttention(_BaseAttentionMechanism):
    """score = query . (memory @ memory_layer) (times attention_g with scale=True)."""

    _scope_default = "luong_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        from ...nn import softmax
        probability_fn = probability_fn or softmax
        dtype = dtype or float32
        super().__init__(
            query_layer=None,
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            custom_key_value_fn=custom_key_value_fn, name=name)
        self.dtype = dtype
        self._num_units = num_units
        self._scale = scale
        self._name = name
        self._attention_g = None

    def _make_variables(self, dtype):
        if self._scale:
            self._attention_g = get_variable("attention_g", dtype=dtype,
                                             initializer=ones_initializer(), shape=())

    def _score(self, query):
        return _luong_score(query, self._keys, self._attention_g)


def _bahdanau_score(processed_query, keys, attention_v, attention_g=None, attention_b=None):
    processed_query = expand_dims(processed_query, 1)
    if attention_g is not None and attention_b is not None:
        normed_v = attention_g * attention_v * rsqrt(reduce_sum(square(attention_v)))
        return reduce_sum(normed_v * tanh(keys + processed_query + attention_b), [2])
    return reduce_sum(attention_v * tanh(keys + processed_query), [2])


class BahdanauAttention(_BaseAttentionMechanism):
    """score = v . tanh(memory @ memory_layer + query @ query_layer) (weight-normalized v
    and a bias with normalize=True)."""

    _scope_default = "bahdanau_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        from ...nn import softmax
        probability_fn = probability_fn or softmax
        dtype = dtype or float32
        super().__init__(
            query_layer=Dense(num_units, name="query_layer", use_bias=False),
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            custom_key_value_fn=custom_key_value_fn,
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self.dtype = dtype
        self._num_units = num_units
        self._normalize = normalize
        self._name = name
        self._attention_g = self._attention_b = None

    def _make_variables(self, dtype):
        self._attention_v = get_variable("attention_v", [self._num_units], dtype=dtype)
        if self._normalize:
            self._attention_g = get_variable(
                "attention_g", dtype=dtype,
                initializer=constant_initializer(math.sqrt(1. / self._num_units)), shape=())
            self._attention_b = get_variable("attention_b", [self._num_units], dtype=dtype,
                                             initializer=zeros_initializer())

    def _score(self, query):
        processed_query = self._query_layer(query) if self._query_layer else query
        return _bahdanau_score(processed_query, self._keys, self._attention_v,
                               attention_g=self._attention_g, attention_b=self._attention_b)


def safe_cumprod(x, *args, **kwargs):
    """cumprod of x (positive) as exp(cumsum(log(x))), x clipped to [tiny, 1]: no underflow
    to 0 and no 0 in its gradient. Arguments after x are cumsum's (axis, exclusive,
    reverse)."""
    from ...math_ops import cumsum
    from ...ops import clip_by_value, exp, log
    with name_scope(None, "SafeCumprod"):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return exp(cumsum(log(clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The monotonic attention distribution [batch, memory time] from the chances of stopping
    at each entry (p_choose_i) and the previous step's distribution: 'recursive' (a scan,
    exact), 'parallel' (cumulative sums and products, the closed form) or 'hard' (p_choose_i
    all 0 or 1)."""
    from ...math_ops import cumprod, cumsum
    from ...array_ops import transpose
    from ...ops import clip_by_value
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        from ...functional_ops import scan
        batch_size = p_choose_i.shape[0] if p_choose_i.shape.ndims and \
            p_choose_i.shape[0] is not None else shape(p_choose_i)[0]
        shifted_1mp_choose_i = concat([ones((batch_size, 1)), 1 - p_choose_i[:, :-1]], 1)
        # q[i] = (1 - p_choose_i[i - 1]) * q[i - 1] + previous_attention[i];
        # attention[i] = p_choose_i[i] * q[i].
        q = scan(lambda x, yz: reshape(yz[0] * x + yz[1], (batch_size,)),
                 [transpose(shifted_1mp_choose_i), transpose(previous_attention)],
                 zeros((batch_size,)))
        return p_choose_i * transpose(q)
    if mode == "parallel":
        cumprod_1mp_choose_i = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod_1mp_choose_i * cumsum(
            previous_attention / clip_by_value(cumprod_1mp_choose_i, 1e-10, 1.), axis=1)
    if mode == "hard":
        # Nothing before the entry chosen last, then only the first chosen after it.
        p_choose_i = p_choose_i * cumsum(previous_attention, axis=1)
        return p_choose_i * cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    """The scores, with pre-sigmoid noise of that standard deviation when it is above 0, as
    the chances of stopping (a hard sigmoid in 'hard' mode), made into monotonic attention."""
    from ...ops import cast, greater, sigmoid
    if sigmoid_noise > 0:
        from ...random_ops import random_normal
        score += sigmoid_noise * random_normal(shape(score), dtype=score.dtype, seed=seed)
    if mode == "hard":
        p_choose_i = cast(greater(score, 0), score.dtype)
    else:
        p_choose_i = sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _BaseMonotonicAttentionMechanism(_BaseAttentionMechanism):
    """A mechanism whose first alignments are all on the first memory entry, as monotonic
    attention needs."""

    def initial_alignments(self, batch_size, dtype):
        alignments = one_hot(zeros((batch_size,), dtype=int32), self._alignments_size,
                             dtype=dtype)
        alignments.set_shape([_static(batch_size), _static(self._alignments_size)])
        return alignments

    @staticmethod
    def _probability_fn_for(sigmoid_noise, mode, seed):
        """_monotonic_probability_fn with the mechanism's noise, mode and seed."""
        return lambda score, previous: _monotonic_probability_fn(score, previous, sigmoid_noise,
                                                                 mode, seed)

    def _make_score_bias(self, dtype):
        self._score_bias = get_variable(
            "attention_score_bias", dtype=dtype, shape=(),
            initializer=constant_initializer(self._score_bias_init))


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """BahdanauAttention's score plus a learned scalar bias (attention_score_bias, starting at
    score_bias_init), made into monotonic attention (mode 'parallel', 'recursive' or 'hard')
    instead of a softmax."""

    _scope_default = "bahdanau_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        dtype = dtype or float32
        probability_fn = self._probability_fn_for(sigmoid_noise, mode, sigmoid_noise_seed)
        super().__init__(
            query_layer=Dense(num_units, name="query_layer", use_bias=False),
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            memory=memory, probability_fn=probability_fn,
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self.dtype = dtype
        self._num_units = num_units
        self._normalize = normalize
        self._name = name
        self._score_bias_init = score_bias_init
        self._attention_g = self._attention_b = None

    _make_bahdanau_variables = BahdanauAttention._make_variables

    def _make_variables(self, dtype):
        self._make_bahdanau_variables(dtype)
        self._make_score_bias(dtype)

    def _score(self, query):
        return BahdanauAttention._score(self, query) + self._score_bias


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """LuongAttention's score plus a learned scalar bias, made into monotonic attention."""

    _scope_default = "luong_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        dtype = dtype or float32
        probability_fn = self._probability_fn_for(sigmoid_noise, mode, sigmoid_noise_seed)
        super().__init__(
            query_layer=None,
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            memory=memory, probability_fn=probability_fn,
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self.dtype = dtype
        self._num_units = num_units
        self._scale = scale
        self._score_bias_init = score_bias_init
        self._name = name
        self._attention_g = None

    _make_luong_variables = LuongAttention._make_variables

    def _make_variables(self, dtype):
        self._make_luong_variables(dtype)
        self._make_score_bias(dtype)

    def _score(self, query):
        return _luong_score(query, self._keys, self._attention_g) + self._score_bias


class AttentionWrapperState(
        collections.namedtuple("AttentionWrapperState",
                               ("cell_state", "attention", "time", "alignments",
                                "alignment_history", "attention_state"))):
    """The state of an AttentionWrapper: the wrapped cell's state, the previous attention, the
    time step (int32), the alignments (one per mechanism, or a tuple), their history
    (TensorArrays, with alignment_history=True) and the mechanisms' states."""

    def clone(self, **kwargs):
        """This state with the fields of kwargs replaced; a replaced tensor must have the shape
        of the one it replaces (ValueError when both are known and differ, a check when the
        step runs otherwise), and takes its static shape."""
        def with_same_shape(old, new):
            if not (isinstance(old, Tensor) and isinstance(new, Tensor)):
                return new
            expected, actual = old.shape, new.shape
            if expected.is_fully_defined() and actual.is_fully_defined():
                if not actual.is_compatible_with(expected):
                    raise ValueError("Invalid shape for tensor %s, expected %s, got %s."
                                     % (new.name, expected.as_list(), actual))
                return new
            from ...control_flow_ops import Assert
            from ...math_ops import reduce_all
            from ...ops import equal
            expected_shape = (expected.as_list() if expected.is_fully_defined()
                              else shape(old))
            check = Assert(reduce_all(equal(shape(new), expected_shape)),
                           ["Shape of %s does not match the state it replaces" % new.name])
            with control_dependencies([check]):
                result = identity(new)
            result.set_shape(expected if expected.is_fully_defined() else actual)
            return result
        return nest.map_structure(with_same_shape, self, super()._replace(**kwargs))


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    """(attention, alignments, next attention state) for one mechanism."""
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = squeeze(matmul(expand_dims(alignments, 1), attention_mechanism.values), [1])
    if attention_layer is not None:
        attention = attention_layer(concat([cell_output, context], 1))
    else:
        attention = context
    return attention, alignments, next_attention_state


class AttentionWrapper(RNNCell):
    """cell with attention over the memory of attention_mechanism (or of each of a list of
    them). attention_layer_size (an int, or one per mechanism) adds the attention layer;
    alignment_history keeps every step's alignments in TensorArrays; cell_input_fn(inputs,
    attention) makes the cell's inputs (concatenation by default); output_attention=False
    outputs the cell's output instead of the attention; initial_cell_state replaces the cell's
    zero state in zero_state()."""

    _base_name = "attention_wrapper"

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None,
                 dtype=None):
        super().__init__(name=name, dtype=dtype)
        from .basic_decoder import _assert_like_rnncell
        _assert_like_rnncell(cell)
        if isinstance(attention_mechanism, (list, tuple)):
            self._is_multi = True
            mechanisms = tuple(attention_mechanism)
            for m in mechanisms:
                if not isinstance(m, AttentionMechanism):
                    raise TypeError("attention_mechanism must contain only instances of "
                                    "AttentionMechanism, saw type: %s" % type(m).__name__)
        else:
            self._is_multi = False
            if not isinstance(attention_mechanism, AttentionMechanism):
                raise TypeError("attention_mechanism must be an AttentionMechanism or list of "
                                "multiple AttentionMechanism instances, saw type: %s"
                                % type(attention_mechanism).__name__)
            mechanisms = (attention_mechanism,)
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: concat([inputs, attention], -1)  # noqa
        elif not callable(cell_input_fn):
            raise TypeError("cell_input_fn must be callable, saw type: %s"
                            % type(cell_input_fn).__name__)
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be "
                             "set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size if isinstance(attention_layer_size, (list, tuple))
                          else (attention_layer_size,))
            if len(sizes) != len(mechanisms):
                raise ValueError("If provided, attention_layer_size must contain exactly one "
                                 "integer per attention_mechanism, saw: %d vs %d"
                                 % (len(sizes), len(mechanisms)))
            self._attention_layers = tuple(
                Dense(size, name="attention_layer", use_bias=False)
                for size, m in zip(sizes, mechanisms))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            self._attention_layers = tuple(attention_layer if isinstance(
                attention_layer, (list, tuple)) else (attention_layer,))
            if len(self._attention_layers) != len(mechanisms):
                raise ValueError("If provided, attention_layer must contain exactly one layer "
                                 "per attention_mechanism, saw: %d vs %d"
                                 % (len(self._attention_layers), len(mechanisms)))
            self._attention_layer_size = sum(
                layer.compute_output_shape(
                    [None, cell.output_size + m.values.shape.as_list()[-1]]).as_list()[-1]
                for layer, m in zip(self._attention_layers, mechanisms))
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(m.values.shape.as_list()[-1] for m in mechanisms)
        self._attention_fn = attention_fn or _compute_attention
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = None
        if initial_cell_state is not None:
            with name_scope(name, "AttentionWrapperInit"):
                final = nest.flatten(initial_cell_state)[-1]
                final = convert_to_tensor(final)
                state_batch = final.shape.as_list()[0] if final.shape.ndims else None
                if state_batch is None:
                    state_batch = shape(final)[0]
                message = ("When constructing AttentionWrapper %s: Non-matching batch sizes "
                           "between the memory (encoder output) and initial_cell_state.  Are "
                           "you using the BeamSearchDecoder?  You may need to tile your "
                           "initial state via the tf.contrib.seq2seq.tile_batch function with "
                           "argument multiple=beam_width." % self._display_name())
                with control_dependencies(self._batch_size_checks(state_batch, message)):
                    self._initial_cell_state = nest.map_structure(
                        lambda s: identity(s, name="check_initial_cell_state"),
                        initial_cell_state)

    def _display_name(self):
        return self._name or self._base_name

    def _batch_size_checks(self, batch_size, message):
        checks = []
        for m in self._attention_mechanisms:
            if _static(batch_size) is not None and _static(m.batch_size) is not None:
                if _static(batch_size) != _static(m.batch_size):
                    # What TensorFlow 1.15's assert_equal raises for two constants.
                    from ...errors import InvalidArgumentError
                    raise InvalidArgumentError(None, None, "%s Condition x == y did not hold "
                                               "element-wise: x = %d, y = %d"
                                               % (message, _static(batch_size),
                                                  _static(m.batch_size)))
                continue
            checks.append(assert_equal(batch_size, m.batch_size, message=message))
        return checks

    def _item_or_tuple(self, seq):
        t = tuple(seq)
        return t if self._is_multi else t[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size
                                           for m in self._attention_mechanisms),
            attention_state=self._item_or_tuple(m.state_size
                                                for m in self._attention_mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else ()
                for m in self._attention_mechanisms))

    def zero_state(self, batch_size, dtype):
        """The first state: the cell's zero state (or initial_cell_state), zero attention and
        alignments, time 0, empty alignment histories. batch_size must be the memory's (tiled
        by the beam width for a BeamSearchDecoder): a mismatch is ValueError when both are
        known, InvalidArgumentError when the step runs otherwise."""
        with name_scope(None, "AttentionWrapperZeroState"):
            if self._initial_cell_state is not None:
                cell_state = self._initial_cell_state
            else:
                cell_state = self._cell.zero_state(batch_size, dtype)
            message = ("When calling zero_state of AttentionWrapper %s: Non-matching batch "
                       "sizes between the memory (encoder output) and the requested batch "
                       "size.  Are you using the BeamSearchDecoder?  If so, make sure your "
                       "encoder output has been tiled to beam_width via "
                       "tf.contrib.seq2seq.tile_batch, and the batch_size= argument passed to "
                       "zero_state is batch_size * beam_width." % self._display_name())
            with control_dependencies(self._batch_size_checks(batch_size, message)):
                cell_state = nest.map_structure(
                    lambda s: identity(s, name="checked_cell_state"), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype)
                          for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=zeros([], dtype=int32),
                attention=_zero_state_tensors(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                    for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in alignments))

    def _build(self, depth, dtype):
        """Makes every variable of the step now (troupe makes none inside a loop's body) by
        tracing one step on zeros, in the wrapper's variable scope as TensorFlow runs its
        call: the cell's, each mechanism's, each attention layer's, and any a cell_input_fn
        or attention_fn of your own makes; named as TensorFlow names them. The traced ops
        never run. They are the wrapper's `variables`."""
        from ...variables import get_variable_scope, global_variables, local_variables
        before = set(id(v) for v in global_variables() + local_variables())
        self._scope = get_variable_scope()
        batch = self._attention_mechanisms[0].batch_size
        with name_scope(None, "trace"):
            inputs = zeros([batch, depth], dtype=dtype)
            inputs.set_shape([_static(batch), depth])
            self._attention_step(inputs, self.zero_state(batch, dtype))
        self._variables.extend(v for v in global_variables() + local_variables()
                               if id(v) not in before)

    def _step(self, inputs, state):
        with variable_scope(self._scope, reuse=True):
            return self._attention_step(inputs, state)

    def _attention_step(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError("Expected state to be instance of AttentionWrapperState. Received "
                            "type %s instead." % type(state))
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        cell_batch = cell_output.shape.as_list()[0] if cell_output.shape.ndims else None
        if cell_batch is None:
            cell_batch = shape(cell_output)[0]
        message = ("When applying AttentionWrapper %s: Non-matching batch sizes between the "
                   "memory (encoder output) and the query (decoder output).  Are you using the "
                   "BeamSearchDecoder?  You may need to tile your memory input via the "
                   "tf.contrib.seq2seq.tile_batch function with argument multiple=beam_width."
                   % self._display_name())
        with control_dependencies(self._batch_size_checks(cell_batch, message)):
            cell_output = identity(cell_output, name="checked_cell_output")
        if self._is_multi:
            previous_states = state.attention_state
            previous_histories = state.alignment_history
        else:
            previous_states = [state.attention_state]
            previous_histories = [state.alignment_history]
        alignments_all, attentions, states, histories = [], [], [], []
        for i, m in enumerate(self._attention_mechanisms):
            attention, alignments, next_attention_state = self._attention_fn(
                m, cell_output, previous_states[i],
                self._attention_layers[i] if self._attention_layers else None)
            history = previous_histories[i].write(state.time, alignments) \
                if self._alignment_history else ()
            states.append(next_attention_state)
            alignments_all.append(alignments)
            attentions.append(attention)
            histories.append(history)
        attention = concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states),
            alignments=self._item_or_tuple(alignments_all),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state
