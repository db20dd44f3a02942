"""tf.data.experimental: the names TensorFlow 1.13+ moved there that troupe has."""

from .dataset_ops import AUTOTUNE  # noqa: F401
