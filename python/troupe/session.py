"""tf.Session: runs a graph's nodes on a server's cluster, with TensorFlow's fetch and feed
rules.

`fetches` may be a Tensor, an Operation (its value is None), a Variable, a tensor or op name
("x:0", "train"), or a list, tuple, namedtuple or dict of those, nested: the result has the same
structure. `feed_dict` maps Tensors (or their names) to Python values or numpy arrays, converted
to the tensor's dtype with numpy.asarray and checked against its shape.
"""

import collections
import contextlib
import os
import threading

import numpy as np

from . import _troupe
from . import errors
from . import dtypes as _dtypes
from .framework import IndexedSlices, IndexedSlicesValue, Operation, Tensor, get_default_graph


from .config import ConfigProto, RunOptions  # noqa: E402  (they live with their messages)
from .step_stats_pb import RunMetadata  # noqa: E402


# --- fetch structures ---

class _FetchMapper:
    """Flattens a fetch structure into unique tensors and ops, and rebuilds it from values."""

    def __init__(self, graph, fetches):
        self._graph = graph
        self.tensors = []      # unique Outputs to fetch
        self.targets = []      # unique Operations to run
        self._tensor_index = {}
        self._target_set = set()
        self._build = self._map(fetches)

    def _map(self, fetch):
        if fetch is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(fetch, (list, tuple)) and not _is_namedtuple(fetch):
            builders = [self._map(f) for f in fetch]
            kind = type(fetch)
            return lambda values: kind(b(values) for b in builders)
        if _is_namedtuple(fetch):
            builders = [self._map(f) for f in fetch]
            kind = type(fetch)
            return lambda values: kind(*[b(values) for b in builders])
        from .sparse_tensor import SparseTensor, SparseTensorValue
        if isinstance(fetch, SparseTensor):  # fetched as SparseTensorValue, as TensorFlow
            builders = [self._map(f) for f in (fetch.indices, fetch.values, fetch.dense_shape)]
            return lambda values: SparseTensorValue(*[b(values) for b in builders])
        if isinstance(fetch, IndexedSlices):  # fetched as IndexedSlicesValue, as TensorFlow
            parts = [fetch.values, fetch.indices]
            if fetch.dense_shape is not None:
                parts.append(fetch.dense_shape)
            builders = [self._map(f) for f in parts]
            return lambda values: IndexedSlicesValue(*[b(values) for b in builders],
                                                     *([None] * (3 - len(builders))))
        if isinstance(fetch, collections.abc.Mapping):
            builders = [(k, self._map(v)) for k, v in fetch.items()]
            kind = type(fetch)

            def build_dict(values):
                items = [(k, b(values)) for k, b in builders]
                if kind is collections.defaultdict:
                    result = collections.defaultdict(fetch.default_factory)
                    result.update(items)
                    return result
                return kind(items)
            return build_dict
        element = self._element(fetch)
        if isinstance(element, Operation):
            if element._op not in self._target_set:
                self._target_set.add(element._op)
                self.targets.append(element._op)
            return lambda values: None
        output = element._output
        if output not in self._tensor_index:
            self._tensor_index[output] = len(self.tensors)
            self.tensors.append(output)
        index = self._tensor_index[output]
        return lambda values: values[index]

    def _element(self, fetch):
        try:
            if isinstance(fetch, str):
                element = self._graph.as_graph_element(fetch)
            elif isinstance(fetch, (Tensor, Operation)) or hasattr(fetch, "_as_graph_element"):
                element = fetch._as_graph_element() if hasattr(fetch, "_as_graph_element") \
                    else fetch
            else:
                raise TypeError("Fetch argument %r has invalid type %r, must be a string or "
                                "Tensor. (Can not convert a %s into a Tensor or Operation.)"
                                % (fetch, type(fetch), type(fetch).__name__))
        except KeyError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)"
                             % (fetch, e.args[0])) from None
        if element.graph is not self._graph:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (Tensor %s "
                             "is not an element of this graph.)" % (fetch, element.name))
        return element

    def build(self, values):
        return self._build(values)


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _feeds(graph, feed_dict):
    """[(Output, numpy array)] for a feed_dict, converted and checked as TensorFlow does."""
    feeds = []
    if feed_dict is None:
        return feeds
    if not isinstance(feed_dict, collections.abc.Mapping):
        raise TypeError("feed_dict must be a dictionary, got %s" % type(feed_dict).__name__)
    from .sparse_tensor import _expand_feeds
    for key, value in _expand_feeds(feed_dict):
        try:
            if isinstance(key, str):
                tensor = graph.get_tensor_by_name(key)
            elif isinstance(key, Tensor):
                tensor = key
            elif hasattr(key, "_as_graph_element"):
                tensor = key._as_graph_element()
            else:
                raise TypeError("Cannot interpret feed_dict key as Tensor: Can not convert a %s "
                                "into a Tensor." % type(key).__name__)
        except (KeyError, ValueError) as e:
            raise TypeError("Cannot interpret feed_dict key as Tensor: %s" % e) from None
        if tensor.graph is not graph:
            raise ValueError("Cannot interpret feed_dict key as Tensor: Tensor %s is not an "
                             "element of this graph." % tensor.name)
        if isinstance(value, (Tensor, Operation)):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                            "values include Python scalars, strings, lists, numpy ndarrays, or "
                            "TensorHandles. For reference, the tensor object was %s which was "
                            "passed to the feed with key %s." % (value, tensor))
        dtype = tensor.dtype
        try:
            if dtype == _dtypes.string:
                array = np.asarray(value, dtype=object)
            else:
                raw = np.asarray(value)
                if raw.dtype.kind in ("U", "S", "O"):
                    raise TypeError("Cannot feed a value of type %s (%r) to Tensor %r of "
                                    "dtype %s" % (raw.dtype, value, tensor.name, dtype.name))
                array = np.asarray(raw, dtype=dtype.as_numpy_dtype)
        except (ValueError, OverflowError) as e:
            raise TypeError("Cannot feed %r to Tensor %r of dtype %s: %s"
                            % (value, tensor.name, dtype.name, e)) from None
        if not tensor.shape.is_compatible_with(array.shape):
            raise ValueError("Cannot feed value of shape %r for Tensor %r, which has shape %r"
                             % (array.shape, tensor.name, str(tensor.shape)))
        feeds.append((tensor._output, array))
    return feeds


