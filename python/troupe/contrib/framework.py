"""tf.contrib.framework: get_or_create_global_step, as the seed's trainer.py spells it, and
nest."""

from .. import nest  # noqa: F401
from ..train.training_util import get_global_step, get_or_create_global_step  # noqa: F401
