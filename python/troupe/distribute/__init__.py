"""tf.distribute: the cluster resolver that reads TF_CONFIG."""

from . import cluster_resolver  # noqa: F401