class _ClosedSessionError(errors.FailedPreconditionError, RuntimeError):
    """Using a closed session: FailedPreconditionError, and RuntimeError as in TensorFlow."""


def _run_options(options):
    """(timeout_in_ms, trace_level, output_partition_graphs) of a Session.run's `options`
    (None: the defaults)."""
    if options is None:
        return 0, 0, False
    if not isinstance(options, RunOptions):
        raise TypeError("options: expected a tf.RunOptions, got %r" % (options,))
    # As TensorFlow: a timeout of 0 or less is the session's.
    return (max(options.timeout_in_ms, 0), options.trace_level,
            options.output_partition_graphs)


def _check_run_metadata(run_metadata):
    if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
        raise TypeError("run_metadata: expected a tf.RunMetadata, got %r" % (run_metadata,))


class _Runner:
    """The run() logic shared by Session and the sessions lent to hooks."""

    def _run_with(self, handle, graph, fetches, feed_dict, options, step_tag=0,
                  run_metadata=None):
        if handle is None or handle.closed:
            raise _ClosedSessionError(None, None, "Attempted to use a closed Session.")
        mapper = _FetchMapper(graph, fetches)
        feeds = _feeds(graph, feed_dict)
        timeout, trace_level, partition_graphs = _run_options(options)
        _check_run_metadata(run_metadata)
        if not mapper.tensors and not mapper.targets:
            if run_metadata is not None:
                run_metadata.Clear()
            return mapper.build([])
        values, metadata = handle.run(feeds, mapper.tensors, mapper.targets, timeout, step_tag,
                                      trace_level, partition_graphs)
        if run_metadata is not None:
            run_metadata.ParseFromString(metadata or b"")
        return mapper.build(values)

    def _run_tagged(self, fetches, step_tag):
        """run(fetches) with `step_tag` (negative: the Python layer's own), which
        _cancel_tagged cancels; for threads that must stop a blocked step (queue runners)."""
        return self._run_with(self._handle, self._graph, fetches, None, None, step_tag)

    def _cancel_tagged(self, step_tag):
        if self._handle is not None and not self._handle.closed:
            self._handle.cancel_step(step_tag)


