"""tf.train.replica_device_setter: variables on the ps tasks (round robin, or as a ps_strategy
chooses), everything else on the worker device (graph/device_setter.hpp)."""

from .. import _troupe
from .. import dtypes as _dtypes
from ..framework import TensorShape
from .server_lib import ClusterSpec


class _PendingOutput:
    """An output of an op being placed: its dtype, and its shape when the op says it (a
    variable's `shape` attribute), else unknown."""

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self._shape = shape

    def get_shape(self):
        return self._shape

    @property
    def shape(self):
        return self._shape


class _PendingOperation:
    """The op a ps_strategy is asked to place, as TensorFlow passes it: `name`, `type`,
    `device`, `node_def`, `get_attr(name)` and `outputs` (dtype and shape). It is not in the
    graph yet, so it has no inputs to follow."""

    def __init__(self, name, op_type, device, attrs, output_dtypes):
        self.name = name
        self.type = op_type
        self.device = device
        self._attrs = attrs
        shape = TensorShape(attrs["shape"]) if len(output_dtypes) == 1 and \
            attrs.get("shape", None) is not None else TensorShape(None)
        self.outputs = [_PendingOutput(_dtypes.as_dtype(d), shape) for d in output_dtypes]

    @property
    def node_def(self):
        return {"name": self.name, "op": self.type, "device": self.device,
                "attr": dict(self._attrs)}

    def get_attr(self, name):
        if name not in self._attrs:
            raise ValueError("Operation %r has no attr named '%s'." % (self.name, name))
        value = self._attrs[name]
        if name in ("T", "dtype"):
            return _dtypes.as_dtype(value)
        return value

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for tf.device(). With `cluster`, ps_tasks is the number of tasks of
    ps_device's job in it. `ps_strategy(op)` returns the ps task of each ps op (default: round
    robin); e.g. contrib.training.GreedyLoadBalancingStrategy. Returns None when there are no
    ps tasks, as TensorFlow does."""
    if ps_strategy is not None and not callable(ps_strategy):
        raise TypeError("replica_device_setter: ps_strategy must be callable, got %r"
                        % (ps_strategy,))
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
    strategy = None
    if ps_strategy is not None:
        def strategy(name, op_type, device, attrs, output_dtypes):
            return ps_strategy(_PendingOperation(name, op_type, device, attrs, output_dtypes))
    return _troupe.replica_device_setter(ps_tasks, ps_device, worker_device, native_cluster,
                                         list(ps_ops) if ps_ops is not None else None,
                                         strategy)
