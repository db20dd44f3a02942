"""tf.linalg: the linear-algebra names of TensorFlow 1.x's tf.linalg that troupe has (each is
also a top-level tf. name)."""

from .math_ops import einsum, eye, norm, qr, tensordot, trace  # noqa: F401 - re-exported
from .math_ops import matmul  # noqa: F401 - re-exported
from .math_ops import matrix_triangular_solve as triangular_solve  # noqa: F401
from .array_ops import matrix_band_part as band_part  # noqa: F401 - re-exported
from .array_ops import matrix_diag as diag  # noqa: F401 - re-exported
from .array_ops import matrix_diag_part as diag_part  # noqa: F401 - re-exported
from .array_ops import matrix_set_diag as set_diag  # noqa: F401 - re-exported