def _local_server(config=None):
    """A server of this process for a session without a target: as TensorFlow's in-process
    session, each such session has devices, variables and queues of its own."""
    return _troupe.Server.create_local_server(config or _troupe.SessionConfig())


class _DefaultSessionStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []


_default_sessions = _DefaultSessionStack()


def get_default_session():
    return _default_sessions.stack[-1] if _default_sessions.stack else None


class Session(_Runner):
    """tf.Session(target="", graph=None, config=None). target: a server's target
    ("troupe://host:port" of any task, or Server.target); "" runs on a server of this process
    made for this session alone (its variables and queues are its own)."""

    def __init__(self, target="", graph=None, config=None):
        if not isinstance(target, str):
            raise TypeError("target must be a string, but got %s" % type(target).__name__)
        if graph is not None and not hasattr(graph, "_scope"):
            raise TypeError("graph must be a tf.Graph, but got %s" % type(graph).__name__)
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError("config must be a tf.ConfigProto, but got %s" % type(config))
        self._graph = graph or get_default_graph()
        self._target = target
        self._handle = None
        native_config = config._to_native() if config is not None else None
        self._server = None if target else _local_server(native_config)
        self._handle = _troupe.Session.create(target or self._server.target, native_config)
        self._default_cm = None

    @property
    def graph(self):
        return self._graph

    @property
    def sess_str(self):
        return self._target

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._run_with(self._handle, self._graph, fetches, feed_dict, options,
                              run_metadata=run_metadata)

    def close(self):
        if self._handle is not None:
            self._handle.close()
        if getattr(self, "_server", None) is not None:
            self._server.stop()
            self._server = None

    def as_default(self):
        return _as_default(self)

    def __enter__(self):
        self._default_cm = _as_default(self)
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()
        self._default_cm.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._default_cm.__exit__(exc_type, exc_value, traceback)
        self._graph_cm.__exit__(exc_type, exc_value, traceback)
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class InteractiveSession(Session):
    """tf.InteractiveSession: a Session that makes itself the default session (and its graph
    the default graph) when it is made, so that Tensor.eval() and Operation.run() work without
    a `with` block, as in a shell or notebook. close() undoes that."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        _default_sessions.stack.append(self)
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()
        self._installed = True

    def close(self):
        super().close()
        if getattr(self, "_installed", False):
            self._installed = False
            # Not nested: other sessions may have become default since; remove this one.
            stack = _default_sessions.stack
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self:
                    del stack[i]
                    break
            self._graph_cm.__exit__(None, None, None)


@contextlib.contextmanager
def _as_default(session):
    _default_sessions.stack.append(session)
    try:
        yield session
    finally:
        _default_sessions.stack.pop()


class _LentSession(_Runner):
    """The session a hook is given for one call (after_create_session, before/after_run,
    end): run() works until the call returns."""

    def __init__(self, handle, graph):
        self._handle = handle
        self._graph = graph

    @property
    def graph(self):
        return self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return self._run_with(self._handle, self._graph, fetches, feed_dict, options,
                              run_metadata=run_metadata)
