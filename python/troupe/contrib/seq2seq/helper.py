"""tf.contrib.seq2seq's helpers, as TensorFlow 1.15 defines them: what a BasicDecoder feeds its
cell at each step, and how it picks the step's sample ids. TrainingHelper reads the given
inputs (teacher forcing); GreedyEmbeddingHelper and SampleEmbeddingHelper feed the embedding of
the previous step's argmax or sampled id and finish a sequence at end_token; InferenceHelper and
CustomHelper take the user's functions; ScheduledEmbeddingTrainingHelper and
ScheduledOutputTrainingHelper read the inputs but, for each batch entry with
sampling_probability, feed the embedding of an id sampled from the outputs (or the outputs
themselves) instead (scheduled sampling), applying embedding or next_inputs_fn to the sampled
rows only, as TensorFlow's. Their draws, like any random op in a loop's step, are recorded by
the loop and replayed when its gradient reruns the step, so the gradient sees the choices the
forward pass made."""

from ... import nest
from ...control_flow_ops import cond
from ...dtypes import bool as _bool, int32
from ...framework import TensorShape, convert_to_tensor, name_scope
from ...array_ops import tile, transpose
from ...math_ops import reduce_all
from ...ops import argmax, cast, equal, reshape, shape, size, zeros_like
from ...tensor_array_ops import TensorArray

__all__ = ["Helper", "CustomHelper", "TrainingHelper", "GreedyEmbeddingHelper",
           "SampleEmbeddingHelper", "InferenceHelper", "ScheduledEmbeddingTrainingHelper",
           "ScheduledOutputTrainingHelper"]


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]; x itself when its rank is below 2."""
    from ...array_ops import concat, range as range_, rank as rank_of
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        return x
    if rank is None:
        return transpose(x, concat(([1, 0], range_(2, rank_of(x))), 0))
    dims = x.shape.as_list()
    transposed = transpose(x, [1, 0] + list(range(2, rank)))
    transposed.set_shape([dims[1], dims[0]] + dims[2:])
    return transposed


def _unstack_ta(inp):
    """A TensorArray of `inp`'s rows (its time steps, for a time-major tensor)."""
    return TensorArray(dtype=inp.dtype, size=shape(inp)[0],
                       element_shape=inp.shape[1:]).unstack(inp)


