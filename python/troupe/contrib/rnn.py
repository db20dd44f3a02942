"""tf.contrib.rnn: the names TF1 programs take from it, TensorFlow's cells and static_rnn
(python/troupe/rnn_cell.py, rnn.py)."""

from ..rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
from ..rnn_cell import (BasicLSTMCell, BasicRNNCell, DeviceWrapper,  # noqa: F401
                        DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell,
                        ResidualWrapper, RNNCell)


class LSTMBlockCell(LSTMCell):
    """tf.contrib.rnn.LSTMBlockCell: TensorFlow's fused LSTM kernel, computed here as LSTMCell
    computes it (the same formulas and variables, lstm_cell/kernel and bias, and w_*_diag with
    use_peephole), so the two read each other's checkpoints as in TensorFlow."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=None if cell_clip is None or cell_clip < 0 else cell_clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


def _block_units(num_units, cell_size):
    if (cell_size is None) == (num_units is None):
        raise ValueError("Exactly one of num_units or cell_size must be provided.")
    return num_units if num_units is not None else cell_size


class GRUBlockCellV2(GRUCell):
    """tf.contrib.rnn.GRUBlockCellV2: TensorFlow's fused GRU kernel, computed here as GRUCell
    computes it (the same formulas and variables, gru_cell/gates/kernel and bias,
    gru_cell/candidate/kernel and bias)."""

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        super().__init__(_block_units(num_units, cell_size), reuse=reuse, name=name)

    def _build(self, depth, dtype):
        if depth is None:
            raise ValueError("Expecting input_size to be set.")
        super()._build(depth, dtype)


class GRUBlockCell(GRUBlockCellV2):
    """tf.contrib.rnn.GRUBlockCell: GRUCell's formulas under the fused kernel's variable names,
    as TensorFlow 1.x names them: gru_cell/w_c [input + units, 2 units] holds the gates' kernel
    and gru_cell/w_ru [input + units, units] the candidate's (TensorFlow's names, crossed as
    they are there), gru_cell/b_ru (starting at 1.0) and gru_cell/b_c (at 0)."""

    def _build(self, depth, dtype):
        from ..variables import constant_initializer, zeros_initializer
        if depth is None:
            raise ValueError("Expecting input_size to be set.")
        n = self._num_units
        self._gate_kernel = self._variable("w_c", [depth + n, 2 * n], dtype, None)
        self._gate_bias = self._variable("b_ru", [2 * n], dtype, constant_initializer(1.0))
        self._candidate_kernel = self._variable("w_ru", [depth + n, n], dtype, None)
        self._candidate_bias = self._variable("b_c", [n], dtype, zeros_initializer())


class LSTMBlockFusedCell:
    """tf.contrib.rnn.LSTMBlockFusedCell: an LSTM over a whole time-major sequence
    ([time, batch, input], or a list of [batch, input]) in one call, as TensorFlow's fused
    kernel: cell(inputs, initial_state=None, dtype=None, sequence_length=None, scope=None) ->
    (outputs [time, batch, units] (a list for a list), LSTMStateTuple(c, h) at each sequence's
    end). Computed as dynamic_rnn over LSTMBlockCell's formulas, with TensorFlow's variables:
    lstm_fused_cell/kernel [input + units, 4 units], lstm_fused_cell/bias, and w_i_diag,
    w_f_diag, w_o_diag with use_peephole."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name="lstm_fused_cell"):
        self._cell = LSTMBlockCell(num_units, forget_bias=forget_bias, cell_clip=cell_clip,
                                   use_peephole=use_peephole, dtype=dtype, reuse=reuse,
                                   name=name)
        self._num_units = int(num_units)

    num_units = property(lambda self: self._num_units)
    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._num_units)

    @property
    def variables(self):
        return self._cell.variables

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        from ..framework import convert_to_tensor
        from ..ops import stack
        from ..array_ops import unstack
        from ..rnn import dynamic_rnn
        from ..variables import get_variable_scope, variable_scope
        listed = isinstance(inputs, (list, tuple))
        inputs = stack(list(inputs)) if listed else convert_to_tensor(inputs)
        if inputs.shape.ndims not in (None, 3):
            raise ValueError("LSTMBlockFusedCell: inputs must be [time, batch, input] (or a "
                             "list of [batch, input]), got shape %s" % inputs.shape)
        if initial_state is not None and not isinstance(initial_state, tuple):
            raise TypeError("LSTMBlockFusedCell: initial_state must be a (c, h) tuple, got %r"
                            % (initial_state,))
        if initial_state is not None:
            initial_state = LSTMStateTuple(*initial_state)
        with variable_scope(scope or get_variable_scope()) as here:
            outputs, state = dynamic_rnn(self._cell, inputs, sequence_length=sequence_length,
                                         initial_state=initial_state,
                                         dtype=dtype or inputs.dtype, time_major=True,
                                         scope=here)
        return (unstack(outputs) if listed else outputs), state
