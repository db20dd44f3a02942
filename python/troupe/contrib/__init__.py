"""tf.contrib: the names of it the seed programs use (contrib.framework)."""

from . import framework  # noqa: F401
