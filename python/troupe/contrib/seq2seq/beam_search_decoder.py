"""tf.contrib.seq2seq.BeamSearchDecoder and gather_tree, as TensorFlow 1.15 defines them.

Each step runs the cell on every beam of every batch entry (a batch of batch_size * beam_width),
adds the step's log-probabilities to each beam's, and keeps the beam_width best continuations
of each entry (scored with the length penalty when length_penalty_weight is set); a finished
beam only continues with end_token, at no cost; with coverage_penalty_weight, an attentional
cell's (AttentionWrapper's) alignments accumulated over the steps add GNMT's coverage penalty
to finished beams. finalize() follows the chosen parents back (gather_tree) so predicted_ids
holds whole beams, best first."""

import collections

import numpy as np

from ... import nest
from ...array_ops import concat, expand_dims, one_hot, sequence_mask, tile, transpose
from ...array_ops import range as range_
from ...control_flow_ops import cond
from ...dtypes import bool as bool_
from ...dtypes import int32, int64
from ...framework import Tensor, TensorShape, convert_to_tensor, name_scope
from ...layers import Layer
from ...math_ops import logical_or, mod, reduce_all
from ...ops import _make, cast, equal, fill, gather, logical_not, reshape, shape, size, stack
from ...ops import reduce_max, where, zeros
from ...sparse_ops import gather_nd
from ...tensor_array_ops import TensorArray
from .attention_wrapper import AttentionWrapperState
from .basic_decoder import _CellCall, _assert_like_rnncell
from .decoder import Decoder, _static_value

__all__ = ["BeamSearchDecoderState", "BeamSearchDecoderOutput", "FinalBeamSearchDecoderOutput",
           "BeamSearchDecoder", "gather_tree", "gather_tree_from_array"]


class BeamSearchDecoderState(
        collections.namedtuple("BeamSearchDecoderState",
                               ("cell_state", "log_probs", "finished", "lengths",
                                "accumulated_attention_probs"))):
    pass


