"""tf.contrib.rnn: the names TF1 programs take from it, TensorFlow's cells and static_rnn
(python/troupe/rnn_cell.py, rnn.py)."""

from ..rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
from ..rnn_cell import (BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell,  # noqa: F401
                        LSTMCell, LSTMStateTuple, MultiRNNCell, ResidualWrapper, RNNCell)


class LSTMBlockCell(LSTMCell):
    """tf.contrib.rnn.LSTMBlockCell: TensorFlow's fused LSTM kernel, computed here as LSTMCell
    computes it (the same formulas and variables, lstm_cell/kernel and bias, and w_*_diag with
    use_peephole), so the two read each other's checkpoints as in TensorFlow."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=None if cell_clip is None or cell_clip < 0 else cell_clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)
