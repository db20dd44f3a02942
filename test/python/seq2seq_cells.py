"""A cell for the seq2seq tests: EchoCell(depth) outputs its input, so each step's output
shows what the decoder fed it (the logits of the next token, when the input is an
embedding row of logits)."""

import troupe as tf


class EchoCell(tf.nn.rnn_cell.RNNCell):
    def __init__(self, depth):
        super().__init__()
        self._depth = depth

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return self._depth

    def call(self, inputs, state):
        return inputs, state