class BeamSearchDecoderOutput(
        collections.namedtuple("BeamSearchDecoderOutput",
                               ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(
        collections.namedtuple("FinalBeamDecoderOutput",
                               ["predicted_ids", "beam_search_decoder_output"])):
    """predicted_ids: [batch, time, beam] (time-major with output_time_major), the whole beams,
    best first; beam_search_decoder_output: the BeamSearchDecoderOutput of each step."""
    pass


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The whole beams from each step's ids and parent beams (int32 [max_time, batch, beam]):
    followed back from step max_sequence_lengths[b] - 1, end_token past a beam's first
    end_token and past its batch entry's length."""
    with name_scope(name, "GatherTree"):
        args = {}
        for what, value in (("step_ids", step_ids), ("parent_ids", parent_ids),
                            ("max_sequence_lengths", max_sequence_lengths),
                            ("end_token", end_token)):
            value = convert_to_tensor(value, name=what)
            if value.dtype != int32:  # the op's T and lengths are int32 only, as TensorFlow's
                raise TypeError("Value passed to parameter '%s' has DataType %s not in list of "
                                "allowed values: int32" % (what, value.dtype.name))
            args[what] = value
        step_ids, parent_ids = args["step_ids"], args["parent_ids"]
        max_sequence_lengths, end_token = args["max_sequence_lengths"], args["end_token"]
        return _make("GatherTree", [step_ids, parent_ids, max_sequence_lengths, end_token],
                     {}, None).outputs[0]


def gather_tree_from_array(t, parent_ids, sequence_length):
    """A stacked TensorArray `t` ([max_time, batch * beam, ...] or [max_time, batch, beam,
    ...]) with its beams reordered along the chosen paths (parent_ids [max_time, batch,
    beam]); steps past a beam's sequence_length ([batch, beam]) keep their order."""
    def dim(i):
        static = parent_ids.shape.as_list()[i] if parent_ids.shape.ndims else None
        return static if static is not None else shape(parent_ids)[i]
    max_time, batch_size, beam_width = dim(0), dim(1), dim(2)
    beam_ids = expand_dims(expand_dims(range_(beam_width), 0), 0)
    beam_ids = tile(beam_ids, [max_time, batch_size, 1])
    max_sequence_lengths = cast(reduce_max(sequence_length, axis=1), int32)
    sorted_beam_ids = gather_tree(step_ids=beam_ids, parent_ids=parent_ids,
                                  max_sequence_lengths=max_sequence_lengths,
                                  end_token=beam_width + 1)
    in_bound_steps = transpose(sequence_mask(sequence_length, maxlen=max_time), perm=[2, 0, 1])
    sorted_beam_ids = where(in_bound_steps, sorted_beam_ids, beam_ids)
    time_ind = tile(reshape(range_(max_time), [-1, 1, 1]), [1, batch_size, beam_width])
    batch_ind = tile(reshape(range_(batch_size), [-1, 1, 1]), [1, max_time, beam_width])
    batch_ind = transpose(batch_ind, perm=[1, 0, 2])
    indices = stack([time_ind, batch_ind, sorted_beam_ids], -1)
    final_shape = shape(t)
    gather_from = reshape(t, [max_time, batch_size, beam_width, -1])
    ordered = gather_nd(gather_from, indices)
    return reshape(ordered, final_shape)


def _as_shape(s):
    """A depth (an int, a TensorShape, or a tensor: a memory's length known only when running)
    as a TensorShape, unknown for a tensor that is not a constant."""
    if isinstance(s, Tensor):
        value = _constant_value(s)
        return TensorShape(None) if value is None else TensorShape(value.tolist())
    return TensorShape(s)


def _check_ndims(t):
    if t.shape.ndims is None:
        raise ValueError("Expected tensor (%s) to have known rank, but ndims == None." % t)


def _check_static_batch_beam_maybe(shape_, batch_size, beam_width):
    """False (with TensorFlow's warning) when a known shape cannot be reshaped to
    [batch_size, beam_width, -1]."""
    dims = shape_.as_list()
    if (batch_size is not None and dims[0] is not None and
            (dims[0] != batch_size * beam_width or
             (len(dims) >= 2 and dims[1] is not None and
              (dims[0] != batch_size or dims[1] != beam_width)))):
        from ...logging import warning
        warning("TensorArray reordering expects elements to be reshapable to %s which is "
                "incompatible with the current shape %s. Consider setting "
                "reorder_tensor_arrays to False to disable TensorArray reordering during the "
                "beam search." % (TensorShape([batch_size, beam_width, None]), shape_))
        return False
    return True


def _check_batch_beam(t, batch_size, beam_width):
    """An Assert that a stacked TensorArray's elements reshape to [batch, beam, -1]."""
    from ...control_flow_ops import Assert
    from ...math_ops import logical_and
    message = ("TensorArray reordering expects elements to be reshapable to [batch_size, "
               "beam_size, -1] which is incompatible with the dynamic shape of %s elements. "
               "Consider setting reorder_tensor_arrays to False to disable TensorArray "
               "reordering during the beam search." % t.name)
    dims = shape(t)
    if t.shape.ndims == 2:
        condition = equal(dims[1], batch_size * beam_width)
    else:
        condition = logical_or(equal(dims[1], batch_size * beam_width),
                               logical_and(equal(dims[1], batch_size),
                                           equal(dims[2], beam_width)))
    return Assert(condition, [message])


class BeamSearchDecoder(Decoder):
    """cell: an RNNCell whose state comes tiled beam_width times (tile_batch); embedding: a
    callable on ids or the params of embedding_lookup; start_tokens: int32 [batch];
    end_token: an int32 scalar; initial_state: the cell's state for batch * beam_width;
    beam_width: a Python int; output_layer: an optional tf.layers layer (the projection to the
    vocabulary); length_penalty_weight: 0.0 (none) or the weight of
    ((5 + length) / 6) ** weight that scores divide by."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        _assert_like_rnncell(cell)
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError("output_layer must be a Layer, received: %s" % type(output_layer))
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            from ...nn import embedding_lookup
            self._embedding_fn = lambda ids: embedding_lookup(embedding, ids)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=int32, name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        static_batch = self._start_tokens.shape.as_list()[0]
        self._batch_size = (convert_to_tensor(static_batch, dtype=int32)
                            if static_batch is not None else size(self._start_tokens))
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                      initial_state, self._cell.state_size)
        self._start_tokens = tile(expand_dims(self._start_tokens, 1), [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = one_hot(zeros([self._batch_size], dtype=int32),
                                 depth=self._beam_width, on_value=False, off_value=True,
                                 dtype=bool_)

    @property
    def batch_size(self):
        return self._batch_size

    def _rnn_output_size(self):
        size_ = self._cell.output_size
        if self._output_layer is None:
            return size_
        with_batch = nest.map_structure(lambda s: TensorShape([None]).concatenate(s), size_)
        layer_shape = self._output_layer.compute_output_shape(with_batch)
        return nest.map_structure(lambda s: s[1:], layer_shape)

    @property
    def tracks_own_finished(self):
        """True: beams are reordered each step, and their finished flags with them."""
        return True

    @property
    def output_size(self):
        return BeamSearchDecoderOutput(scores=TensorShape([self._beam_width]),
                                       predicted_ids=TensorShape([self._beam_width]),
                                       parent_ids=TensorShape([self._beam_width]))

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(
            scores=nest.map_structure(lambda _: dtype, self._rnn_output_size()),
            predicted_ids=int32, parent_ids=int32)

    def initialize(self, name=None):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = one_hot(zeros([self._batch_size], dtype=int32), depth=self._beam_width,
                            on_value=convert_to_tensor(0.0, dtype=dtype),
                            off_value=convert_to_tensor(-np.inf, dtype=dtype), dtype=dtype)
        attention_probs = get_attention_probs(self._initial_cell_state,
                                              self._coverage_penalty_weight)
        initial_state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=zeros([self._batch_size, self._beam_width], dtype=int64),
            accumulated_attention_probs=attention_probs if attention_probs is not None else ())
        return self._finished, self._start_inputs, initial_state

    def _before_loop(self, inputs, state):
        """Makes the cell's and the output layer's variables before dynamic_decode's loop."""
        merged_inputs = nest.map_structure(
            lambda inp: self._merge_batch_beams(inp, s=inp.shape[2:]), inputs)
        cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state,
                                        self._cell.state_size)
        self._cell_call = _CellCall(self._cell, self._output_layer, merged_inputs, cell_state)

    def finalize(self, outputs, final_state, sequence_lengths):
        """The whole beams (gather_tree of the steps' ids and parents) as predicted_ids, and
        the state with the TensorArrays of its cell state reordered along them."""
        del sequence_lengths  # the beams' own lengths are in final_state.lengths
        max_sequence_lengths = cast(reduce_max(final_state.lengths, axis=1), int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_sequence_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(beam_search_decoder_output=outputs,
                                            predicted_ids=predicted_ids), final_state

    def _merge_batch_beams(self, t, s=None):
        """[batch, beam, s...] -> [batch * beam, s...]."""
        s = _as_shape(s)
        static_batch = _static_value(self._batch_size)
        merged = reshape(t, concat(([self._batch_size * self._beam_width], shape(t)[2:]), 0))
        merged.set_shape(TensorShape([None if static_batch is None
                                      else static_batch * self._beam_width]).concatenate(s))
        return merged

    def _split_batch_beams(self, t, s=None):
        """[batch * beam, s...] -> [batch, beam, s...]; ValueError with TensorFlow's hint when
        the shapes cannot match (a zero_state not made for batch_size * beam_width)."""
        s = _as_shape(s)
        split = reshape(t, concat(([self._batch_size, self._beam_width], shape(t)[1:]), 0))
        expected = TensorShape([_static_value(self._batch_size),
                                self._beam_width]).concatenate(s)
        if not split.shape.is_compatible_with(expected):
            raise ValueError("Unexpected behavior when reshaping between beam width and batch "
                             "size.  The reshaped tensor has shape: %s.  We expected it to have "
                             "shape (batch_size, beam_width, depth) == %s.  Perhaps you forgot "
                             "to create a zero_state with batch_size=encoder_batch_size * "
                             "beam_width?" % (split.shape, expected))
        split.set_shape(expected)
        return split

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        _check_ndims(t)
        return self._split_batch_beams(t, s) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, TensorArray):
            return t
        _check_ndims(t)
        return self._merge_batch_beams(t, s) if t.shape.ndims >= 2 else t

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        if not isinstance(t, TensorArray):
            return t
        element_shape = getattr(t, "element_shape", TensorShape(None))
        if element_shape.ndims is None or element_shape.ndims < 1:
            from ...logging import warning
            warning("The TensorArray %s in the cell state is not amenable to sorting based on "
                    "the beam search result. For a TensorArray to be sorted, its elements shape "
                    "must be defined and have at least a rank of 1, but saw shape: %s"
                    % (t._name, element_shape))
            return t
        if not _check_static_batch_beam_maybe(element_shape, _static_value(self._batch_size),
                                              self._beam_width):
            return t
        t = t.stack()
        from ...framework import control_dependencies
        with control_dependencies([_check_batch_beam(t, self._batch_size, self._beam_width)]):
            return gather_tree_from_array(t, parent_ids, sequence_length)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BeamSearchDecoderStep"):
            inputs = nest.map_structure(
                lambda inp: self._merge_batch_beams(inp, s=inp.shape[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state,
                                            self._cell.state_size)
            cell_outputs, next_cell_state = _CellCall.run(self, inputs, cell_state)
            cell_outputs = nest.map_structure(
                lambda out: self._split_batch_beams(out, out.shape[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                 next_cell_state, self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = _beam_search_step(
                time=time, logits=cell_outputs, next_cell_state=next_cell_state,
                beam_state=state, batch_size=self._batch_size, beam_width=self._beam_width,
                end_token=self._end_token, length_penalty_weight=self._length_penalty_weight,
                coverage_penalty_weight=self._coverage_penalty_weight)
            finished = next_state.finished
            sample_ids = output.predicted_ids
            next_inputs = cond(reduce_all(finished), lambda: self._start_inputs,
                               lambda: self._embedding_fn(sample_ids))
        return output, next_state, next_inputs, finished


def _beam_search_step(time, logits, next_cell_state, beam_state, batch_size, beam_width,
                      end_token, length_penalty_weight, coverage_penalty_weight):
    """One step: logits [batch, beam, vocab] -> (BeamSearchDecoderOutput, next
    BeamSearchDecoderState). At time 0 only the first beam is live (the others' log-probs are
    -inf), so the beams start from distinct continuations."""
    from ...nn import log_softmax, top_k
    static_batch = _static_value(batch_size)
    prediction_lengths = beam_state.lengths
    previously_finished = beam_state.finished
    not_finished = logical_not(previously_finished)

    step_log_probs = log_softmax(logits)
    step_log_probs = _mask_probs(step_log_probs, end_token, previously_finished)
    total_probs = expand_dims(beam_state.log_probs, 2) + step_log_probs

    vocab_size = logits.shape.as_list()[-1] if logits.shape.ndims else None
    if vocab_size is None:
        vocab_size = shape(logits)[-1]
    lengths_to_add = one_hot(indices=fill([batch_size, beam_width], end_token),
                             depth=vocab_size, on_value=np.int64(0), off_value=np.int64(1),
                             dtype=int64)
    add_mask = cast(not_finished, int64)
    lengths_to_add *= expand_dims(add_mask, 2)
    new_prediction_lengths = lengths_to_add + expand_dims(prediction_lengths, 2)

    accumulated_attention_probs = None
    attention_probs = get_attention_probs(next_cell_state, coverage_penalty_weight)
    if attention_probs is not None:
        from ...dtypes import float32
        attention_probs *= expand_dims(cast(not_finished, float32), 2)
        accumulated_attention_probs = beam_state.accumulated_attention_probs + attention_probs
    scores = _get_scores(log_probs=total_probs, sequence_lengths=new_prediction_lengths,
                         length_penalty_weight=length_penalty_weight,
                         coverage_penalty_weight=coverage_penalty_weight,
                         finished=previously_finished,
                         accumulated_attention_probs=accumulated_attention_probs)

    time = convert_to_tensor(time, name="time")
    scores_flat = reshape(scores, [batch_size, -1])
    next_beam_size = convert_to_tensor(beam_width, dtype=int32, name="beam_width")
    next_beam_scores, word_indices = top_k(scores_flat, k=next_beam_size)
    next_beam_scores.set_shape([static_batch, beam_width])
    word_indices.set_shape([static_batch, beam_width])

    next_beam_probs = _tensor_gather_helper(
        gather_indices=word_indices, gather_from=total_probs, batch_size=batch_size,
        range_size=beam_width * vocab_size, gather_shape=[-1], name="next_beam_probs")
    next_word_ids = cast(mod(word_indices, vocab_size, name="next_beam_word_ids"), int32)
    next_beam_ids = cast(word_indices // vocab_size, int32, name="next_beam_parent_ids")

    previously_finished = _tensor_gather_helper(
        gather_indices=next_beam_ids, gather_from=previously_finished, batch_size=batch_size,
        range_size=beam_width, gather_shape=[-1])
    next_finished = logical_or(previously_finished, equal(next_word_ids, end_token),
                               name="next_beam_finished")

    lengths_to_add = cast(logical_not(previously_finished), int64)
    next_prediction_len = _tensor_gather_helper(
        gather_indices=next_beam_ids, gather_from=beam_state.lengths, batch_size=batch_size,
        range_size=beam_width, gather_shape=[-1])
    next_prediction_len += lengths_to_add
    next_accumulated_attention_probs = ()
    if accumulated_attention_probs is not None:
        next_accumulated_attention_probs = _tensor_gather_helper(
            gather_indices=next_beam_ids, gather_from=accumulated_attention_probs,
            batch_size=batch_size, range_size=beam_width,
            gather_shape=[batch_size * beam_width, -1], name="next_accumulated_attention_probs")

    next_cell_state = nest.map_structure(
        lambda gather_from: _maybe_tensor_gather_helper(
            gather_indices=next_beam_ids, gather_from=gather_from, batch_size=batch_size,
            range_size=beam_width, gather_shape=[batch_size * beam_width, -1]),
        next_cell_state)

    next_state = BeamSearchDecoderState(
        cell_state=next_cell_state, log_probs=next_beam_probs, lengths=next_prediction_len,
        finished=next_finished, accumulated_attention_probs=next_accumulated_attention_probs)
    output = BeamSearchDecoderOutput(scores=next_beam_scores, predicted_ids=next_word_ids,
                                     parent_ids=next_beam_ids)
    return output, next_state


def get_attention_probs(next_cell_state, coverage_penalty_weight):
    """The attention probabilities [batch, beam, memory time] of an attentional cell state (an
    AttentionWrapperState, or one of a tuple; the mean over several), or None when
    coverage_penalty_weight is 0.0; ValueError when there is a weight and no such state."""
    if coverage_penalty_weight == 0.0:
        return None
    per_layer = []
    if isinstance(next_cell_state, AttentionWrapperState):
        per_layer = [attention_probs_from_attn_state(next_cell_state)]
    elif isinstance(next_cell_state, tuple):
        per_layer = [attention_probs_from_attn_state(state) for state in next_cell_state
                     if isinstance(state, AttentionWrapperState)]
    if not per_layer:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    if len(per_layer) == 1:
        return per_layer[0]
    from ...ops import reduce_mean
    return reduce_mean(concat([expand_dims(p, -1) for p in per_layer], -1), -1)


def attention_probs_from_attn_state(attention_state):
    """The alignments of an AttentionWrapperState (their mean over several mechanisms)."""
    probs = attention_state.alignments
    if isinstance(probs, tuple):
        from ...ops import reduce_mean
        probs = reduce_mean(concat([expand_dims(p, -1) for p in probs], -1), -1)
    return probs


def _get_scores(log_probs, sequence_lengths, length_penalty_weight, coverage_penalty_weight=0.0,
                finished=None, accumulated_attention_probs=None):
    """log_probs divided by the length penalty, plus, with coverage_penalty_weight, the
    weighted coverage penalty (sum over the memory of log(min(accumulated attention, 1))) of
    the finished beams."""
    from ...dtypes import float32
    from ...ops import log, minimum, ones_like
    penalty = _length_penalty(sequence_lengths=sequence_lengths,
                              penalty_factor=length_penalty_weight)
    scores = log_probs / cast(penalty, log_probs.dtype)
    coverage_penalty_weight = convert_to_tensor(coverage_penalty_weight,
                                                name="coverage_penalty_weight")
    if coverage_penalty_weight.shape.ndims != 0:
        raise ValueError("coverage_penalty_weight should be a scalar, but saw shape: %s"
                         % coverage_penalty_weight.shape)
    static = _constant_value(coverage_penalty_weight)
    if static is not None and static == 0.0:
        return scores
    if accumulated_attention_probs is None:
        raise ValueError("accumulated_attention_probs can be None only if coverage penalty is "
                         "disabled.")
    accumulated = where(equal(accumulated_attention_probs, 0.0),
                        ones_like(accumulated_attention_probs), accumulated_attention_probs)
    from ...ops import reduce_sum
    coverage_penalty = reduce_sum(log(minimum(accumulated, 1.0)), 2)
    coverage_penalty *= cast(finished, float32)
    weighted = expand_dims(coverage_penalty * coverage_penalty_weight, 2)
    return scores + weighted


def _length_penalty(sequence_lengths, penalty_factor):
    """((5 + sequence_lengths) / 6) ** penalty_factor (https://arxiv.org/abs/1609.08144), or
    the scalar 1.0 when penalty_factor is a constant 0."""
    penalty_factor = convert_to_tensor(penalty_factor, name="penalty_factor")
    penalty_factor.set_shape(())
    static = _constant_value(penalty_factor)
    if static is not None and static == 0:
        return 1.0
    from ...dtypes import float32
    return ((5. + cast(sequence_lengths, float32)) ** penalty_factor) / \
        ((5. + 1.) ** penalty_factor)


def _constant_value(t):
    """The value of a Const tensor, else None."""
    if isinstance(t, Tensor) and t.op.type == "Const":
        return np.asarray(t.op.get_attr("value"))
    return None


def _mask_probs(probs, eos_token, finished):
    """Finished beams put all their probability on eos_token (log-prob 0; the type's lowest
    value elsewhere); unfinished ones keep theirs."""
    vocab_size = shape(probs)[2]
    finished_row = one_hot(eos_token, vocab_size, dtype=probs.dtype,
                           on_value=convert_to_tensor(0., dtype=probs.dtype),
                           off_value=probs.dtype.min)
    finished_probs = tile(reshape(finished_row, [1, 1, -1]),
                          concat([shape(finished), [1]], 0))
    finished_mask = tile(expand_dims(finished, 2), [1, 1, vocab_size])
    return where(finished_mask, finished_probs, probs)


def _maybe_tensor_gather_helper(gather_indices, gather_from, batch_size, range_size,
                                gather_shape):
    """_tensor_gather_helper for a tensor of rank >= len(gather_shape); anything else (a
    TensorArray, a scalar) as it is."""
    if isinstance(gather_from, TensorArray):
        return gather_from
    _check_ndims(gather_from)
    if gather_from.shape.ndims >= len(gather_shape):
        return _tensor_gather_helper(gather_indices=gather_indices, gather_from=gather_from,
                                     batch_size=batch_size, range_size=range_size,
                                     gather_shape=gather_shape)
    return gather_from


def _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape,
                          name=None):
    """gather_from's entries chosen by gather_indices ([batch, k], indices within each batch
    entry's range_size values), with gather_from reshaped to gather_shape first."""
    with name_scope(name, "tensor_gather_helper"):
        offsets = expand_dims(range_(batch_size) * range_size, 1)
        gather_indices = reshape(gather_indices + offsets, [-1])
        output = gather(reshape(gather_from, gather_shape), gather_indices)
        final_shape = shape(gather_from)[:1 + len(gather_shape)]
        static_batch = _static_value(batch_size)
        final_static_shape = TensorShape([static_batch]).concatenate(
            gather_from.shape[1:1 + len(gather_shape)])
        output = reshape(output, final_shape, name="output")
        output.set_shape(final_static_shape)
        return output
