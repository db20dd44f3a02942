"""tf.compat: `import troupe.compat.v1 as tf` gives the same surface as `import troupe`."""

from . import v1  # noqa: F401
