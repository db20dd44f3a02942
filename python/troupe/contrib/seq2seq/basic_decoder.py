"""tf.contrib.seq2seq.BasicDecoder, as TensorFlow 1.15 defines it: each step calls the cell on
the helper's inputs, applies output_layer (a tf.layers layer) when given, and asks the helper
for the step's sample ids and the next inputs. Its outputs are BasicDecoderOutput(rnn_output,
sample_id)."""

import collections

from ... import nest
from ...framework import TensorShape, name_scope
from ...layers import Layer
from .decoder import Decoder
from .helper import Helper

__all__ = ["BasicDecoderOutput", "BasicDecoder"]


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    pass


class _CellCall:
    """A decoder's cell inside dynamic_decode's loop. troupe makes no variable inside a loop's
    body (as dynamic_rnn does for its cell): made before the loop, this makes the cell's and
    the output layer's variables from the loop's first inputs and state; called in the loop,
    it runs the cell under the scope the variables were made in."""

    def __init__(self, cell, output_layer, inputs, state):
        from ...ops import zeros
        from ...rnn_cell import RNNCell
        from ...variables import get_variable_scope
        self._cell = cell
        self._custom_call = not isinstance(cell, RNNCell) or \
            type(cell).__call__ is not RNNCell.__call__
        self._loop_scope = get_variable_scope()
        outputs = None
        if self._custom_call:
            outputs, _ = cell(inputs, state)  # makes its variables; never run
        else:
            depth = inputs.shape.as_list()[-1] if inputs.shape.ndims else None
            cell._ensure_built(depth, nest.flatten(state)[0].dtype)
        if output_layer is not None and not output_layer.built:
            if outputs is None:
                outputs = zeros([1, cell.output_size], dtype=nest.flatten(state)[0].dtype)
            output_layer(outputs)

    @staticmethod
    def run(decoder, inputs, state):
        """`decoder`'s cell on (inputs, state): through the _CellCall its _before_loop made,
        or directly when step() is called outside dynamic_decode."""
        call = getattr(decoder, "_cell_call", None)
        return call(inputs, state) if call is not None else decoder._cell(inputs, state)

    def __call__(self, inputs, state):
        if not self._custom_call:
            return self._cell(inputs, state)
        from ...variables import variable_scope
        with variable_scope(self._loop_scope, reuse=True):
            return self._cell(inputs, state)


def _assert_like_rnncell(cell):
    """TypeError naming what `cell` lacks to be used as an RNNCell, as TensorFlow's."""
    problems = []
    if not hasattr(cell, "output_size"):
        problems.append("'output_size' property is missing")
    if not hasattr(cell, "state_size"):
        problems.append("'state_size' property is missing")
    if not (hasattr(cell, "zero_state") or hasattr(cell, "get_initial_state")):
        problems.append("either 'zero_state' or 'get_initial_state' method is required")
    if not callable(cell):
        problems.append("is not callable")
    if problems:
        raise TypeError("The argument %r (%s) is not an RNNCell: %s." % ("cell", cell,
                                                                       ", ".join(problems)))


class BasicDecoder(Decoder):
    """cell: an RNNCell; helper: a Helper; initial_state: the cell's first state (a structure
    of tensors); output_layer: an optional tf.layers layer (a Dense projecting to the vocabulary,
    say) applied to the cell's outputs before they are sampled and emitted."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        _assert_like_rnncell(cell)
        if not isinstance(helper, Helper):
            raise TypeError("helper must be a Helper, received: %s" % type(helper))
        if output_layer is not None and not isinstance(output_layer, Layer):
            raise TypeError("output_layer must be a Layer, received: %s" % type(output_layer))
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        with_batch = nest.map_structure(lambda s: TensorShape([None]).concatenate(s), size)
        layer_shape = self._output_layer.compute_output_shape(with_batch)
        return nest.map_structure(lambda s: TensorShape(s.as_list()[1:]), layer_shape)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(),
                                  sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(nest.map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def _before_loop(self, inputs, state):
        """Makes the cell's and the output layer's variables before dynamic_decode's loop, and
        those of the helper's functions (a scheduled helper's embedding or next_inputs_fn)."""
        self._cell_call = _CellCall(self._cell, self._output_layer, inputs, state)
        if hasattr(self._helper, "_before_loop"):
            from ...ops import zeros
            from ...variables import get_variable_scope
            depth = TensorShape(self._rnn_output_size()).as_list()[-1]
            outputs = zeros([self._helper.batch_size, depth],
                            dtype=nest.flatten(state)[0].dtype)  # never run
            self._helper._before_loop(outputs)
            self._helper_scope = get_variable_scope()

    def _helper_call(self, method, **kwargs):
        """The helper's sample or next_inputs; in the loop, where its functions' variables
        were made before it, reused."""
        scope = getattr(self, "_helper_scope", None)
        if scope is None:
            return method(**kwargs)
        from ...variables import variable_scope
        with variable_scope(scope, reuse=True):
            return method(**kwargs)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BasicDecoderStep"):
            cell_outputs, cell_state = _CellCall.run(self, inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper_call(self._helper.sample, time=time, outputs=cell_outputs,
                                           state=cell_state)
            finished, next_inputs, next_state = self._helper_call(
                self._helper.next_inputs, time=time, outputs=cell_outputs, state=cell_state,
                sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
