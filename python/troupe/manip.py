"""tf.manip: TensorFlow 1.x's tensor manipulation names (tf.manip.roll, ...)."""

from .array_ops import roll, tile  # noqa: F401 - re-exported
from .ops import reshape  # noqa: F401 - re-exported
from .sparse_ops import gather_nd, scatter_nd  # noqa: F401 - re-exported
