"""tf.train.replica_device_setter: variables round-robin on the ps tasks, everything else on
the worker device (graph/device_setter.hpp)."""

from .. import _troupe
from .server_lib import ClusterSpec


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for tf.device(). With `cluster`, ps_tasks is the number of tasks of
    ps_device's job in it. Returns None when there are no ps tasks, as TensorFlow does."""
    if ps_strategy is not None:
        raise ValueError("replica_device_setter: troupe places ps ops round robin; a custom "
                         "ps_strategy is not supported")
    if not merge_devices:
        raise ValueError("replica_device_setter: merge_devices=False is not supported")
    for what, value in (("ps_device", ps_device), ("worker_device", worker_device)):
        if not isinstance(value, str):
            raise TypeError("replica_device_setter: %s must be a device string, got %r"
                            % (what, value))
    native_cluster = None
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = ps_device.split("/job:")[1].split("/")[0] if "/job:" in ps_device else None
        if not spec or ps_job is None or ps_job not in spec.jobs:
            return None
        native_cluster = spec._native()
    elif ps_tasks == 0:
        return None
    if not isinstance(ps_tasks, int) or ps_tasks < 0:
        raise ValueError("replica_device_setter: ps_tasks must be an int >= 0, got %r"
                         % (ps_tasks,))
    return _troupe.replica_device_setter(ps_tasks, ps_device, worker_device, native_cluster,
                                         list(ps_ops) if ps_ops is not None else None)
