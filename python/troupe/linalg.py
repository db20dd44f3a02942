"""tf.linalg: the linear-algebra names of TensorFlow 1.x's tf.linalg that troupe has (each is
also a top-level tf. name)."""

from .math_ops import einsum, eye, norm, qr, tensordot, trace  # noqa: F401 - re-exported
from .math_ops import matmul  # noqa: F401 - re-exported
