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
        # The default name is a base made unique in its scope (lstm_cell, lstm_cell_1, ...), as
        # TensorFlow's layers make it.
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=None if cell_clip is None or cell_clip < 0 else cell_clip,
                         forget_bias=forget_bias, reuse=reuse,
                         name=None if name == "lstm_cell" else name, dtype=dtype)


def _block_units(num_units, cell_size):
    if (cell_size is None) == (num_units is None):
        raise ValueError("Exactly one of num_units or cell_size must be provided.")
    return num_units if num_units is not None else cell_size


class GRUBlockCellV2(GRUCell):
    """tf.contrib.rnn.GRUBlockCellV2: TensorFlow's fused GRU kernel, computed here as GRUCell
    computes it (the same formulas and variables, gru_cell/gates/kernel and bias,
    gru_cell/candidate/kernel and bias)."""

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        # The default name is a base made unique in its scope (gru_cell, gru_cell_1, ...).
        super().__init__(_block_units(num_units, cell_size), reuse=reuse,
                         name=None if name == "gru_cell" else name)

    def _build(self, depth, dtype):
        if depth is None:
            raise ValueError("Expecting input_size to be set.")
        super()._build(depth, dtype)


class GRUBlockCell(GRUBlockCellV2):
    """tf.contrib.rnn.GRUBlockCell: GRUCell's formulas under the fused kernel's variable names,
    as TensorFlow 1.15 names them: gru_cell/w_ru [input + units, 2 units] (the gates' kernel),
    gru_cell/b_ru (starting at 1.0), gru_cell/w_c [input + units, units] (the candidate's) and
    gru_cell/b_c (at 0)."""

    def _build(self, depth, dtype):
        from ..variables import constant_initializer, zeros_initializer
        if depth is None:
            raise ValueError("Expecting input_size to be set.")
        n = self._num_units
        self._gate_kernel = self._variable("w_ru", [depth + n, 2 * n], dtype, None)
        self._gate_bias = self._variable("b_ru", [2 * n], dtype, constant_initializer(1.0))
        self._candidate_kernel = self._variable("w_c", [depth + n, n], dtype, None)
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
        default = name == "lstm_fused_cell"
        self._cell = LSTMBlockCell(num_units, forget_bias=forget_bias, cell_clip=cell_clip,
                                   use_peephole=use_peephole, dtype=dtype, reuse=reuse,
                                   name=None if default else name)
        if default:  # a base made unique in its scope (lstm_fused_cell, lstm_fused_cell_1...)
            self._cell._base_name = "lstm_fused_cell"
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


