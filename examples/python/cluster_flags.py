"""The cluster and this task for the examples, as TensorFlow 1.x's distributed programs take
them: --ps_hosts, --worker_hosts, --job_name and --task_index, or else TF_CONFIG (which
`troupe launch` sets for every task it starts)."""

import troupe as tf


def cluster_and_task(flags):
    """(tf.train.ClusterSpec, job name, task index) from `flags` (tf.app.flags.FLAGS) or
    TF_CONFIG."""
    if flags.ps_hosts and flags.worker_hosts:
        if flags.job_name is None or flags.job_name == "":
            raise ValueError("Must specify an explicit `job_name`")
        if flags.task_index is None or flags.task_index == "":
            raise ValueError("Must specify an explicit `task_index`")
        cluster = tf.train.ClusterSpec({"ps": flags.ps_hosts.split(","),
                                        "worker": flags.worker_hosts.split(",")})
        return cluster, flags.job_name, flags.task_index
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    if not cluster or resolver.task_type is None:
        raise ValueError("Give --ps_hosts, --worker_hosts, --job_name and --task_index, or set "
                         "TF_CONFIG (troupe launch does)")
    return cluster, resolver.task_type, resolver.task_id


def define_cluster_flags(flags):
    """Defines the four flags, and --insecure (TROUPE_INSECURE=1: no TLS, loopback only)."""
    flags.DEFINE_string("ps_hosts", None, "Comma-separated list of hostname:port pairs")
    flags.DEFINE_string("worker_hosts", None, "Comma-separated list of hostname:port pairs")
    flags.DEFINE_string("job_name", None, "job name: worker or ps")
    flags.DEFINE_integer("task_index", None, "Index of task within the job")
    flags.DEFINE_boolean("insecure", False, "Run without TLS (TROUPE_INSECURE=1)")
