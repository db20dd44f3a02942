"""tf.contrib.rnn: the names TF1 programs take from it, TensorFlow's cells and static_rnn
(python/troupe/rnn_cell.py, rnn.py)."""

from ..rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
from ..rnn_cell import (BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell,  # noqa: F401
                        LSTMCell, LSTMStateTuple, MultiRNNCell, ResidualWrapper, RNNCell)