class Helper:
    """The interface BasicDecoder drives: batch_size, sample_ids_shape, sample_ids_dtype,
    initialize() -> (finished, next_inputs), sample(time, outputs, state) -> sample_ids,
    next_inputs(time, outputs, state, sample_ids) -> (finished, next_inputs, next_state)."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def sample_ids_shape(self):
        raise NotImplementedError

    @property
    def sample_ids_dtype(self):
        raise NotImplementedError

    def initialize(self, name=None):
        raise NotImplementedError

    def sample(self, time, outputs, state, name=None):
        raise NotImplementedError

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        raise NotImplementedError


class _IdHelper(Helper):
    """A helper whose sample ids are int32 scalars and whose batch size it knows from the
    start (self._batch_size)."""

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return TensorShape([])

    @property
    def sample_ids_dtype(self):
        return int32


def _none_finished(batch_size):
    return tile(convert_to_tensor([False], dtype=_bool), [batch_size])


class CustomHelper(Helper):
    """A helper of the user's functions: initialize_fn() -> (finished, next_inputs),
    sample_fn(time, outputs, state) -> sample_ids, next_inputs_fn(time, outputs, state,
    sample_ids) -> (finished, next_inputs, next_state)."""

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype

    def initialize(self, name=None):
        with name_scope(name, "%sInitialize" % type(self).__name__):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = size(finished)
        return finished, next_inputs

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "%sSample" % type(self).__name__):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with name_scope(name, "%sNextInputs" % type(self).__name__):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(_IdHelper):
    """Feeds the given inputs, one time step after the other (teacher forcing); a sequence
    finishes after sequence_length steps; sample ids are the argmax of the outputs."""

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with name_scope(name, "TrainingHelper"):
            inputs = convert_to_tensor(inputs, name="inputs")
            self._inputs = inputs
            if not time_major:
                inputs = nest.map_structure(_transpose_batch_time, inputs)
            self._input_tas = nest.map_structure(_unstack_ta, inputs)
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError("Expected sequence_length to be a vector, but received shape: "
                                 "%s" % self._sequence_length.shape)
            self._zero_inputs = nest.map_structure(lambda inp: zeros_like(inp[0, :]), inputs)
            self._batch_size = size(sequence_length)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    def initialize(self, name=None):
        with name_scope(name, "TrainingHelperInitialize"):
            finished = equal(0, self._sequence_length)
            next_inputs = cond(reduce_all(finished), lambda: self._zero_inputs,
                               lambda: nest.map_structure(lambda inp: inp.read(0),
                                                          self._input_tas))
            return finished, next_inputs

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperSample"):
            return cast(argmax(outputs, axis=-1), int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with name_scope(name, "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            next_inputs = cond(reduce_all(finished), lambda: self._zero_inputs,
                               lambda: nest.map_structure(lambda inp: inp.read(next_time),
                                                          self._input_tas))
            return finished, next_inputs, state


class GreedyEmbeddingHelper(_IdHelper):
    """Feeds the embedding of the previous step's argmax id, from start_tokens on; a sequence
    finishes when it emits end_token. `embedding` is the params of embedding_lookup or a
    function of the ids."""

    def __init__(self, embedding, start_tokens, end_token):
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            from ...nn import embedding_lookup
            self._embedding_fn = lambda ids: embedding_lookup(embedding, ids)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=int32, name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._batch_size = size(start_tokens)
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        return _none_finished(self._batch_size), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        _check_single_tensor(outputs)
        return argmax(outputs, axis=-1, output_type=int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = equal(sample_ids, self._end_token)
        next_inputs = cond(reduce_all(finished), lambda: self._start_inputs,
                           lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


def _check_single_tensor(outputs):
    from ...framework import Tensor
    if not isinstance(outputs, Tensor):
        raise TypeError("Expected outputs to be a single Tensor, got: %s" % type(outputs))


def categorical_sample(logits, dtype=int32, sample_shape=(), seed=None):
    """Ids drawn from the categorical distributions of `logits` [..., classes], of shape
    sample_shape + logits' batch shape, as TensorFlow 1.15's helper draws them."""
    from ...array_ops import concat
    from ...ops import reduce_prod
    from ...random_ops import multinomial
    logits = convert_to_tensor(logits, name="logits")
    event_size = shape(logits)[-1]
    batch_shape = shape(logits)[:-1]
    sample_shape = convert_to_tensor(sample_shape, dtype=int32, name="sample_shape")
    draws = multinomial(reshape(logits, [-1, event_size]), reduce_prod(sample_shape), seed=seed)
    draws = reshape(transpose(draws), concat([sample_shape, batch_shape], 0))
    return cast(draws, dtype)


def bernoulli_sample(probs=None, logits=None, dtype=int32, sample_shape=(), seed=None):
    """Draws of 1 with probability probs (or sigmoid(logits)), of shape sample_shape + probs'
    shape, as TensorFlow 1.15's helper draws them."""
    from ...array_ops import concat
    from ...ops import less, reduce_prod, sigmoid
    from ...random_ops import random_uniform
    probs = sigmoid(logits, name="probs") if probs is None else \
        convert_to_tensor(probs, name="probs")
    sample_shape = reshape(convert_to_tensor(sample_shape, dtype=int32, name="sample_shape"),
                           [-1])
    uniform = random_uniform(concat([[reduce_prod(sample_shape)], shape(probs)], 0), seed=seed,
                             dtype=probs.dtype)
    samples = cast(less(uniform, probs), dtype)
    return reshape(samples, concat([sample_shape, shape(samples)[1:]], 0))


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """GreedyEmbeddingHelper that draws each step's id from the softmax of the outputs (divided
    by softmax_temperature when given) instead of taking the argmax."""

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        _check_single_tensor(outputs)
        logits = outputs if self._softmax_temperature is None else \
            outputs / self._softmax_temperature
        return categorical_sample(logits=logits, seed=self._seed)


class InferenceHelper(Helper):
    """Samples with sample_fn(outputs), finishes where end_fn(sample_ids) holds, and feeds
    next_inputs_fn(sample_ids) (the ids themselves without one), from start_inputs on."""

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        self._batch_size = shape(self._start_inputs)[0]

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_dtype

    def initialize(self, name=None):
        return _none_finished(self._batch_size), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = self._end_fn(sample_ids)
        next_inputs = sample_ids if self._next_inputs_fn is None else \
            self._next_inputs_fn(sample_ids)
        return finished, next_inputs, state


def _merge_rows(chosen, fed_fn, base):
    """base with the rows where `chosen` ([batch] bool) holds replaced by fed_fn(indices)
    ([rows, ...], for the indices [rows, 1] of those rows), as TensorFlow's scheduled helpers
    gather and scatter them: fed_fn only sees (and only differentiates) the chosen rows."""
    from ...math_ops import logical_not
    from ...sparse_ops import gather_nd, scatter_nd
    from ...ops import where
    where_sampling = cast(where(chosen), int32)
    where_not_sampling = cast(where(logical_not(chosen)), int32)
    base_shape = shape(base)
    return (scatter_nd(indices=where_sampling, updates=fed_fn(where_sampling), shape=base_shape)
            + scatter_nd(indices=where_not_sampling,
                         updates=gather_nd(base, where_not_sampling), shape=base_shape))


