"""tf.contrib.seq2seq's Decoder interface and dynamic_decode, as TensorFlow 1.15 defines them:
dynamic_decode calls decoder.initialize() once, then decoder.step() in a while_loop until every
sequence of the batch is finished (or maximum_iterations), writing each step's outputs into
TensorArrays; it returns (final_outputs, final_state, final_sequence_lengths)."""

from ... import nest
from ...control_flow_ops import while_loop
from ...dtypes import int32
from ...framework import TensorShape, Tensor, convert_to_tensor
from ...math_ops import logical_or, reduce_all
from ...ops import constant, fill, logical_not, shape, where, zeros, zeros_like
from ...tensor_array_ops import TensorArray
from ...variables import variable_scope
from .helper import _transpose_batch_time

__all__ = ["Decoder", "dynamic_decode"]


class Decoder:
    """An RNN decoder: batch_size, output_size and output_dtype (structures matching its
    outputs), initialize() -> (finished, initial_inputs, initial_state), step(time, inputs,
    state) -> (outputs, next_state, next_inputs, finished), and optionally
    finalize(outputs, final_state, sequence_lengths) -> (final_outputs, final_state) and
    tracks_own_finished. troupe makes no variable inside a while_loop's body: a decoder whose
    step() would make variables makes them before the loop, in a method
    _before_loop(initial_inputs, initial_state) that dynamic_decode calls when it is there (as
    BasicDecoder does for its cell and output layer)."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    @property
    def output_dtype(self):
        raise NotImplementedError

    def initialize(self, name=None):
        raise NotImplementedError

    def step(self, time, inputs, state, name=None):
        raise NotImplementedError

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """Whether step() returns every sequence's finished flag itself (False: dynamic_decode
        keeps a sequence finished once it was)."""
        return False


def _static_value(value):
    """A Python int for a constant scalar, else None."""
    if isinstance(value, int):
        return value
    if isinstance(value, Tensor) and value.op.type == "Const":
        return int(value.op.get_attr("value"))
    return None


def _zero_outputs(size, dtype, batch_size):
    def zeros_of(s, d):
        dims = TensorShape(s).as_list() if isinstance(s, TensorShape) else \
            ([] if s is None else [s])
        return zeros([batch_size] + dims, dtype=d) if dims else zeros([batch_size], dtype=d)
    return nest.map_structure(zeros_of, size, dtype)


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None, **kwargs):
    """Decodes with `decoder` until every sequence is finished or maximum_iterations steps ran.
    With impute_finished, a finished sequence's outputs are zeros and its state is kept from
    the step it finished. Outputs are batch major unless output_time_major. Returns
    (final_outputs, final_state, final_sequence_lengths). Other keyword arguments are for
    TensorFlow 2's BaseDecoder and, as in TensorFlow 1.15 for a Decoder, ignored."""
    if not isinstance(decoder, Decoder):
        raise TypeError("Expected decoder to be type Decoder, but saw: %s" % type(decoder))
    with variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        # troupe makes no variable inside a loop's body: a decoder of its own makes them now.
        if hasattr(decoder, "_before_loop"):
            decoder._before_loop(initial_inputs, initial_state)
        zero_outputs = _zero_outputs(decoder.output_size, decoder.output_dtype,
                                     decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = logical_or(initial_finished, 0 >= maximum_iterations)
        initial_sequence_lengths = zeros_like(initial_finished, dtype=int32)
        initial_time = constant(0, dtype=int32)
        static_batch = _static_value(decoder.batch_size)

        def create_ta(s, d):
            element_shape = None
            if isinstance(s, TensorShape) and s.ndims:
                element_shape = TensorShape([static_batch]).concatenate(s)
            return TensorArray(dtype=d, size=0, dynamic_size=True, element_shape=element_shape)

        initial_outputs_ta = nest.map_structure(create_ta, decoder.output_size,
                                                decoder.output_dtype)
        emitted_shapes = []  # each output's static shape in a step, seen while tracing it

        def condition(unused_time, unused_outputs_ta, unused_state, unused_inputs, finished,
                      unused_sequence_lengths):
            return logical_not(reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, sequence_lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
            else:
                next_finished = logical_or(decoder_finished, finished)
            next_sequence_lengths = where(logical_not(finished),
                                          fill(shape(sequence_lengths), time + 1),
                                          sequence_lengths)
            nest.assert_same_structure(state, decoder_state)
            nest.assert_same_structure(outputs_ta, next_outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                emit = nest.map_structure(lambda out, zero: where(finished, zero, out),
                                          next_outputs, zero_outputs)

                def copy_state(new, cur):
                    # TensorArrays and scalar states go through as they are.
                    if isinstance(cur, TensorArray):
                        return new
                    new.set_shape(cur.shape)
                    return new if new.shape.ndims == 0 else where(finished, cur, new)
                next_state = nest.map_structure(copy_state, decoder_state, state)
            else:
                emit = next_outputs
                next_state = decoder_state
            emitted_shapes[:] = [out.shape for out in nest.flatten(emit)]
            outputs_ta = nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta,
                                            emit)
            return (time + 1, outputs_ta, next_state, next_inputs, next_finished,
                    next_sequence_lengths)

        result = while_loop(condition, body,
                            loop_vars=(initial_time, initial_outputs_ta, initial_state,
                                       initial_inputs, initial_finished,
                                       initial_sequence_lengths),
                            parallel_iterations=parallel_iterations,
                            maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_outputs_ta, final_state, final_sequence_lengths = result[1], result[2], result[5]
        final_sequence_lengths.set_shape(initial_finished.shape)
        final_outputs = nest.map_structure(lambda ta: ta.stack(), final_outputs_ta)
        # The static shape of the steps' outputs, as TensorFlow's TensorArray keeps it.
        flat_outputs = nest.flatten(final_outputs)
        for out, step_shape in zip(flat_outputs, emitted_shapes):
            if step_shape.ndims is not None:
                out.set_shape(TensorShape([None]).concatenate(step_shape))
        final_outputs = nest.pack_sequence_as(final_outputs, flat_outputs)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_sequence_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(_transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_sequence_lengths