class AttentionCellWrapper(RNNCell):
    """tf.contrib.rnn.AttentionCellWrapper(cell, attn_length, attn_size=None,
    attn_vec_size=None, input_size=None, state_is_tuple=True, reuse=None): a cell that attends
    over its last attn_length outputs (arXiv:1601.06733), as TensorFlow 1.x's contrib wrapper
    computes it. Each step: the input is a linear layer of [inputs, attns] (kernel, bias); the
    wrapped cell runs on it; the attention reads the window with the new state as query
    (attention/attn_w, attn_v, and attention/kernel, bias); the output is a linear layer of
    [cell output, new attns] (attn_output_projection/kernel, bias); the window moves on by
    that output. State: (the cell's state, attns [attn_size], the window [attn_size *
    attn_length]), or all of it concatenated with state_is_tuple=False. Variables under
    attention_cell_wrapper/, the wrapped cell's inside it, named as TensorFlow names them."""

    _base_name = "attention_cell_wrapper"

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None, input_size=None,
                 state_is_tuple=True, reuse=None):
        super().__init__(reuse=reuse)
        if not isinstance(cell, RNNCell):
            raise TypeError("The parameter cell is not a RNNCell.")
        if isinstance(cell.state_size, (list, tuple)) and not state_is_tuple:
            raise ValueError("Cell returns tuple of states, but the flag state_is_tuple is not "
                             "set. State size is: %s" % (cell.state_size,))
        if isinstance(attn_length, bool) or not isinstance(attn_length, int) or \
                attn_length <= 0:
            raise ValueError("attn_length should be greater than zero, got %s" % (attn_length,))
        self._cell = cell
        self._attn_length = attn_length
        self._attn_size = attn_size if attn_size is not None else cell.output_size
        self._attn_vec_size = attn_vec_size if attn_vec_size is not None else self._attn_size
        self._input_size = input_size
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._attn_size

    def _query_size(self):
        sizes = self._cell.state_size
        return sum(sizes) if isinstance(sizes, (list, tuple)) else sizes

    def _build(self, depth, dtype):
        from ..variables import variable_scope, zeros_initializer
        input_size = self._input_size if self._input_size is not None else depth
        n, m = self._attn_size, self._attn_vec_size
        self._in_kernel = self._variable("kernel", [depth + n, input_size], dtype)
        self._in_bias = self._variable("bias", [input_size], dtype, zeros_initializer())
        self._cell._ensure_built(input_size, dtype)
        self._variables.extend(self._cell.variables)
        with variable_scope("attention"):
            self._attn_w = self._variable("attn_w", [1, 1, n, m], dtype)
            self._attn_v = self._variable("attn_v", [m], dtype)
            self._query_kernel = self._variable("kernel", [self._query_size(), m], dtype)
            self._query_bias = self._variable("bias", [m], dtype, zeros_initializer())
        with variable_scope("attn_output_projection"):
            self._out_kernel = self._variable("kernel", [self._cell.output_size + n, n], dtype)
            self._out_bias = self._variable("bias", [n], dtype, zeros_initializer())

    def _split_state(self, state):
        from ..array_ops import slice as slice_
        if self._state_is_tuple:
            return state
        cell_size = self._cell.state_size
        return (slice_(state, [0, 0], [-1, cell_size]),
                slice_(state, [0, cell_size], [-1, self._attn_size]),
                slice_(state, [0, cell_size + self._attn_size],
                       [-1, self._attn_size * self._attn_length]))

    def _step(self, inputs, state):
        from ..array_ops import concat, expand_dims, slice as slice_
        from ..control_flow_ops import _flatten_nested
        from ..nn import softmax
        from ..ops import matmul, reduce_sum, reshape, tanh
        from ..rnn_cell import _linear
        n, m, length = self._attn_size, self._attn_vec_size, self._attn_length
        cell_state, attns, window = self._split_state(state)
        window = reshape(window, [-1, length, n])
        cell_output, new_cell_state = self._cell(
            _linear([inputs, attns], self._in_kernel, self._in_bias), cell_state)
        query = concat(_flatten_nested(new_cell_state), 1) if self._state_is_tuple \
            else new_cell_state
        # The attention: a score per place of the window, its softmax, the weighted window.
        hidden = reshape(window, [-1, length, 1, n])
        features = reshape(matmul(reshape(window, [-1, n]), reshape(self._attn_w, [n, m])),
                           [-1, length, 1, m])
        y = reshape(_linear([query], self._query_kernel, self._query_bias), [-1, 1, 1, m])
        scores = reduce_sum(self._attn_v * tanh(features + y), [2, 3])
        weights = softmax(scores)
        new_attns = reshape(reduce_sum(reshape(weights, [-1, length, 1, 1]) * hidden, [1, 2]),
                            [-1, n])
        output = _linear([cell_output, new_attns], self._out_kernel, self._out_bias)
        new_window = concat([slice_(window, [0, 1, 0], [-1, -1, -1]), expand_dims(output, 1)],
                            1)
        new_state = (new_cell_state, new_attns, reshape(new_window, [-1, length * n]))
        if not self._state_is_tuple:
            new_state = concat(list(new_state), 1)
        return output, new_state