def _sampling_probability(value):
    probability = convert_to_tensor(value, name="sampling_probability")
    if probability.shape.ndims not in (0, 1):
        raise ValueError("sampling_probability must be either a scalar or a vector. saw shape: "
                         "%s" % probability.shape)
    return probability


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """TrainingHelper with scheduled sampling: each step, each batch entry with probability
    sampling_probability (a scalar, or one per entry) is fed the embedding of an id drawn from
    its outputs instead of its next input. Sample ids are the drawn ids, -1 where none was
    drawn."""

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        with name_scope(name, "ScheduledEmbeddingSamplingWrapper"):
            self._embedding_is_callable = callable(embedding)
            if callable(embedding):
                self._embedding_fn = embedding
            else:
                from ...nn import embedding_lookup
                self._embedding_fn = lambda ids: embedding_lookup(embedding, ids)
            self._sampling_probability = _sampling_probability(sampling_probability)
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs=inputs, sequence_length=sequence_length,
                             time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        from ...ops import fill, where
        with name_scope(name, "ScheduledEmbeddingTrainingHelperSample"):
            select_sample = bernoulli_sample(probs=self._sampling_probability, dtype=_bool,
                                             sample_shape=self.batch_size,
                                             seed=self._scheduling_seed)
            return where(select_sample, categorical_sample(logits=outputs, seed=self._seed),
                         fill([self.batch_size], -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        from ...ops import greater
        with name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs"):
            finished, base_next_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)

            def maybe_sample():
                # Rows that sampled take their id's embedding; the others keep their input.
                from ...sparse_ops import gather_nd
                return _merge_rows(greater(sample_ids, -1),
                                   lambda rows: self._embedding_fn(gather_nd(sample_ids, rows)),
                                   base_next_inputs)
            next_inputs = cond(reduce_all(finished), lambda: base_next_inputs, maybe_sample)
            return finished, next_inputs, state

    def _before_loop(self, outputs):
        """Makes the variables a callable embedding makes, before dynamic_decode's loop."""
        if self._embedding_is_callable:
            self._embedding_fn(zeros_like(cast(outputs[:, 0], int32)))  # never run


class ScheduledOutputTrainingHelper(TrainingHelper):
    """TrainingHelper with scheduled sampling on the outputs: each step, each batch entry with
    probability sampling_probability is fed its outputs (through next_inputs_fn when given,
    with the step's auxiliary_inputs appended) instead of its next input. Sample ids are 1
    where that happened, 0 elsewhere."""

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False,
                 seed=None, next_inputs_fn=None, auxiliary_inputs=None, name=None):
        from ...array_ops import concat
        with name_scope(name, "ScheduledOutputTrainingHelper"):
            self._sampling_probability = _sampling_probability(sampling_probability)
            if auxiliary_inputs is None:
                maybe_concatenated_inputs = inputs
            else:
                inputs = convert_to_tensor(inputs, name="inputs")
                auxiliary_inputs = convert_to_tensor(auxiliary_inputs, name="auxiliary_inputs")
                maybe_concatenated_inputs = concat((inputs, auxiliary_inputs), -1)
                if not time_major:
                    auxiliary_inputs = _transpose_batch_time(auxiliary_inputs)
            self._auxiliary_input_tas = (_unstack_ta(auxiliary_inputs)
                                         if auxiliary_inputs is not None else None)
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(inputs=maybe_concatenated_inputs, sequence_length=sequence_length,
                             time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with name_scope(name, "ScheduledOutputTrainingHelperSample"):
            return bernoulli_sample(probs=self._sampling_probability,
                                    sample_shape=self.batch_size, seed=self._seed)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        from ...array_ops import concat
        from ...math_ops import logical_or, reduce_any
        from ...ops import logical_not, where
        with name_scope(name, "ScheduledOutputTrainingHelperNextInputs"):
            finished, base_next_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)
            chosen = cast(sample_ids, _bool)

            def with_auxiliary(fed, rows=None):
                if self._auxiliary_input_tas is None:
                    return fed
                from ...sparse_ops import gather_nd
                auxiliary = self._auxiliary_input_tas.read(time + 1)
                if rows is not None:
                    auxiliary = gather_nd(auxiliary, rows)
                return concat((fed, auxiliary), -1)

            def maybe_sample():
                if self._next_inputs_fn is None:
                    return where(chosen, with_auxiliary(outputs), base_next_inputs)
                from ...sparse_ops import gather_nd
                return _merge_rows(
                    chosen,
                    lambda rows: with_auxiliary(self._next_inputs_fn(gather_nd(outputs, rows)),
                                                rows),
                    base_next_inputs)
            no_samples = logical_not(reduce_any(chosen))
            next_inputs = cond(logical_or(reduce_all(finished), no_samples),
                               lambda: base_next_inputs, maybe_sample)
            return finished, next_inputs, state

    def _before_loop(self, outputs):
        """Makes the variables next_inputs_fn makes (a projection layer, a prenet), before
        dynamic_decode's loop."""
        if self._next_inputs_fn is not None:
            self._next_inputs_fn(outputs)  # never run
