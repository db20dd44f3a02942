"""tf.summary: summary ops and the FileWriter that writes them to TensorBoard's event files, as
TensorFlow 1.x has them.

A summary op (scalar, histogram, image, audio, text, tensor_summary, merge) is a graph op with
a kernel, placed like any op, that computes a serialized tf.Summary (a string scalar); each is
added to the graph's SUMMARIES collection (or `collections`), which merge_all() merges. Its
tag is the op's name scope ("loss", "loss_1", "tower_0/loss"; with `family`, "family/..."),
as TensorFlow's summary_scope makes it; the op itself is named "<scope>/<Op>" (TensorFlow names
it "<scope>").

FileWriter(logdir) writes "events.out.tfevents.<seconds>.<hostname>" in `logdir` (created if
needed): add_summary (a tf.Summary or its bytes), add_session_log, add_graph (the graph as
TensorFlow's GraphDef, which TensorBoard draws), add_meta_graph, add_run_metadata, add_event;
events are buffered and flushed every `flush_secs`, after `max_queue` events, by flush() and
close(). As TensorFlow's, the metadata of a summary value is kept only the first time its tag
is written.
"""

import atexit
import contextlib
import re
import threading
import time
import weakref

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from .framework import GraphKeys, convert_to_tensor, get_default_graph, name_scope
from .ops import _make
from .summary_pb import (Event, HistogramProto, LogMessage, SessionLog, Summary,
                         SummaryDescription, SummaryMetadata, TaggedRunMetadata)

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    """TensorFlow's clean_tag: characters other than [-/\\w.] become '_', no leading '/'."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError("summary name must be a string, got %r" % (name,))
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    return cleaned


@contextlib.contextmanager
def _summary_scope(name, family=None):
    name = _clean_tag(name)
    family = _clean_tag(family)
    if not name:
        raise ValueError("summary name must be a non-empty string")
    base = name if family is None else "%s/%s" % (family, name)
    with name_scope(base) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = "%s/%s" % (family, tag)
        yield tag


def _collect(op, collections, default=(GraphKeys.SUMMARIES,)):
    graph = op.graph
    for key in (collections if collections is not None else default):
        graph.add_to_collection(key, op)
    return op


def _string(value):
    return np.array(value.encode("utf-8") if isinstance(value, str) else value, dtype=object)


def scalar(name, tensor, collections=None, family=None):
    """A summary of one scalar (tf.summary.scalar): a number, or a tensor of one element."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype not in (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
        raise TypeError("tf.summary.scalar(%r): the value must be a real number, got %s"
                        % (name, tensor.dtype.name))
    if tensor.shape.ndims not in (None, 0) and tensor.shape.num_elements() != 1:
        raise ValueError("tf.summary.scalar(%r): the value must be a scalar, got shape %s"
                         % (name, tensor.shape))
    with _summary_scope(name, family) as tag:
        op = _make("ScalarSummary", [_string(tag), tensor]).outputs[0]
    return _collect(op, collections)


