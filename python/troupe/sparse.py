"""tf.sparse: TensorFlow 1.x's namespace of SparseTensor functions (the same as the tf.sparse_*
names)."""

from .sparse_math import sparse_add as add  # noqa: F401 - re-exported
from .sparse_math import sparse_reduce_sum as reduce_sum  # noqa: F401
from .sparse_math import sparse_retain as retain  # noqa: F401
from .sparse_math import sparse_tensor_dense_matmul as sparse_dense_matmul  # noqa: F401
from .sparse_math import sparse_tensor_dense_matmul as matmul  # noqa: F401
from .sparse_ops import sparse_tensor_to_dense as to_dense  # noqa: F401
from .sparse_tensor import SparseTensor, sparse_placeholder as placeholder  # noqa: F401
