"""tf.contrib: the names of it TF1 programs use (contrib.framework, contrib.layers,
contrib.opt, contrib.rnn, contrib.seq2seq's sequence_loss and decoders, contrib.training)."""

from . import framework  # noqa: F401
from . import layers  # noqa: F401
from . import opt  # noqa: F401
from . import rnn  # noqa: F401
from . import seq2seq  # noqa: F401
from . import training  # noqa: F401