def histogram(name, values, collections=None, family=None):
    """A histogram of every element of `values` (TensorFlow's buckets)."""
    values = convert_to_tensor(values)
    with _summary_scope(name, family) as tag:
        op = _make("HistogramSummary", [_string(tag), values]).outputs[0]
    return _collect(op, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` images of a [batch, height, width, 1|3|4] tensor, as PNGs: uint8
    pixels as they are, floats mapped as TensorFlow maps them (non-negative images scaled to
    [0, 255], others centred on 128)."""
    tensor = convert_to_tensor(tensor)
    if not isinstance(max_outputs, int) or max_outputs < 1:
        raise ValueError("tf.summary.image(%r): max_outputs must be an int >= 1, got %r"
                         % (name, max_outputs))
    with _summary_scope(name, family) as tag:
        op = _make("ImageSummary", [_string(tag), tensor], {"max_images": max_outputs}).outputs[0]
    return _collect(op, collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """Up to `max_outputs` clips of a [batch, frames] or [batch, frames, channels] float tensor
    in [-1, 1], as 16-bit WAVs at `sample_rate` Hz."""
    tensor = convert_to_tensor(tensor, dtype=_dtypes.float32)
    if not isinstance(max_outputs, int) or max_outputs < 1:
        raise ValueError("tf.summary.audio(%r): max_outputs must be an int >= 1, got %r"
                         % (name, max_outputs))
    with _summary_scope(name, family) as tag:
        rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32)
        op = _make("AudioSummaryV2", [_string(tag), tensor, rate],
                   {"max_outputs": max_outputs}).outputs[0]
    return _collect(op, collections)


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A summary holding `tensor` itself, with `summary_metadata` (a SummaryMetadata)."""
    if summary_metadata is None:
        summary_metadata = SummaryMetadata()
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    tensor = convert_to_tensor(tensor)
    with _summary_scope(name, family) as tag:
        op = _make("TensorSummaryV2", [_string(tag), tensor,
                                       _string(summary_metadata.SerializeToString())]).outputs[0]
    return _collect(op, collections)


def text(name, tensor, collections=None):
    """A summary of a string tensor, for TensorBoard's text dashboard."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != _dtypes.string:
        raise ValueError("Expected tensor %s to have dtype string, got %s"
                         % (tensor.name, tensor.dtype.name))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """One summary with the values of every summary of `inputs`; a tag in two of them fails
    when it runs (InvalidArgumentError)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("tf.summary.merge: inputs must be a non-empty list of summaries")
    inputs = [convert_to_tensor(i) for i in inputs]
    for i in inputs:
        if i.dtype != _dtypes.string:
            raise TypeError("tf.summary.merge: %s is %s, not a summary (string)"
                            % (i.name, i.dtype.name))
    op = _make("MergeSummary", [inputs], name=name).outputs[0]
    return _collect(op, collections, default=())


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of the summaries in collection `key` (filtered by `scope`), or None if empty."""
    summaries = get_default_graph().get_collection(key, scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


def get_summary_description(node_def):
    raise NotImplementedError("tf.summary.get_summary_description is not supported by troupe")


# --- writing event files ---

# Writers not yet closed. At interpreter exit each is flushed, so the events a program added
# reach the file even where it never closed its writer (a Supervisor's, a FileWriter left open
# by a training loop that ends with its process); TensorFlow 1.x may lose them.
_open_writers = weakref.WeakSet()


@atexit.register
def _flush_writers_at_exit():
    for writer in list(_open_writers):
        writer._flush_at_exit()


class FileWriter:
    """Writes summaries, graphs and session logs to an event file in `logdir`."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise ValueError("FileWriter(session=...) (summary writers that run as ops) is not "
                             "supported by troupe")
        if not isinstance(logdir, str) or not logdir:
            raise ValueError("FileWriter: logdir must be a non-empty string, got %r" % (logdir,))
        self._logdir = logdir
        self._suffix = filename_suffix or ""
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = flush_secs
        self._lock = threading.Lock()
        self._seen_tags = set()
        self._run_metadata_tags = set()
        self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _open(self):
        self._native = _troupe.EventWriter.create(self._logdir, self._suffix)
        self._pending = 0
        self._closed = False
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_periodically, daemon=True,
                                         name="FileWriter flusher")
        self._flusher.start()
        _open_writers.add(self)

    def _flush_at_exit(self):
        # Bounded: a thread the exit interrupts might hold the lock mid-write.
        if not self._lock.acquire(timeout=5):
            return
        try:
            if not self._closed:
                self._native.flush()
        except Exception:  # noqa: BLE001  (nobody is left to report it to)
            pass
        finally:
            self._lock.release()

    def _flush_periodically(self):
        while not self._stop.wait(self._flush_secs):
            try:
                self.flush()
            except Exception:  # noqa: BLE001  (the next explicit call reports it)
                pass

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        if not isinstance(event, Event):
            raise TypeError("add_event: expected a tf.Event, got %r" % (event,))
        with self._lock:
            if self._closed:
                return  # as TensorFlow: a closed writer drops events until reopen()
            self._native.add_event(event.SerializeToString())
            self._pending += 1
            if self._pending >= self._max_queue:
                self._native.flush()
                self._pending = 0

    def _event(self, global_step):
        event = Event(wall_time=time.time())
        if global_step is not None:
            event.step = int(global_step)
        return event

    def add_summary(self, summary, global_step=None):
        """`summary`: a tf.Summary, or its bytes (what a summary op computes)."""
        if isinstance(summary, (bytes, bytearray, np.bytes_)):
            summary = Summary.FromString(bytes(summary))
        elif isinstance(summary, str):
            summary = Summary.FromString(summary.encode("latin-1"))
        elif not isinstance(summary, Summary):
            raise TypeError("add_summary: expected a tf.Summary or its serialized bytes, got %r"
                            % (summary,))
        kept = Summary()
        for value in summary.value:
            copy = kept.value.add()
            copy.MergeFrom(value)
            if value.HasField("metadata"):
                if value.tag in self._seen_tags:
                    copy.ClearField("metadata")
                else:
                    self._seen_tags.add(value.tag)
        event = self._event(global_step)
        event.summary.MergeFrom(kept)
        self.add_event(event)

    def add_session_log(self, session_log, global_step=None):
        if not isinstance(session_log, SessionLog):
            raise TypeError("add_session_log: expected a tf.SessionLog, got %r" % (session_log,))
        event = self._event(global_step)
        event.session_log.MergeFrom(session_log)
        self.add_event(event)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes `graph` (a tf.Graph) as TensorFlow's GraphDef, for TensorBoard's graph tab."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if graph is not None:
            if not hasattr(graph, "_root"):
                raise TypeError("add_graph: expected a tf.Graph, got %r" % (graph,))
            data = _troupe.tensorflow_graph_def(graph._root)
        elif isinstance(graph_def, (bytes, bytearray)):
            data = bytes(graph_def)
        elif hasattr(graph_def, "SerializeToString"):
            data = graph_def.SerializeToString()
        else:
            raise TypeError("add_graph: graph_def must be GraphDef bytes, got %r" % (graph_def,))
        event = self._event(global_step)
        event.graph_def = data
        self.add_event(event)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        data = meta_graph_def if isinstance(meta_graph_def, (bytes, bytearray)) else \
            getattr(meta_graph_def, "SerializeToString", lambda: None)()
        if data is None:
            raise TypeError("add_meta_graph: expected MetaGraphDef bytes, got %r"
                            % (meta_graph_def,))
        event = self._event(global_step)
        event.meta_graph_def = bytes(data)
        self.add_event(event)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a tf.RunMetadata (a traced step's statistics) under `tag`, which TensorBoard's
        graph tab offers as a session run. A tag may be used once per writer."""
        from .step_stats_pb import RunMetadata
        if not isinstance(run_metadata, RunMetadata):
            raise TypeError("add_run_metadata: expected a tf.RunMetadata, got %r"
                            % (run_metadata,))
        if not isinstance(tag, str):
            raise TypeError("add_run_metadata: tag must be a string, got %r" % (tag,))
        with self._lock:
            if tag in self._run_metadata_tags:
                raise ValueError("The provided tag was already used for this event type")
            self._run_metadata_tags.add(tag)
        event = self._event(global_step)
        event.tagged_run_metadata.MergeFrom(
            TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString()))
        self.add_event(event)

    def flush(self):
        with self._lock:
            if not self._closed:
                self._native.flush()
                self._pending = 0

    def close(self):
        with self._lock:
            if self._closed:
                return
            self._native.flush()
            self._closed = True
            self._native = None
        _open_writers.discard(self)
        self._stop.set()
        if threading.current_thread() is not self._flusher:
            self._flusher.join()

    def reopen(self):
        """After close(): writes a new event file in the same directory."""
        with self._lock:
            if not self._closed:
                return
        self._open()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class FileWriterCache:
    """One FileWriter per log directory, shared (tf.summary.FileWriterCache)."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()


def summary_iterator(path):
    """The tf.Events of the event file at `path`, in order (tf.train.summary_iterator)."""
    from .python_io import tf_record_iterator
    for record in tf_record_iterator(path):
        yield Event.FromString(record)


__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge",
           "merge_all", "FileWriter", "FileWriterCache", "Summary", "SummaryDescription",
           "SummaryMetadata", "Event", "SessionLog", "HistogramProto", "LogMessage",
           "TaggedRunMetadata", "summary_iterator"]
