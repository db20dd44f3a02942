"""The global step (tf.train.get_or_create_global_step)."""

from .. import _troupe
from ..framework import Operation, Tensor, get_default_graph
from ..variables import Variable


def get_or_create_global_step(graph=None):
    """The int64 scalar variable "global_step" (0 at first), created on first call."""
    g = graph or get_default_graph()
    existing = g._variables.get("global_step")
    if existing is not None:
        return existing
    g._check_not_finalized()
    ref, init = _troupe.get_or_create_global_step(g._scope)
    v = Variable(_existing=(ref, init), trainable=False, collections=["variables", "global_step"])
    # TensorFlow makes it with get_variable: the variable store holds it (init_from_checkpoint
    # and warm_start find it by name).
    from ..variables import _state
    _state(g).store.setdefault(v.op.name, v)
    return v


def get_global_step(graph=None):
    g = graph or get_default_graph()
    return g._variables.get("global_step")


def global_step(sess, global_step_tensor):
    """The value of the global step tensor (or variable) in `sess`, as an int."""
    return int(sess.run(global_step_tensor))


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the graph (a tf.Graph or GraphDef) to `logdir`/`name` in protobuf text format, or
    binary if not as_text; returns the path. The file is replaced whole."""
    import os
    from ..graph_pb import GraphDef
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    elif isinstance(graph_or_graph_def, GraphDef):
        graph_def = graph_or_graph_def
    else:
        raise TypeError("write_graph: expected a tf.Graph or GraphDef, got %r"
                        % (graph_or_graph_def,))
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = str(graph_def).encode("utf-8") if as_text else graph_def.SerializeToString()
    with open(path + ".tmp", "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)
    return path
